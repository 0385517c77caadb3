#include "ringlab/http/client.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ringlab/http/request.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "buffer_groups.hpp"

namespace ringlab::http {
namespace {

// Room for the request head: request line, Host, Content-Type, Content-Length, Connection. A target
// longer than this is refused by serialize() as header_too_large.
constexpr std::size_t kRequestHeadBytes = 16 * 1024;

Error with_peer(Error error, const std::string& peer) {
  if (error.peer.empty()) error.peer = peer;
  return error;
}

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
      : receiver(options.limits, options.receive_buffer_bytes),
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
  ResponseReceiver receiver;  // the parser and the receive buffer: one exchange at a time
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
  auto result = attempt(url, request, sink, timeline, true);
  if (!result && stale_failure_ && options_.retry_stale_connection) {
    ++stats_.stale_retries;
    result = attempt(url, request, sink, timeline, false);
  }
  return result;
}

// One attempt's exchange on one connection, in the order attempt() runs its parts: take a connection
// (connect), send the request (send), receive the response into the sink (receive), keep or close the
// connection (conclude). Lives on attempt()'s stack; the references are attempt()'s arguments and the
// pool's, valid for the attempt. From the moment a connection is taken every failure closes it
// (abandon): its state is unknown.
struct Client::Exchange {
  Exchange(Client& owner, const Request& asked, Pool::Origin& to, BodySink& into, Timeline* stamps) noexcept
      : client(owner), request(asked), origin(to), sink(&into), timeline(stamps) {}

  Client& client;
  const Request& request;
  Pool::Origin& origin;
  BodySink* sink;
  Timeline* timeline;
  ResponseInfo info;
  std::optional<net::Stream> stream;
  bool response_started = false;  // the receiver was started for this request: any_byte() is ours
  bool peer_closed = false;
  // Bytes the send's own io_uring_enter received into the first window (options' receive_with_send).
  std::optional<std::size_t> first_received;

  void stamp(uint64_t Timeline::*phase) const noexcept {
    if (timeline != nullptr && client.options_.ticks != nullptr) timeline->*phase = client.options_.ticks();
  }
  [[nodiscard]] std::optional<net::Duration> timeout() const noexcept { return client.options_.io_timeout; }

  std::unexpected<Error> abandon(Error error) {
    stream->close();
    ++client.stats_.connections_closed;
    client.stale_failure_ = failed_on_stale_connection(error, info.reused_connection,
                                                       response_started && client.pool_->receiver.any_byte());
    return std::unexpected(with_peer(std::move(error), origin.host_header));
  }
  std::unexpected<Error> abandon(const net::Error& error) { return abandon(Error::from(error)); }

  // An idle connection (most recently used first) when `reuse` allows one, or a new one.
  Status connect(bool keep_alive, bool reuse) {
    if (keep_alive && reuse && !origin.idle.empty()) {
      stream.emplace(std::move(origin.idle.back()));
      origin.idle.pop_back();
      info.reused_connection = true;
      ++client.stats_.connections_reused;
      return {};
    }
    auto connected = net::Stream::connect(*client.ring_, origin.endpoint, client.options_.connect_timeout);
    if (!connected) return std::unexpected(with_peer(Error::from(connected.error()), origin.host_header));
    stream.emplace(std::move(*connected));
    ++client.stats_.connections_opened;
    stamp(&Timeline::connected);
    return {};
  }

