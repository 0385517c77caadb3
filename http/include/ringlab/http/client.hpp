#pragma once
// Client: HTTP/1.1 over net::Stream (io_uring), one request at a time.
//
// request() picks a connection for the URL's origin (an idle pooled one, or a new one; with
// ConnectionPolicy::fresh_per_request always a new one, closed after the response), sends the request,
// and receives the response into the caller's BodySink. Keep-alive is honoured both ways: a response
// with "Connection: close" or a close-delimited body retires its connection.
//
// Errors (Errc): refused, reset, timeout, truncated, malformed, header_too_large, body_too_large,
// sink, unsupported (https, HTTP/2). After any error the connection involved is closed, never reused;
// the client itself stays usable. By default nothing is retried: a request that failed on a reused
// connection that the peer had closed is reported (Errc::reset or truncated), the caller decides.
// With ClientOptions::retry_stale_connection such a request (and only such: no response byte had
// arrived, error.hpp failed_on_stale_connection) is sent once more on a new connection, counted in
// ClientStats::stale_retries; its Timeline then describes the second attempt.
// Requests are never pipelined, so bytes after a response are the server's fault: when they arrive
// in the same receive as the end of the response they are Errc::malformed and the connection is
// closed; bytes that arrive later on an idle connection are read as the start of the next response.
//
// With ClientOptions::receive_with_send the first receive of a response goes to the kernel with the
// request's send, in the same io_uring_enter (below: the options).
//
// Receiving: the exchange is http::ResponseReceiver (response_receiver.hpp), the one the socket peers
// drive too; request() only does its I/O. The first receive of a response goes into the receiver's
// own buffer (an incomplete head is appended to, so the parser's views stay valid). After the head,
// each receive first asks the sink for a window: bytes then land in the sink's memory (read_fixed
// when it is a registered buffer) and are fed to the parser where they landed, so on_body sees the
// sink's own cursor.
//
// Hosts are numeric addresses or localhost (net::Endpoint::parse), resolved once per origin; a name
// is Errc::unsupported, since a DNS lookup would block inside what is measured.
//
// Timeline: when a TickSource is set, request() stamps the phases of the request into the Timeline
// the caller passes (the tick unit is the source's; bench uses its cycle counter).
//
// Ownership: the Client refers to a net::Ring that must outlive it and owns its connections, its
// receive buffer (options.receive_buffer_bytes) and, in provided-buffer mode, its BufferRing.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ringlab/http/body_sink.hpp"
#include "ringlab/http/error.hpp"
#include "ringlab/http/parser.hpp"
#include "ringlab/http/timeline.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/stream.hpp"

