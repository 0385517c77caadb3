// Connection (worker.hpp): what it answers. The parser's events for each request (on_head,
// on_body, on_complete), the answer each route gets, how a cached body goes out under the body
// strategy, chunked answers a window at a time, bodies serialized a chunk at a time as they are sent,
// and the spare strings that hold bodies.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "worker.hpp"

namespace ringlab::server {
namespace {

constexpr std::string_view kPlaintext = "Hello, World!";
constexpr std::string_view kHealth = "{\"status\":\"ok\"}";
// An echo body is reserved up to this much from its Content-Length, and grows as it arrives beyond:
// a head alone must not make the server allocate what it announces.
constexpr std::size_t kBodyReserve = 64u << 10;

CountLimits count_limits(const ServerOptions& options) noexcept {
  return CountLimits{.max_count = options.max_count, .max_answer_bytes = options.max_answer_bytes};
}

}  // namespace

std::size_t Connection::window_bytes() const noexcept {
  return std::max<std::size_t>(worker_.options().max_queued_output_bytes / 2, 16u << 10);
}

void Connection::continue_stream() {
  pending().hold(stream_.owner);
  if (append_chunks(pending(), stream_.rest, stream_.chunk_bytes, window_bytes())) stream_ = ChunkStream{};
}

void Connection::start_serializing(const BodyKey& key, const ResponseHead& head) {
  ResponseHead chunked = head;
  chunked.content_type = body_content_type(key.format);
  pending().append_written([&](std::string& out) { append_head(out, chunked); });
  start_body(serializing_.writer, key);
  // Room for a full buffer and the record that crosses the flush threshold: no regrowth mid-answer.
  serializing_.chunk.reserve(worker_.options().serializer_buffer_bytes + kMaxRepoRecordBytes);
  serializing_.active = true;
  serialize_next_chunk();
}

void Connection::serialize_next_chunk() {
  // System.Text.Json flushes its buffer once it is 90 % full (FlushThreshold in JsonSerializer's
  // stream writer), checking after each element it wrote: here, after each record.
  const std::size_t flush_at = std::max<std::size_t>(worker_.options().serializer_buffer_bytes * 9 / 10, 1);
  std::string& chunk = serializing_.chunk;
  chunk.clear();
  const bool last = serializing_.writer.write(chunk, flush_at);
  if (!chunk.empty()) ++worker_.counters().serialized_chunks;  // empty: an NDJSON body of no records
  append_chunk(pending(), chunk);
  if (last) pending().append_copy(kLastChunk);
  serializing_.batch = pending_index_;
}

void Connection::continue_serializing(unsigned sent_batch) {
  if (serializing_.batch != sent_batch) return;  // the last chunk is still waiting in the pending batch
  if (serializing_.writer.done()) {
    serializing_.active = false;  // its last chunk went out: the answer is complete
    return;
  }
  try {
    serialize_next_chunk();
  } catch (const std::bad_alloc&) {
    // The head and part of the body went out: the answer can only be cut short, which the client
    // sees as a chunked body that never ends before the close.
    ++worker_.counters().connection_errors;
    start_close();
  }
}

http::Status Connection::out_of_memory() {
  out_of_memory_ = true;
  return std::unexpected(http::Error{http::Errc::sink, "out of memory", {}});
}

http::Status Connection::on_head(const http::RequestHead& head) try {
  request_ = Request{};
  head_seen_ = true;
  request_.keep_alive = head.keep_alive;
  request_.http10 = head.version_major == 1 && head.version_minor == 0;
  request_.head_only = head.method == "HEAD";
  if (head.version_major != 1) {
    request_.error_status = 505;
    request_.error_message = "only HTTP/1.0 and HTTP/1.1 are served";
    request_.keep_alive = false;
    return {};
  }
  if (head.version_minor >= 1) {
    // RFC 9112 3.2: exactly one Host in an HTTP/1.1 request, else 400.
    int hosts = 0;
    for (const http::Header& header : head.headers) hosts += http::iequals(header.name, "Host") ? 1 : 0;
    if (hosts != 1) {
      request_.error_status = 400;
      request_.error_message = hosts == 0 ? "an HTTP/1.1 request needs a Host header" : "more than one Host header";
      request_.keep_alive = false;
      return {};
    }
  }
  auto routed = route_request(head.method, head.target);
  if (!routed) {
    request_.error_status = routed.error().status;
    request_.error_message = routed.error().message;
    request_.allow = routed.error().allow;
  } else if (const uint64_t limit = count_limit(routed->route, count_limits(worker_.options())); routed->count > limit) {
    // The limit goes into the message; scratch_ lives until the answer is formatted.
    scratch_.assign("count must be an integer from 0 to ");
    scratch_.append(std::to_string(limit));
    scratch_.append(" on this route (answers are limited to --max-count records and --max-answer bytes)");
    request_.error_status = 400;
    request_.error_message = scratch_;
  } else {
    request_.routed = *routed;
    if (routed->route == Route::echo) {
      content_type_.assign(head.headers.find("Content-Type").value_or(std::string_view{}));
      body_.clear();
      // The parser has already refused a Content-Length above max_body_bytes; beyond kBodyReserve
      // the body grows as it arrives.
      if (head.content_length) {
        body_.reserve(static_cast<std::size_t>(std::min<uint64_t>(*head.content_length, kBodyReserve)));
      }
    }
  }
  // A client that waits for "100 Continue" before sending its body (curl does, above 1 MiB) gets it
  // in order with the answers before it; a request it would be refused for is refused after its
  // body, like any other.
  if (!request_.http10 && (head.chunked || head.content_length.value_or(0) > 0)) {
    if (auto expect = head.headers.find("Expect"); expect && http::iequals(*expect, "100-continue")) {
      pending().append_copy(kContinue);
    }
  }
  return {};
} catch (const std::bad_alloc&) {
  return out_of_memory();
}

http::Status Connection::on_body(std::string_view bytes) try {
  if (request_.routed && request_.routed->route == Route::echo) body_.append(bytes);
  return {};
} catch (const std::bad_alloc&) {
  return out_of_memory();
}

http::Status Connection::on_complete() try {
  ++worker_.counters().requests;
  head_seen_ = false;
  respond();
  return {};
} catch (const std::bad_alloc&) {
  return out_of_memory();
}

void Connection::keep_spare(std::string&& spare) {
  if (spare.capacity() <= OutputBatch::kSpareBytes && spare_bodies_.size() < OutputBatch::kSpareCount) {
    spare.clear();
    spare_bodies_.push_back(std::move(spare));
  } else {
    worker_.note_released(spare.capacity());
    std::string().swap(spare);
  }
}

std::string Connection::take_spare() {
  if (spare_bodies_.empty()) {
    std::string fresh;
    fresh.reserve(4096);
    return fresh;
  }
  std::string spare = std::move(spare_bodies_.back());
  spare_bodies_.pop_back();
  return spare;
}

void Connection::respond() {
  const bool close = !request_.keep_alive || worker_.stopping();
  if (request_.error_status != 0) {
    ++worker_.counters().bad_requests;
    respond_error(request_.error_status, request_.error_message, request_.allow, request_.head_only, close);
    return;
  }
  const RoutedRequest& routed = *request_.routed;
  ResponseHead head = base_head(close);
  head.chunked = routed.chunked && !request_.http10;
  std::string_view body;
  // Keeps the body alive while a chunked answer goes out window by window (continue_stream).
  std::shared_ptr<const void> owner;
  switch (routed.route) {
    case Route::weather:
    case Route::repos:
    case Route::github:
    case Route::profiles: {
      const BodyKey key{routed.route, routed.format, routed.count,
                        routed.pages && routed.cached && !head.chunked};
      if (routed.head_only) {
        // The head alone does not pay for generating the body (see server.hpp).
        auto cached = worker_.cache().find(key);
        head.content_type = body_content_type(key.format);
        if (cached) {
          body = cached->bytes;
        } else {
          head.length_unknown = !head.chunked;
        }
        break;
      }
      if (!routed.cached && head.chunked && worker_.options().serializer_buffer_bytes > 0) {
        start_serializing(key, head);
        if (close) close_after_send_ = true;
        return;
      }
      auto served = routed.cached ? worker_.cache().get(key) : worker_.cache().generate_uncached(key);
      head.content_type = served->content_type;
      body = served->page_aligned.empty() ? std::string_view(served->bytes) : served->page_aligned;
      // Small bodies are copied into the batch; larger ones are referenced and must outlive the
      // send even if the cache evicts them meanwhile. The body strategy says how they are sent.
      if (head.chunked) {
        owner = served;
        break;
      }
      // pages=1: the page-aligned copy in a zero-copy send of its own, whatever the body strategy.
      const BodySource source = served->page_aligned.empty()
                                    ? body_source(*served)
                                    : BodySource{.kind = BodySource::Kind::zero_copy, .origin = body.data()};
      if (source.kind != BodySource::Kind::copy && body.size() > pending().inline_limit()) pending().hold(served);
      append_answer(head, body, std::move(owner), false, close, &source);
      return;
    }
    case Route::plaintext:
      head.content_type = "text/plain";
      body = kPlaintext;
      break;
    case Route::health:
      head.content_type = kJsonContentType;
      body = kHealth;
      break;
    case Route::env:
      head.content_type = kJsonContentType;
      body = worker_.options().environment_json;  // owned by the Server, lives as long as the worker
      break;
    case Route::stats:
      // This worker's counters as of now, the others' as of their latest publication.
      worker_.publish_stats();
      head.content_type = kJsonContentType;
      body_ = stats_json(worker_.published_total());
      answer_body_string(head, close);
      return;
    case Route::echo:
      head.content_type = content_type_;  // copied into the head before content_type_ changes
      answer_body_string(head, close);
      return;
    case Route::proxy: {
      // Fetched on the worker's ring; answered by on_upstream_done. Until then nothing more is read.
      // client=manual: this handler names what to fetch and how; client=typed: the worker's typed
      // client does (upstream.hpp). Either way the answer comes to on_upstream_done.
      auto started = routed.upstream_client == UpstreamClient::typed
                         ? worker_.typed_upstream(routed.upstream).fetch_weather(*this, routed.count)
                         : worker_.upstream().start(*this, routed.count, routed.upstream);
      if (!started) {
        ++worker_.counters().upstream_errors;
        scratch_.assign("upstream: ");
        scratch_.append(started.error().message);
        respond_error(started.error().status, scratch_, {}, routed.head_only, close);
        return;
      }
      fetch_ = *started;
      return;
    }
  }
  append_answer(head, body, std::move(owner), false, close);
}

BodySource Connection::body_source(const Body& body) {
  BodySource source{.origin = body.bytes.data()};
  // Only bodies that are referenced take a strategy's own way; small ones are copied (output.hpp).
  const bool referenced = body.bytes.size() > pending().inline_limit();
  switch (worker_.options().body_strategy) {
    case BodyStrategy::writev:
      break;
    case BodyStrategy::copy:
      source.kind = BodySource::Kind::copy;
      break;
    case BodyStrategy::send_zc:
      source.kind = BodySource::Kind::zero_copy;
      break;
    case BodyStrategy::fixed:
      if (body.placement.fixed != nullptr) {
        source.kind = BodySource::Kind::fixed;
        source.fixed = body.placement.fixed;
        source.buf_index = body.placement.buf_index;
      } else {
        source.kind = BodySource::Kind::zero_copy;
        if (referenced) ++worker_.counters().fixed_fallbacks;
      }
      break;
    case BodyStrategy::sendfile:
      if (body.placement.file_fd >= 0 && referenced && pipe_[0] < 0) {
        // The connection's pipe, made at its first file body and kept while it lives. A larger pipe
        // takes more of a body per pair of splices; the default size is fine where that is refused.
        if (::pipe2(pipe_, O_CLOEXEC) == 0) {
          ::fcntl(pipe_[1], F_SETPIPE_SZ, 1 << 20);
          const int capacity = ::fcntl(pipe_[1], F_GETPIPE_SZ);
          pipe_capacity_ = capacity > 0 ? static_cast<std::size_t>(capacity) : 4096;
        } else {
          pipe_[0] = pipe_[1] = -1;
        }
      }
      if (body.placement.file_fd >= 0 && pipe_[0] >= 0) {
        source.kind = BodySource::Kind::file;
        source.file_fd = body.placement.file_fd;
      } else if (referenced) {
        ++worker_.counters().file_fallbacks;
      }
      break;
  }
  return source;
}

void Connection::answer_body_string(ResponseHead head, bool close) {
  const RoutedRequest& routed = *request_.routed;
  std::string_view body;
  std::shared_ptr<const void> owner;
  bool reuse_body = false;
  if (head.chunked) {
    // Shared with every window's batch until the last chunk went out.
    auto shared = std::make_shared<const std::string>(std::exchange(body_, take_spare()));
    body = *shared;
    owner = std::move(shared);
  } else if (body_.size() <= pending().inline_limit() || routed.head_only) {
    body = body_;  // copied into the batch (or not sent at all): the string stays ours
    reuse_body = true;
  } else {
    body = pending().adopt(std::move(body_));
    body_ = take_spare();
  }
  append_answer(head, body, std::move(owner), reuse_body, close);
}

void Connection::append_answer(const ResponseHead& head, std::string_view body, std::shared_ptr<const void> owner,
                               bool reuse_body, bool close, const BodySource* source) {
  const RoutedRequest& routed = *request_.routed;
  if (owner) pending().hold(owner);
  std::string_view rest =
      append_response(pending(), head, body, routed.head_only, routed.chunk_bytes, window_bytes(), source);
  if (!rest.empty()) stream_ = ChunkStream{std::move(owner), rest, routed.chunk_bytes};
  if (reuse_body) body_.clear();
  if (close) close_after_send_ = true;
}

void Connection::respond_error(int status, std::string_view message, std::string_view allow, bool head_only,
                               bool close) {
  std::string body;
  append_json_error(body, message);
  ResponseHead head = base_head(close);
  head.status = status;
  head.content_type = kJsonContentType;
  head.allow = allow;
  head.content_length = body.size();
  // Error bodies are copied whatever their size: the message may live in scratch_.
  pending().append_written([&](std::string& out) { append_head(out, head); });
  if (!head_only) pending().append_copy(body);
  if (close) close_after_send_ = true;
}

}  // namespace ringlab::server
