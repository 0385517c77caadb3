#include "ringlab/server/response.hpp"

#include <array>
#include <charconv>
#include <cstdint>

namespace ringlab::server {
namespace {

void append_decimal(std::string& out, uint64_t value) {
  std::array<char, 24> digits{};
  auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  (void)ec;  // 24 digits always fit a uint64_t
  out.append(digits.data(), static_cast<std::size_t>(end - digits.data()));
}

// "1a2b\r\n" into a small stack buffer: chunk framing is written once per chunk.
std::string_view chunk_size_line(std::array<char, 24>& buffer, uint64_t size) {
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size() - 2, size, 16);
  (void)ec;
  end[0] = '\r';
  end[1] = '\n';
  return {buffer.data(), static_cast<std::size_t>(end + 2 - buffer.data())};
}

}  // namespace

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void append_head(std::string& out, const ResponseHead& head) {
  out.append("HTTP/1.1 ");
  append_decimal(out, static_cast<uint64_t>(head.status));
  out.push_back(' ');
  out.append(reason_phrase(head.status));
  out.append("\r\nServer: ringlab\r\n");
  if (!head.content_type.empty()) {
    out.append("Content-Type: ");
    out.append(head.content_type);
    out.append("\r\n");
  }
  if (head.chunked) {
    out.append("Transfer-Encoding: chunked\r\n");
  } else if (!head.length_unknown) {
    out.append("Content-Length: ");
    append_decimal(out, head.content_length);
    out.append("\r\n");
  }
  if (head.close) {
    out.append("Connection: close\r\n");
  } else if (head.keep_alive) {
    out.append("Connection: keep-alive\r\n");
  }
  if (!head.allow.empty()) {
    out.append("Allow: ");
    out.append(head.allow);
    out.append("\r\n");
  }
  out.append("\r\n");
}

void append_chunk(OutputBatch& out, std::string_view piece) {
  if (piece.empty()) return;
  std::array<char, 24> line{};
  out.append_copy(chunk_size_line(line, piece.size()));
  out.append_body(piece);
  out.append_copy("\r\n");
}

bool append_chunks(OutputBatch& out, std::string_view& rest, uint32_t chunk_bytes, std::size_t budget) {
  if (chunk_bytes == 0) chunk_bytes = 1;
  bool first = true;
  while (!rest.empty()) {
    if (!first && out.queued_bytes() >= budget) return false;
    first = false;
    std::string_view piece = rest.substr(0, chunk_bytes);
    append_chunk(out, piece);
    rest.remove_prefix(piece.size());
  }
  out.append_copy(kLastChunk);
  return true;
}

void append_chunked_body(OutputBatch& out, std::string_view body, uint32_t chunk_bytes) {
  append_chunks(out, body, chunk_bytes, SIZE_MAX);
}

std::string_view append_response(OutputBatch& out, ResponseHead head, std::string_view body, bool head_only,
                                 uint32_t chunk_bytes, std::size_t budget, const BodySource* source) {
  head.content_length = body.size();
  out.append_written([&](std::string& bytes) { append_head(bytes, head); });
  if (head_only) return {};
  if (head.chunked) {
    append_chunks(out, body, chunk_bytes, budget);
    return body;
  }
  if (source != nullptr) {
    out.append_body(body, *source);
  } else {
    out.append_body(body);
  }
  return {};
}

void append_json_error(std::string& out, std::string_view message) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.append("{\"error\":\"");
  for (char c : message) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  out.append("\"}");
}

}  // namespace ringlab::server