namespace ringlab::http {

using namespace std::chrono_literals;

enum class ConnectionPolicy { keep_alive, fresh_per_request };

enum class ReceiveMode {
  own_buffer,        // recv into the client's buffer, or into the sink's window when it offers one
  // Multishot recv; the kernel picks buffers from a provided-buffer ring (provided_buffer_count
  // buffers of receive_buffer_bytes; the sink's receive window is not used, the sink copies). Each
  // buffer goes back to the kernel as soon as its bytes are parsed. When the kernel finds the ring
  // empty it ends the multishot with ENOBUFS, leaving the bytes in the socket: the client, holding
  // no buffer by then, re-arms and counts it in ClientStats::provided_ring_dry. A second ENOBUFS
  // without any byte received in between is an error (Errc::io).
  provided_buffers,
  // As provided_buffers, each receive a bundle (IORING_RECVSEND_BUNDLE, Linux 6.10): one completion
  // carries as many of the ring's buffers as the bytes queued in the socket fill, so a large body
  // costs fewer completions. The copy out of the buffers stays. Errc::unsupported on an older kernel.
  provided_bundles,
  // Single-shot receives from one incremental ring (IOU_PBUF_RING_INC, Linux 6.12) shared by every
  // connection of an InflightClient: the kernel consumes a buffer piece by piece, each receive landing
  // where the ring's last one, for whichever connection, left off, so the pieces of one body lie apart.
  // The sink gets each piece where it landed: on_body's bytes are then in the ring's memory, writable
  // and followed by net::BufferRing::kReadableAfter readable bytes, the sink's until on_body returns,
  // so that a sink may parse them in place. InflightClient only: http::Client refuses it
  // (Errc::unsupported), and so do both on a kernel without incremental rings.
  provided_incremental,
};

// The receive modes whose bytes land in a provided-buffer ring the kernel picks from.
[[nodiscard]] constexpr bool receives_from_ring(ReceiveMode mode) noexcept {
  return mode == ReceiveMode::provided_buffers || mode == ReceiveMode::provided_bundles ||
         mode == ReceiveMode::provided_incremental;
}

enum class SendMode {
  copy,       // head and body copied into one buffer, one send
  writev,     // head and body as two iovecs, one sendmsg
  zero_copy,  // head by send, body by IORING_OP_SEND_ZC (waits for the notification)
};


struct ClientOptions {
  net::Duration connect_timeout = 2s;
  net::Duration io_timeout = 10s;  // per send/receive operation
  ParserLimits limits{.max_header_bytes = 16 * 1024, .max_body_bytes = 1ull << 30};
  ConnectionPolicy connection = ConnectionPolicy::keep_alive;
  ReceiveMode receive = ReceiveMode::own_buffer;
  std::size_t receive_buffer_bytes = 64 * 1024;
  unsigned provided_buffer_count = 64;  // provided_buffers and _bundles: ring size (power of two)
  std::size_t max_idle_per_origin = 8;
  TickSource ticks = nullptr;
  // Off for benchmarks: a measured request must show a stale connection, not hide a second attempt.
  bool retry_stale_connection = false;
  // The request's send and the response's first receive are queued together and go to the kernel in
  // one io_uring_enter that also waits for the receive (net::Stream::send_all_and_receive): one system
  // call per kept-alive request whose response fits one receive, instead of one to send and one to
  // wait. A short send or a response that needs more receives costs further enters, as without it.
  // Applies to ReceiveMode::own_buffer with SendMode::copy or writev (zero_copy sends apart); then
  // io_timeout bounds the send and the first receive together, and Timeline::request_sent is stamped
  // when that enter returns, just before first_byte.
  bool receive_with_send = false;
};

struct Request {
  std::string_view method = "GET";
  std::string_view body{};
  std::string_view content_type{};
  SendMode send = SendMode::writev;
};

struct ResponseInfo {
  int status = 0;
  uint64_t body_bytes = 0;
  bool reused_connection = false;
  net::ZeroCopyReport zero_copy{};  // filled for SendMode::zero_copy
};

struct ClientStats {
  uint64_t connections_opened = 0;
  uint64_t connections_reused = 0;
  uint64_t connections_closed = 0;
  uint64_t provided_ring_dry = 0;  // provided_buffers mode: multishot ended by ENOBUFS and re-armed
  uint64_t multi_buffer_receives = 0;  // provided_bundles: completions that carried more than one buffer
  uint64_t stale_retries = 0;      // requests sent again after failing on a stale reused connection
};

class Client {
 public:
  explicit Client(net::Ring& ring, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Result<ResponseInfo> request(const Url& url, const Request& request, BodySink& sink,
                               Timeline* timeline = nullptr);
  Result<ResponseInfo> get(const Url& url, BodySink& sink, Timeline* timeline = nullptr) {
    return request(url, Request{}, sink, timeline);
  }

  [[nodiscard]] const ClientStats& stats() const noexcept { return stats_; }
  [[nodiscard]] const ClientOptions& options() const noexcept { return options_; }
  void close_idle() noexcept;

 private:
  struct Pool;
  struct Exchange;  // one attempt's connect, send, receive and conclude (client.cpp)
  // One attempt; `reuse`: an idle connection may be taken. Sets stale_failure_ when it failed as
  // failed_on_stale_connection() describes.
  Result<ResponseInfo> attempt(const Url& url, const Request& request, BodySink& sink, Timeline* timeline, bool reuse);
  // The options and ring features `request` needs, checked before anything is opened; the provided
  // buffer ring made on the first request that receives into it.
  Status prepare(const Request& request);

  net::Ring* ring_;
  bool stale_failure_ = false;
  ClientOptions options_;
  ClientStats stats_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace ringlab::http
