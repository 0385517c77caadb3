#include "ringlab/server/response.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ringlab/http/parser.hpp"

using namespace ringlab;
using namespace ringlab::server;

namespace {

// Collects what the project's own response parser makes of a message: an independent check that the
// framing we write is what a client reads.
struct Collect final : http::ResponseHandler {
  int status = 0;
  bool chunked = false;
  std::optional<uint64_t> length;
  std::string body;
  bool complete = false;
  http::Status on_head(const http::ResponseHead& head) override {
    status = head.status;
    chunked = head.chunked;
    length = head.content_length;
    return {};
  }
  http::Status on_body(std::string_view bytes) override {
    body.append(bytes);
    return {};
  }
  http::Status on_complete() override {
    complete = true;
    return {};
  }
};

// Splits "size\r\ndata\r\n...0\r\n\r\n" by hand: the sizes of the chunks as written.
std::vector<std::size_t> chunk_sizes(std::string_view framed) {
  std::vector<std::size_t> sizes;
  while (true) {
    auto line_end = framed.find("\r\n");
    REQUIRE(line_end != std::string_view::npos);
    std::size_t size = std::stoul(std::string(framed.substr(0, line_end)), nullptr, 16);
    framed.remove_prefix(line_end + 2);
    if (size == 0) {
      CHECK(framed == "\r\n");
      return sizes;
    }
    sizes.push_back(size);
    REQUIRE(framed.size() >= size + 2);
    CHECK(framed.substr(size, 2) == "\r\n");
    framed.remove_prefix(size + 2);
  }
}

}  // namespace

TEST_CASE("append_head writes the status line and exactly the headers asked for") {
  struct Row {
    const char* what;
    ResponseHead head;
    std::string_view expected;
  };
  const Row rows[] = {
      {"plain",
       {.status = 200, .content_type = "application/json", .content_length = 42},
       "HTTP/1.1 200 OK\r\nServer: ringlab\r\nContent-Type: application/json\r\nContent-Length: 42\r\n\r\n"},
      {"chunked",
       {.status = 200, .content_type = "text/plain", .content_length = 42, .chunked = true},
       "HTTP/1.1 200 OK\r\nServer: ringlab\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"},
      {"no content type, close",
       {.status = 200, .content_length = 0, .close = true},
       "HTTP/1.1 200 OK\r\nServer: ringlab\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
      {"HTTP/1.0 keep-alive",
       {.status = 404, .content_type = "application/json", .content_length = 7, .keep_alive = true},
       "HTTP/1.1 404 Not Found\r\nServer: ringlab\r\nContent-Type: application/json\r\nContent-Length: 7\r\n"
       "Connection: keep-alive\r\n\r\n"},
      {"close wins over keep-alive",
       {.status = 400, .content_length = 1, .close = true, .keep_alive = true},
       "HTTP/1.1 400 Bad Request\r\nServer: ringlab\r\nContent-Length: 1\r\nConnection: close\r\n\r\n"},
      {"405 with Allow",
       {.status = 405, .content_length = 2, .allow = "GET, HEAD"},
       "HTTP/1.1 405 Method Not Allowed\r\nServer: ringlab\r\nContent-Length: 2\r\nAllow: GET, HEAD\r\n\r\n"},
      {"large length",
       {.status = 200, .content_length = 18446744073709551615ull},
       "HTTP/1.1 200 OK\r\nServer: ringlab\r\nContent-Length: 18446744073709551615\r\n\r\n"},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    std::string out;
    append_head(out, row.head);
    CHECK(out == row.expected);
  }
}

TEST_CASE("reason_phrase knows every status the server sends") {
  for (int status : {100, 200, 400, 404, 405, 408, 413, 431, 500, 501, 502, 503, 504, 505}) {
    INFO("status ", status);
    CHECK(reason_phrase(status) != "Unknown");
  }
  CHECK(reason_phrase(299) == "Unknown");
}

TEST_CASE("chunked bodies have chunks of the asked size, a short last one, and parse back") {
  const std::size_t body_sizes[] = {0, 1, 5, 4095, 4096, 4097, 10000};
  const uint32_t chunk_limits[] = {1, 3, 1000, 4096, 16u << 20};
  for (std::size_t body_size : body_sizes) {
    std::string body(body_size, '\0');
    for (std::size_t i = 0; i < body_size; ++i) body[i] = static_cast<char>('a' + i % 26);
    for (uint32_t chunk : chunk_limits) {
      INFO("body ", body_size, " bytes, chunk ", chunk);
      OutputBatch batch;
      append_chunked_body(batch, body, chunk);
      const std::string framed = batch.flatten();
      auto sizes = chunk_sizes(framed);
      std::size_t total = 0;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (i + 1 < sizes.size()) {
          CHECK(sizes[i] == chunk);
        } else {
          CHECK(sizes[i] <= chunk);
        }
        total += sizes[i];
      }
      CHECK(total == body_size);

      http::ResponseParser parser;
      Collect got;
      const std::string message = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + framed;
      auto used = parser.feed(message, got);
      REQUIRE_MESSAGE(used.has_value(), (used ? std::string() : used.error().message()));
      CHECK(*used == message.size());
      CHECK(got.complete);
      CHECK(got.body == body);
    }
  }
}

