#pragma once
// What the HTTP client's tests share (client_test.cpp: framing, keep-alive, sinks and send modes;
// client_errors_test.cpp: refusals, failures and the stale-connection retry;
// client_single_enter_test.cpp: receive_with_send): short deadlines, a client on its own ring for one
// URL, and the spies that prove where a body landed. The peers are test_server.hpp's loopback servers.
#include <atomic>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/fixed_buffers.hpp"
#include "test_server.hpp"
#include "../support/feature_gate.hpp"
#include "../support/net.hpp"

namespace ringlab::http::testing {

using namespace std::chrono_literals;
using ringlab::net::testing::has_recv_multishot;
using ringlab::net::testing::make_ring;

// Keeps the URL text alive next to the views Url::parse returns into it.
struct ParsedUrl {
  std::string text;
  Url url;
};

inline ParsedUrl parse(std::string text) {
  ParsedUrl parsed{std::move(text), {}};
  auto url = Url::parse(parsed.text);
  REQUIRE_MESSAGE(url, (url ? "" : url.error().message()));
  parsed.url = *url;
  return parsed;
}

inline std::string describe(const Error& error) { return error.message(); }

// Every test client gets short deadlines: a failing test ends in seconds, never hangs.
inline ClientOptions test_options() {
  ClientOptions options;
  options.connect_timeout = 2s;
  options.io_timeout = 5s;
  return options;
}

// test_options() receiving with `mode`, into `buffer_count` buffers of `buffer_bytes` (the
// ClientOptions defaults unless given).
inline ClientOptions receiving(ReceiveMode mode, std::size_t buffer_bytes = ClientOptions{}.receive_buffer_bytes,
                        unsigned buffer_count = ClientOptions{}.provided_buffer_count) {
  ClientOptions options = test_options();
  options.receive = mode;
  options.receive_buffer_bytes = buffer_bytes;
  options.provided_buffer_count = buffer_count;
  return options;
}

// Cases that loop over the receive modes skip provided_buffers where the kernel has no multishot recv,
// and provided_bundles where it has no bundle receives either (recorded as a skip).
inline bool unavailable(ReceiveMode mode, const net::Ring& ring) {
  if (!receives_from_ring(mode)) return false;
  if (!ring.features().recv_multishot) return true;
  return mode == ReceiveMode::provided_bundles &&
         !ringlab::testing::feature_available("recv_bundle", ring.features().recv_bundle,
                                              "the kernel has no bundle receives (IORING_RECVSEND_BUNDLE)");
}

// The response of an exchange that must succeed; the test fails with the error's message otherwise.
inline ResponseInfo succeeded(const Result<ResponseInfo>& info) {
  REQUIRE_MESSAGE(info, (info ? "" : describe(info.error())));
  return *info;
}

// The error of an exchange that must fail.
inline Error failed(const Result<ResponseInfo>& info) {
  REQUIRE_FALSE(info);
  return info.error();
}

// A client on its own ring, for one URL: each case then says only what the server does and what the
// client reports.
class TestClient {
 public:
  explicit TestClient(const TestServer& server, const ClientOptions& options = test_options(),
                      std::string_view target = "/")
      : TestClient(server.url(target), options) {}
  TestClient(std::string url_text, const ClientOptions& options)
      : client_(*ring, options), url_(parse(std::move(url_text))) {}

  Result<ResponseInfo> request(const Request& request, BodySink& sink, Timeline* timeline = nullptr) {
    return client_.request(url_.url, request, sink, timeline);
  }
  Result<ResponseInfo> get(BodySink& sink, Timeline* timeline = nullptr) { return request(Request{}, sink, timeline); }
  // The body lands in `out`, which each call empties first.
  Result<ResponseInfo> request(const Request& request) {
    out.clear();
    StringSink sink(out);
    return this->request(request, sink);
  }
  Result<ResponseInfo> get() { return request(Request{}); }
  // A GET that must fail, its body (if any) discarded: its error, for the case to check.
  Error failed_get() {
    DiscardSink sink;
    return failed(get(sink));
  }

  [[nodiscard]] const ClientStats& stats() const { return client_.stats(); }
  void close_idle() { client_.close_idle(); }

  std::unique_ptr<net::Ring> ring = make_ring();
  std::string out;

 private:
  Client client_;
  ParsedUrl url_;
};

// A PaddedBuffer carved out of registered buffer 0, `slack` bytes short of it: its memory is the fixed
// buffer, so a PresizedSink over it with fixed index 0 receives with read_fixed.
struct BufferInFixed {
  BufferInFixed(net::FixedBuffers& fixed, std::size_t slack)
      : region(fixed.buffer(0)),
        arena(region.data(), region.size() + base::kPadding, std::pmr::null_memory_resource()),
        buffer(region.size() - slack, &arena) {}
  std::span<char> region;
  std::pmr::monotonic_buffer_resource arena;
  base::PaddedBuffer buffer;
};

inline std::string_view body_of_request(std::string_view request) {
  const std::size_t at = request.find("\r\n\r\n");
  return at == std::string_view::npos ? std::string_view{} : request.substr(at + 4);
}

inline std::string_view head_of_request(std::string_view request) {
  const std::size_t at = request.find("\r\n\r\n");
  return request.substr(0, at == std::string_view::npos ? request.size() : at + 4);
}

// Wraps a PresizedSink and records, for every piece of body, whether it arrived at the sink's write
// cursor: the proof that the body was received in place rather than copied.
class InPlaceSpy final : public BodySink {
 public:
  InPlaceSpy(base::PaddedBuffer& buffer, int fixed_index) : buffer_(buffer), inner_(buffer, fixed_index) {}
  Status begin(const ResponseHead& head) override { return inner_.begin(head); }
  ReceiveWindow receive_window() override { return inner_.receive_window(); }
  Status on_body(std::string_view bytes) override {
    if (bytes.data() == buffer_.data() + buffer_.size()) {
      in_place_bytes += bytes.size();
    } else {
      copied_bytes += bytes.size();
      ++copied_pieces;
    }
    return inner_.on_body(bytes);
  }
  Status end() override { return inner_.end(); }

  std::size_t in_place_bytes = 0;
  std::size_t copied_bytes = 0;
  int copied_pieces = 0;

 private:
  base::PaddedBuffer& buffer_;
  PresizedSink inner_;
};

inline uint64_t fake_ticks() noexcept {
  static std::atomic<uint64_t> now{0};
  return ++now;
}


}  // namespace ringlab::http::testing