  // The request as request.send says; with receive_with_send, the first receive in the same enter. The
  // exchange starts before the send, so that a receive queued with it has its window.
  Status send(const SerializedRequest& serialized) {
    ResponseReceiver& receiver = client.pool_->receiver;
    const ClientOptions& options = client.options_;
    receiver.start(*sink, timeline, options.ticks, request.method == "HEAD");
    response_started = true;
    std::string& copied = client.pool_->send_buffer;  // SendMode::copy: head and body side by side
    if (request.send == SendMode::copy) {
      copied.assign(serialized.head());
      copied.append(request.body);
    }
    const bool together = options.receive_with_send && options.receive == ReceiveMode::own_buffer &&
                          request.send != SendMode::zero_copy;
    if (together) {
      auto window = receiver.window();
      if (!window) return abandon(window.error());
      // The first window of a response is the receiver's own buffer; a registered one (never offered
      // before the head) would still take a plain recv.
      std::span<const iovec> parts = serialized.iovecs();
      iovec whole{};
      if (request.send == SendMode::copy) {
        whole = iovec{copied.data(), copied.size()};
        parts = std::span<const iovec>(&whole, 1);
      }
      auto received = stream->send_all_and_receive(parts, window->bytes, timeout());
      if (!received) return abandon(received.error());
      first_received = *received;
    } else if (auto sent = send_alone(serialized, copied); !sent) {
      return sent;
    }
    stamp(&Timeline::request_sent);
    return {};
  }

  Status send_alone(const SerializedRequest& serialized, const std::string& copied) {
    switch (request.send) {
      case SendMode::copy:
        if (auto sent = stream->send_all(std::span<const char>(copied), timeout()); !sent) return abandon(sent.error());
        return {};
      case SendMode::writev:
        if (auto sent = stream->send_all(serialized.iovecs(), timeout()); !sent) return abandon(sent.error());
        return {};
      case SendMode::zero_copy: {
        const std::string_view head = serialized.head();
        if (auto sent = stream->send_all(std::span<const char>(head), timeout()); !sent) return abandon(sent.error());
        if (!request.body.empty()) {
          auto report = stream->send_zero_copy(std::span<const char>(request.body), timeout());
          if (!report) return abandon(report.error());
          info.zero_copy = *report;
        }
        return {};
      }
    }
    return {};
  }

  // The response, receive by receive, until the receiver has it whole: the exchange
  // (response_receiver.hpp) says where bytes go; this loop does the I/O.
  Status receive() {
    ResponseReceiver& receiver = client.pool_->receiver;
    bool ring_ran_dry = false;  // provided_buffers: the last multishot ended with ENOBUFS
    while (true) {
      Result<bool> done = false;
      if (receives_from_ring(client.options_.receive)) {
        net::BufferRing& provided = *client.pool_->provided;
        const bool bundle = client.options_.receive == ReceiveMode::provided_bundles;
        auto chunk = stream->receive_provided(provided, timeout(), bundle);
        if (!chunk && chunk.error().code == ENOBUFS && !ring_ran_dry) {
          // The ring emptied faster than this loop gave buffers back; every one is back by now (each
          // is recycled right after parsing), so the next call re-arms with a full ring. The bytes
          // are still in the socket. Counted, not hidden; twice in a row is an error.
          ring_ran_dry = true;
          ++client.stats_.provided_ring_dry;
          continue;
        }
        if (!chunk) return abandon(chunk.error());
        ring_ran_dry = false;
        if (chunk->length == 0) {
          peer_closed = true;
          done = receiver.closed();
        } else {
          // Each of the kernel's buffers goes back as soon as the receiver is done with it.
          const unsigned buffers = provided.take_pieces(chunk->buffer_id, chunk->length, [&](std::string_view piece) {
            done = receiver.received_elsewhere(piece);
            return done.has_value();
          });
          if (buffers > 1) ++client.stats_.multi_buffer_receives;
        }
      } else {
        auto received = receive_into_window();
        if (!received) return std::unexpected(std::move(received.error()));
        peer_closed = *received == 0;
        done = peer_closed ? receiver.closed() : receiver.received(*received);
      }
      if (!done) {
        if (done.error().code == Errc::truncated && !receiver.any_byte() && info.reused_connection) {
          // An idle kept-alive connection the peer had closed: retried when the options say so.
          done.error().detail = "peer closed the reused connection before responding";
        }
        return abandon(std::move(done.error()));
      }
      if (*done) return {};
    }
  }

