// Upstream and UpstreamFetch: /proxy's fetches on the worker's ring (see upstream.hpp).
#include "upstream.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <span>
#include <utility>

#include "ringlab/http/request.hpp"

namespace ringlab::server {
namespace {

// The head of "GET /weather?count=4294967295" with Host and Connection fits with room to spare.
constexpr std::size_t kHeadBytes = 512;
// Room for the upstream's head and the first bytes of its body; the body goes to the fetch's string.
constexpr std::size_t kReceiveBytes = 16u << 10;
// A fetch keeps at most this much body capacity when it goes back to the pool.
constexpr std::size_t kKeptBodyBytes = 64u << 10;

}  // namespace

UpstreamFetch::UpstreamFetch(Upstream& upstream)
    : upstream_(upstream),
      receiver_(http::ParserLimits{.max_header_bytes = 16u << 10, .max_body_bytes = upstream.options_.max_answer_bytes},
                kReceiveBytes) {
  head_.reserve(kHeadBytes);
}

UpstreamFetch::~UpstreamFetch() = default;

void UpstreamFetch::abandon() noexcept {
  abandoned_ = true;
  requester_ = nullptr;
  switch (phase_) {
    case Phase::connecting: upstream_.ring_.prep_cancel(connect_op_, nullptr); break;
    case Phase::sending: upstream_.ring_.prep_cancel(send_op_, nullptr); break;
    case Phase::receiving: upstream_.ring_.prep_cancel(recv_op_, nullptr); break;
    case Phase::idle: break;
  }
}

std::optional<UpstreamFailure> UpstreamFetch::begin(bool reuse) {
  body_.clear();
  head_sent_ = 0;
  receiver_.start(sink_, nullptr, nullptr, false);
  reused_ = false;
  if (reuse && mode_ == UpstreamConnection::pooled && !upstream_.idle_.empty()) {
    fd_ = std::move(upstream_.idle_.back());
    upstream_.idle_.pop_back();
    reused_ = true;
    send();
    return std::nullopt;
  }
  auto socket = net::tcp_socket_for(*upstream_.endpoint_);
  if (!socket) return UpstreamFailure{502, socket.error().message()};
  fd_ = std::move(*socket);
  phase_ = Phase::connecting;
  upstream_.ring_.prep_connect(fd_.get(), upstream_.endpoint_->addr(), upstream_.endpoint_->length, connect_op_);
  upstream_.ring_.link_timeout(upstream_.options_.upstream_timeout);
  return std::nullopt;
}

void UpstreamFetch::send() {
  phase_ = Phase::sending;
  upstream_.ring_.prep_send(fd_.get(), std::span<const char>(head_).subspan(head_sent_), send_op_);
  upstream_.ring_.link_timeout(upstream_.options_.upstream_timeout);
}

void UpstreamFetch::receive() {
  auto window = receiver_.window();
  if (!window) {
    fail(window.error());
    return;
  }
  phase_ = Phase::receiving;
  upstream_.ring_.prep_recv(fd_.get(), window->bytes, recv_op_);
  upstream_.ring_.link_timeout(upstream_.options_.upstream_timeout);
}

void UpstreamFetch::on_connected(int res) {
  if (abandoned_) return finish({}, false);
  if (res < 0) return fail(http::Error::from(net::Error{"connect", -res, upstream_.host_header_}));
  send();
}

void UpstreamFetch::on_sent(int res) {
  if (abandoned_) return finish({}, false);
  if (res <= 0) return fail(http::Error::from(net::Error{"send", res == 0 ? EPIPE : -res, upstream_.host_header_}));
  head_sent_ += static_cast<std::size_t>(res);
  if (head_sent_ < head_.size()) {
    send();  // a short send: the rest
  } else {
    receive();
  }
}

void UpstreamFetch::on_received(int res) {
  if (abandoned_) return finish({}, false);
  if (res < 0) return fail(http::Error::from(net::Error{"recv", -res, upstream_.host_header_}));
  auto done = res == 0 ? receiver_.closed() : receiver_.received(static_cast<std::size_t>(res));
  if (!done) {
    http::Error error = std::move(done.error());
    if (error.peer.empty()) error.peer = upstream_.host_header_;
    return fail(error);
  }
  if (!*done) return receive();
  const bool reusable = res > 0 && receiver_.keep_alive() && !receiver_.close_delimited();
  if (receiver_.status() != 200) {
    return finish(std::unexpected(UpstreamFailure{502, "answered status " + std::to_string(receiver_.status())}),
                  reusable);
  }
  finish({}, reusable);
}

void UpstreamFetch::fail(const http::Error& error) {
  if (!retried_ && mode_ == UpstreamConnection::pooled &&
      http::failed_on_stale_connection(error, reused_, receiver_.any_byte())) {
    // The upstream closed the idle connection: once more on a new one (upstream.hpp).
    retried_ = true;
    ++upstream_.stats_.upstream_retries;
    upstream_.ring_.prep_close(fd_.release(), nullptr);
    if (auto failure = begin(false)) finish(std::unexpected(std::move(*failure)), false);
    return;
  }
  const int status = error.code == http::Errc::timeout ? 504 : 502;
  finish(std::unexpected(UpstreamFailure{status, error.message()}), false);
}

void UpstreamFetch::finish(std::expected<void, UpstreamFailure> result, bool keep_connection) {
  phase_ = Phase::idle;
  if (fd_.valid()) {
    if (keep_connection && mode_ == UpstreamConnection::pooled && !abandoned_ &&
        upstream_.idle_.size() < Upstream::kIdleConnections) {
      upstream_.idle_.push_back(std::move(fd_));
    } else {
      upstream_.ring_.prep_close(fd_.release(), nullptr);  // queued: the close costs no syscall of its own
    }
  }
  if (UpstreamRequester* requester = std::exchange(requester_, nullptr); requester != nullptr && !abandoned_) {
    requester->on_upstream_done(std::move(result), body_);
  }
  --upstream_.in_flight_;
  upstream_.recycle(*this);  // may destroy this fetch: nothing after it
}

Upstream::Upstream(net::Ring& ring, const ServerOptions& options, std::optional<http::Url> url, ServerStats& stats)
    : ring_(ring), options_(options), url_(url), stats_(stats) {
  idle_.reserve(kIdleConnections);
  if (!url_) return;
  if (auto endpoint = net::Endpoint::parse(url_->host, url_->port)) endpoint_ = *endpoint;
  host_header_ = endpoint_ && endpoint_->family() == AF_INET6 ? "[" + std::string(url_->host) + "]"
                                                              : std::string(url_->host);
  host_header_ += ':';
  host_header_ += std::to_string(url_->port);
}

Upstream::~Upstream() = default;

void Upstream::close_idle() noexcept { idle_.clear(); }

void Upstream::drop_closed_idle() noexcept {
  const auto before = idle_.size();
  std::erase_if(idle_, [](const net::Fd& fd) {
    char byte = 0;
    const ssize_t n = ::recv(fd.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    // Kept only while there is nothing to read: 0 is the upstream's FIN, bytes nobody asked for
    // make the connection unusable, and an error (a reset) ends it too.
    return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  });
  stats_.upstream_idle_dropped += before - idle_.size();
}

std::expected<UpstreamFetch*, UpstreamFailure> Upstream::start(UpstreamRequester& requester, uint32_t count,
                                                               UpstreamConnection mode) {
  if (!url_) return std::unexpected(UpstreamFailure{502, "no upstream for /proxy on this listener"});
  if (!endpoint_) {
    return std::unexpected(UpstreamFailure{502, "upstream host '" + std::string(url_->host) +
                                                    "' is not a numeric address or localhost"});
  }
  if (free_.empty()) {
    busy_.push_back(std::make_unique<UpstreamFetch>(*this));
  } else {
    busy_.push_back(std::move(free_.back()));
    free_.pop_back();
  }
  UpstreamFetch& fetch = *busy_.back();
  fetch.requester_ = &requester;
  fetch.mode_ = mode;
  fetch.retried_ = false;
  fetch.abandoned_ = false;

  char target[48] = "/weather?count=";
  const std::size_t prefix = std::char_traits<char>::length(target);
  auto [end, ec] = std::to_chars(target + prefix, target + sizeof target, count);
  (void)ec;  // a uint32_t fits
  char head[kHeadBytes];
  const http::RequestSpec spec{.method = "GET",
                               .host = host_header_,
                               .target = std::string_view(target, static_cast<std::size_t>(end - target)),
                               .keep_alive = mode == UpstreamConnection::pooled};
  auto serialized = http::serialize(spec, std::span<char>(head, sizeof head));
  if (!serialized) {
    recycle(fetch);
    return std::unexpected(UpstreamFailure{502, serialized.error().message()});
  }
  fetch.head_.assign(serialized->head());

  ++in_flight_;
  if (auto failure = fetch.begin(true)) {
    --in_flight_;
    fetch.requester_ = nullptr;
    recycle(fetch);
    return std::unexpected(std::move(*failure));
  }
  return &fetch;
}

void Upstream::recycle(UpstreamFetch& fetch) noexcept {
  auto it = std::find_if(busy_.begin(), busy_.end(), [&](const auto& owned) { return owned.get() == &fetch; });
  if (it == busy_.end()) return;
  std::unique_ptr<UpstreamFetch> owned = std::move(*it);
  *it = std::move(busy_.back());
  busy_.pop_back();
  if (owned->fd_.valid()) ring_.prep_close(owned->fd_.release(), nullptr);
  if (owned->body_.capacity() > kKeptBodyBytes) std::string().swap(owned->body_);
  if (free_.size() < kFreeFetches) free_.push_back(std::move(owned));
}

}  // namespace ringlab::server
