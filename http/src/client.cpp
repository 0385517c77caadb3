#include "ringlab/http/client.hpp"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "ringlab/http/request.hpp"
#include "ringlab/net/buffer_ring.hpp"

namespace ringlab::http {
namespace {

// Room for the request head: request line, Host, Content-Type, Content-Length, Connection. A target
// longer than this is refused by serialize() as header_too_large.
constexpr std::size_t kRequestHeadBytes = 16 * 1024;

// Provided-buffer group ids are per ring; several clients may share one ring, so each takes its own.
std::atomic<uint16_t> g_next_buffer_group{0x4000};

Error with_peer(Error error, const std::string& peer) {
  if (error.peer.empty()) error.peer = peer;
  return error;
}

// Receives the parser's events for one exchange and forwards them to the sink. It lives on the
// stack of request(): nothing here allocates.
class Exchange final : public ResponseHandler {
 public:
  Exchange(BodySink& sink, Timeline* timeline, TickSource ticks) noexcept
      : sink_(sink), timeline_(timeline), ticks_(ticks) {}

  Status on_head(const ResponseHead& head) override {
    // 1xx responses (100 Continue, 103 Early Hints) precede the real one: skip them. 101 Switching
    // Protocols is refused by the parser as an upgrade.
    if (head.status / 100 == 1) {
      interim_ = true;
      return {};
    }
    head_done_ = true;
    status_ = head.status;
    keep_alive_ = head.keep_alive;
    close_delimited_ = !head.content_length && !head.chunked;
    stamp(&Timeline::head_parsed);
    return sink_.begin(head);
  }

  Status on_body(std::string_view bytes) override {
    body_bytes_ += bytes.size();
    return sink_.on_body(bytes);
  }

  Status on_complete() override {
    if (interim_) {
      interim_ = false;
      return {};
    }
    complete_ = true;
    return {};
  }

  void stamp(uint64_t Timeline::*phase) noexcept {
    if (timeline_ != nullptr && ticks_ != nullptr) timeline_->*phase = ticks_();
  }

  [[nodiscard]] bool head_done() const noexcept { return head_done_; }
  [[nodiscard]] bool complete() const noexcept { return complete_; }
  [[nodiscard]] int status() const noexcept { return status_; }
  [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
  [[nodiscard]] bool close_delimited() const noexcept { return close_delimited_; }
  [[nodiscard]] uint64_t body_bytes() const noexcept { return body_bytes_; }

 private:
  BodySink& sink_;
  Timeline* timeline_;
  TickSource ticks_;
  bool interim_ = false;
  bool head_done_ = false;
  bool complete_ = false;
  bool keep_alive_ = true;
  bool close_delimited_ = false;
  int status_ = 0;
  uint64_t body_bytes_ = 0;
};

}  // namespace

struct Client::Pool {
  struct Origin {
    std::string host;  // as in the URL (brackets removed)
    uint16_t port = 0;
    net::Endpoint endpoint;   // resolved once
    std::string host_header;  // "127.0.0.1:8080", "[::1]:80"
    std::vector<net::Stream> idle;
  };

  explicit Pool(const ClientOptions& options)
      : parser(options.limits),
        receive_buffer(std::make_unique<char[]>(options.receive_buffer_bytes)),
        head_buffer(std::make_unique<char[]>(kRequestHeadBytes)) {}

  Result<Origin*> origin_for(const Url& url, std::size_t max_idle) {
    for (auto& origin : origins) {
      if (origin->port == url.port && origin->host == url.host) return origin.get();
    }
    auto endpoint = net::Endpoint::parse(url.host, url.port);
    if (!endpoint) {
      return fail(Errc::unsupported, "host '" + std::string(url.host) +
                                         "' is not a numeric address or localhost (no name resolution)");
    }
    auto origin = std::make_unique<Origin>();
    origin->host = url.host;
    origin->port = url.port;
    origin->endpoint = *endpoint;
    origin->host_header = endpoint->family() == AF_INET6 ? "[" + origin->host + "]" : origin->host;
    origin->host_header += ':';
    origin->host_header += std::to_string(url.port);
    origin->idle.reserve(max_idle);
    origins.push_back(std::move(origin));
    return origins.back().get();
  }