TEST_CASE("chunk size lines are lowercase hex") {
  OutputBatch batch;
  append_chunked_body(batch, std::string(255, 'x'), 255);
  CHECK(batch.flatten().substr(0, 4) == "ff\r\n");
}

TEST_CASE("append_response frames plain, chunked and HEAD answers") {
  const std::string body = "[{\"a\":1}]";
  struct Row {
    const char* what;
    bool chunked;
    bool head_only;
  };
  const Row rows[] = {{"plain", false, false}, {"chunked", true, false}, {"HEAD plain", false, true},
                      {"HEAD chunked", true, true}};
  for (const Row& row : rows) {
    INFO(row.what);
    OutputBatch batch;
    append_response(batch, {.status = 200, .content_type = "application/json", .chunked = row.chunked},
                    body, row.head_only, 4);
    const std::string message = batch.flatten();
    if (row.head_only) {
      CHECK(message.ends_with("\r\n\r\n"));
      CHECK(message.find(body) == std::string::npos);
      if (!row.chunked) CHECK(message.find("Content-Length: 9\r\n") != std::string::npos);
      continue;
    }
    http::ResponseParser parser;
    Collect got;
    auto used = parser.feed(message, got);
    REQUIRE_MESSAGE(used.has_value(), (used ? std::string() : used.error().message()));
    CHECK(got.status == 200);
    CHECK(got.complete);
    CHECK(got.chunked == row.chunked);
    CHECK(got.body == body);
    if (!row.chunked) CHECK(got.length == body.size());
  }
}

TEST_CASE("append_chunks goes a window at a time and gives the same bytes as the whole body") {
  std::string body(10'000, 'b');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  for (uint32_t chunk : {1u, 7u, 4096u, 20'000u}) {
    INFO("chunk ", chunk);
    OutputBatch whole;
    append_chunked_body(whole, body, chunk);
    std::string windows;
    std::string_view rest = body;
    constexpr std::size_t kBudget = 2048;
    int calls = 0;
    bool done = false;
    while (!done) {
      OutputBatch window;
      done = append_chunks(window, rest, chunk, kBudget);
      // At most one chunk past the budget (its framing and, for small chunks, its copied bytes).
      CHECK(window.queued_bytes() <= kBudget + chunk + 64);
      windows += window.flatten();
      ++calls;
      REQUIRE(calls < 100'000);
    }
    CHECK(rest.empty());
    CHECK(windows == whole.flatten());
    if (chunk == 1) CHECK(calls > 10);  // 60,000 bytes on the wire for 10,000 body bytes
  }
}

TEST_CASE("a head of unknown length has neither Content-Length nor Transfer-Encoding") {
  ResponseHead head;
  head.length_unknown = true;
  std::string out;
  append_head(out, head);
  CHECK(out == "HTTP/1.1 200 OK\r\nServer: ringlab\r\n\r\n");
}

TEST_CASE("JSON error bodies escape quotes, backslashes and control characters") {
  struct Row {
    std::string_view message;
    std::string_view expected;
  };
  const Row rows[] = {
      {"no such route", R"({"error":"no such route"})"},
      {"", R"({"error":""})"},
      {"say \"hi\"", R"({"error":"say \"hi\""})"},
      {"back\\slash", R"({"error":"back\\slash"})"},
      {std::string_view("nl\n\x01", 4), R"({"error":"nl\u000a\u0001"})"},
      {"caf\xc3\xa9", "{\"error\":\"caf\xc3\xa9\"}"},
  };
  for (const Row& row : rows) {
    INFO("message: ", row.message);
    std::string out;
    append_json_error(out, row.message);
    CHECK(out == row.expected);
  }
}