  // One receive into the receiver's window (or the bytes the send's enter already put there).
  Result<std::size_t> receive_into_window() {
    if (first_received) return *std::exchange(first_received, std::nullopt);
    auto window = client.pool_->receiver.window();
    if (!window) return abandon(window.error());
    const net::Result<std::size_t> got =
        window->fixed_buffer_index >= 0 ? stream->receive_fixed(window->bytes, window->fixed_buffer_index, timeout())
                                        : stream->receive(window->bytes, timeout());
    if (!got) return abandon(got.error());
    return *got;
  }

  // The response's facts, and the connection kept idle when it may be reused, or closed.
  ResponseInfo conclude(bool keep_alive) {
    const ResponseReceiver& receiver = client.pool_->receiver;
    info.status = receiver.status();
    info.body_bytes = receiver.body_bytes();
    const bool reusable = keep_alive && receiver.keep_alive() && !receiver.close_delimited() && !peer_closed;
    if (reusable && origin.idle.size() < client.options_.max_idle_per_origin) {
      origin.idle.push_back(std::move(*stream));
    } else {
      // Queued, not waited for: the close goes to the kernel with the next request's submission, so
      // a fresh-connection request is not charged a close(2) between its body and its parse.
      stream->close_async();
      ++client.stats_.connections_closed;
    }
    return info;
  }
};

Status Client::prepare(const Request& request) {
  if (options_.receive_buffer_bytes == 0) return fail(Errc::io, "ClientOptions::receive_buffer_bytes is 0");
  const net::RingFeatures& features = ring_->features();
  if (request.send == SendMode::zero_copy && !features.send_zc) {
    return fail(Errc::unsupported, "zero-copy send needs IORING_OP_SEND_ZC (Linux 6.0)");
  }
  if (!receives_from_ring(options_.receive)) return {};
  if (options_.receive == ReceiveMode::provided_incremental) {
    return fail(Errc::unsupported, "incremental provided buffers are received by InflightClient only (one ring "
                                   "shared by its connections)");
  }
  if (!features.recv_multishot || !features.provided_buffer_ring) {
    return fail(Errc::unsupported, "provided-buffer receive needs multishot recv and buffer rings (Linux 6.0)");
  }
  if (options_.receive == ReceiveMode::provided_bundles && !features.recv_bundle) {
    return fail(Errc::unsupported, "bundle receive needs IORING_RECVSEND_BUNDLE (Linux 6.10)");
  }
  if (!pool_->provided) {
    auto buffers = net::BufferRing::create(*ring_, next_buffer_group(), options_.provided_buffer_count,
                                           static_cast<unsigned>(options_.receive_buffer_bytes));
    if (!buffers) return std::unexpected(Error::from(buffers.error()));
    pool_->provided = std::move(*buffers);
  }
  return {};
}

Result<ResponseInfo> Client::attempt(const Url& url, const Request& request, BodySink& sink, Timeline* timeline,
                                     bool reuse) {
  stale_failure_ = false;
  if (timeline != nullptr) timeline->clear_request();
  if (timeline != nullptr && options_.ticks != nullptr) timeline->start = options_.ticks();

  // Options and features this request needs, checked before anything is opened.
  if (auto prepared = prepare(request); !prepared) return std::unexpected(std::move(prepared.error()));
  auto origin_or = pool_->origin_for(url, options_.max_idle_per_origin);
  if (!origin_or) return std::unexpected(origin_or.error());
  Pool::Origin& origin = **origin_or;
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
  if (!serialized) return std::unexpected(with_peer(serialized.error(), origin.host_header));

  Exchange exchange(*this, request, origin, sink, timeline);
  if (auto connected = exchange.connect(keep_alive, reuse); !connected) return std::unexpected(connected.error());
  if (auto sent = exchange.send(*serialized); !sent) return std::unexpected(sent.error());
  if (auto received = exchange.receive(); !received) return std::unexpected(received.error());
  return exchange.conclude(keep_alive);
}

}  // namespace ringlab::http