  // Declaration order is destruction order reversed: the streams (which may hold provided buffers
  // in a multishot) go before the buffer ring.
  std::unique_ptr<net::BufferRing> provided;
  ResponseParser parser;
  std::unique_ptr<char[]> receive_buffer;
  std::unique_ptr<char[]> head_buffer;
  std::string send_buffer;  // SendMode::copy: head and body side by side; keeps its capacity
  std::vector<std::unique_ptr<Origin>> origins;
};

Client::Client(net::Ring& ring, ClientOptions options)
    : ring_(&ring), options_(options), pool_(std::make_unique<Pool>(options_)) {}

Client::~Client() = default;

void Client::close_idle() noexcept {
  for (auto& origin : pool_->origins) {
    stats_.connections_closed += origin->idle.size();
    origin->idle.clear();  // each Stream closes on destruction
  }
}

Result<ResponseInfo> Client::request(const Url& url, const Request& request, BodySink& sink, Timeline* timeline) {
  Exchange exchange(sink, timeline, options_.ticks);
  if (timeline != nullptr) *timeline = Timeline{};
  exchange.stamp(&Timeline::start);

  // Options and features this request needs, checked before anything is opened.
  if (options_.receive_buffer_bytes == 0) return fail(Errc::io, "ClientOptions::receive_buffer_bytes is 0");
  const net::RingFeatures& features = ring_->features();
  if (request.send == SendMode::zero_copy && !features.send_zc) {
    return fail(Errc::unsupported, "zero-copy send needs IORING_OP_SEND_ZC (Linux 6.0)");
  }
  if (options_.receive == ReceiveMode::provided_buffers) {
    if (!features.recv_multishot || !features.provided_buffer_ring) {
      return fail(Errc::unsupported, "provided-buffer receive needs multishot recv and buffer rings (Linux 6.0)");
    }
    if (!pool_->provided) {
      const uint16_t group = g_next_buffer_group.fetch_add(1, std::memory_order_relaxed);
      auto buffers = net::BufferRing::create(*ring_, group, options_.provided_buffer_count,
                                             static_cast<unsigned>(options_.receive_buffer_bytes));
      if (!buffers) return std::unexpected(Error::from(buffers.error()));
      pool_->provided = std::move(*buffers);
    }
  }

  auto origin_or = pool_->origin_for(url, options_.max_idle_per_origin);
  if (!origin_or) return std::unexpected(origin_or.error());
  Pool::Origin& origin = **origin_or;
  const std::string& peer = origin.host_header;
  const bool keep_alive = options_.connection == ConnectionPolicy::keep_alive;

  // The request head, written before a connection is taken, so a bad request costs none.
  const RequestSpec spec{.method = request.method,
                         .host = origin.host_header,
                         .target = url.target,
                         .extra_headers = {},
                         .body = request.body,
                         .content_type = request.content_type,
                         .keep_alive = keep_alive};
  auto serialized = serialize(spec, std::span<char>(pool_->head_buffer.get(), kRequestHeadBytes));
  if (!serialized) return std::unexpected(with_peer(serialized.error(), peer));

  // A connection: an idle one (most recently used first), or a new one.
  ResponseInfo info;
  std::optional<net::Stream> stream;
  if (keep_alive && !origin.idle.empty()) {
    stream.emplace(std::move(origin.idle.back()));
    origin.idle.pop_back();
    info.reused_connection = true;
    ++stats_.connections_reused;
  } else {
    auto connected = net::Stream::connect(*ring_, origin.endpoint, options_.connect_timeout);
    if (!connected) return std::unexpected(with_peer(Error::from(connected.error()), peer));
    stream.emplace(std::move(*connected));
    ++stats_.connections_opened;
    exchange.stamp(&Timeline::connected);
  }

  // From here on every failure closes the connection: its state is unknown.
  auto abandon = [&](Error error) -> std::unexpected<Error> {
    stream->close();
    ++stats_.connections_closed;
    return std::unexpected(with_peer(std::move(error), peer));
  };
  auto abandon_net = [&](const net::Error& error) { return abandon(Error::from(error)); };

  // ---- send
  const auto timeout = std::optional<net::Duration>(options_.io_timeout);
  switch (request.send) {
    case SendMode::copy: {
      std::string& out = pool_->send_buffer;
      out.assign(serialized->head());
      out.append(request.body);
      if (auto sent = stream->send_all(std::span<const char>(out), timeout); !sent) return abandon_net(sent.error());
      break;
    }
    case SendMode::writev: {
      if (auto sent = stream->send_all(serialized->iovecs(), timeout); !sent) return abandon_net(sent.error());
      break;
    }
    case SendMode::zero_copy: {
      const std::string_view head = serialized->head();
      if (auto sent = stream->send_all(std::span<const char>(head), timeout); !sent) return abandon_net(sent.error());
      if (!request.body.empty()) {
        auto report = stream->send_zero_copy(std::span<const char>(request.body), timeout);
        if (!report) return abandon_net(report.error());
        info.zero_copy = *report;
      }
      break;
    }
  }
  exchange.stamp(&Timeline::request_sent);

  // ---- receive
  ResponseParser& parser = pool_->parser;
  parser.reset();
  parser.expect_no_body(request.method == "HEAD");
  const std::span<char> own(pool_->receive_buffer.get(), options_.receive_buffer_bytes);
  std::size_t head_fill = 0;  // bytes of an incomplete head kept at the start of `own`
  bool peer_closed = false;
  bool first_byte = false;
  bool ring_ran_dry = false;  // provided_buffers: the last multishot ended with ENOBUFS

  while (!exchange.complete()) {
    std::string_view got;
    int provided_id = -1;
    if (options_.receive == ReceiveMode::provided_buffers) {
      auto chunk = stream->receive_provided(*pool_->provided, timeout);
      if (!chunk && chunk.error().code == ENOBUFS && !ring_ran_dry) {
        // The ring emptied faster than this loop gave buffers back; every one is back by now (each
        // is recycled right after parsing), so the next call re-arms with a full ring. The bytes
        // are still in the socket. Counted, not hidden; twice in a row is an error.
        ring_ran_dry = true;
        ++stats_.provided_ring_dry;
        continue;
      }
      if (!chunk) return abandon_net(chunk.error());
      ring_ran_dry = false;
      if (chunk->length > 0) {
        provided_id = chunk->buffer_id;
        got = std::string_view(pool_->provided->buffer(chunk->buffer_id).data(), chunk->length);
      }
    } else {
      // After the head the sink may offer its own memory; the parser is then fed the bytes where
      // they landed, so the sink sees its own cursor in on_body and does not copy.
      ReceiveWindow window;
      if (exchange.head_done()) window = sink.receive_window();
      net::Result<std::size_t> received = 0;
      if (!window.bytes.empty()) {
        received = window.fixed_buffer_index >= 0
                       ? stream->receive_fixed(window.bytes, window.fixed_buffer_index, timeout)
                       : stream->receive(window.bytes, timeout);
        if (received) got = std::string_view(window.bytes.data(), *received);
      } else {
        if (exchange.head_done()) {
          head_fill = 0;  // the head's views died when its callback returned: the buffer is free
        } else if (head_fill == own.size()) {
          // A head longer than the buffer (receive_buffer_bytes < max_header_bytes): the parser
          // copies what it holds of it, and the buffer starts over.
          if (auto detached = parser.detach(); !detached) return abandon(detached.error());
          head_fill = 0;
        }
        // An incomplete head is appended to, so the views the parser holds into it stay valid.
        received = stream->receive(own.subspan(head_fill), timeout);
        if (received) {
          got = std::string_view(own.data() + head_fill, *received);
          head_fill += *received;
        }
      }
      if (!received) return abandon_net(received.error());
    }

    if (got.empty()) {
      // The peer closed: the end of a close-delimited body, or a truncated response.
      peer_closed = true;
      if (auto finished = parser.finish(exchange); !finished) return abandon(finished.error());
      if (!exchange.complete()) {
        return abandon(Error{Errc::truncated,
                             info.reused_connection ? "peer closed the reused connection before responding"
                                                    : "peer closed the connection before responding",
                             {}});
      }
      break;
    }
    if (!first_byte) {
      first_byte = true;
      exchange.stamp(&Timeline::first_byte);
    }

    // A 1xx response and the final one may share a receive: feed until the bytes run out or the
    // final response completes.
    Status fed;
    while (!got.empty() && !exchange.complete()) {
      auto consumed = parser.feed(got, exchange);
      if (!consumed) {
        fed = std::unexpected(consumed.error());
        break;
      }
      if (*consumed == 0) {  // cannot happen by parser.hpp's contract; never spin on it
        fed = fail(Errc::malformed, "parser consumed nothing of " + std::to_string(got.size()) + " bytes");
        break;
      }
      got.remove_prefix(*consumed);
    }
    // A kernel buffer goes back as soon as the parser is done with it; a head still incomplete is
    // copied out of it first, since its views point there.
    if (provided_id >= 0) {
      if (fed && !exchange.head_done()) fed = parser.detach();
      pool_->provided->recycle(static_cast<uint16_t>(provided_id));
    }
    if (!fed) return abandon(fed.error());
    if (exchange.complete() && !got.empty()) {
      // Requests are not pipelined: bytes after the response were not asked for.
      return abandon(Error{Errc::malformed,
                           std::to_string(got.size()) + " unsolicited bytes after the response", {}});
    }
  }
  exchange.stamp(&Timeline::body_done);
  if (auto ended = sink.end(); !ended) return abandon(ended.error());

  info.status = exchange.status();
  info.body_bytes = exchange.body_bytes();
  const bool reusable = keep_alive && exchange.keep_alive() && !exchange.close_delimited() && !peer_closed;
  if (reusable && origin.idle.size() < options_.max_idle_per_origin) {
    origin.idle.push_back(std::move(*stream));
  } else {
    // Queued, not waited for: the close goes to the kernel with the next request's submission, so
    // a fresh-connection request is not charged a close(2) between its body and its parse.
    stream->close_async();
    ++stats_.connections_closed;
  }
  return info;
}

}  // namespace ringlab::http
