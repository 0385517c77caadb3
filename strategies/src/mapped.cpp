// mapped: the body received without a copy on the client's CPU. One kept-alive TCP socket in blocking
// mode; the kernel's receive pages of the body are mapped into a region of the client's address space
// (TCP_ZEROCOPY_RECEIVE, net/mapped_region.hpp) and parsed where they lie, into viewing models, as views
// parses its body.
//
// Per request: the request sent (send); the head found with a peek (recv MSG_PEEK of at most
// kPeekBytes: the head is copied twice, no body byte is consumed) and then received exactly (recv), so
// that the stream stands at the body's first byte, the start of a segment; the region laid out for the
// body's Content-Length (kept while the size stays, MappedRegion); the body's whole pages mapped
// (getsockopt TCP_ZEROCOPY_RECEIVE: what is queued, then, after a poll() that SO_RCVLOWAT holds until the
// rest of the whole pages is queued, the rest in one call; the mark set back to 1 after); the last
// partial page received by copy (recv) into the anonymous page after the mapped ones, which also holds
// simdjson's padding. The region has kSlots such layouts, used in turn: a body's pages stay mapped until
// its slot comes round again, and one madvise unmaps all of them then (one TLB flush per kSlots
// responses). A connection closed (fresh connections, errors) unmaps the region with it.
//
// What the server must do for pages to map (the row asks for it with pages=1, server/routes.hpp): send
// the body from page-aligned memory with a zero-copy send, the head in a send of its own. On loopback the
// kernel then copies each segment into pages of its own, which map when a segment is whole pages: the
// row sets its socket's TCP_MAXSEG to 4096 + 12 (a page of payload with the timestamp option), so that
// the server's segments are. Anything the kernel cannot map is received by copy and counted as such
// (IoCounters::body_kernel_copied): a head that does not fit the peek, a segment that is not whole pages
// (the rest of the body is then copied), a body smaller than a page.
//
// Errors as the socket peers' (socket_peer.hpp): they name the case, the operation, the server and
// errno; after any error the socket is closed and the next run() connects again; nothing is retried.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "case_strategy.hpp"
#include "common.hpp"
#include "recipe.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/response_receiver.hpp"
#include "ringlab/net/mapped_region.hpp"
#include "ringlab/net/socket.hpp"
#include "socket_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

// The most of a response's start a peek copies to find the end of its head: the server's heads are about
// 150 bytes; a longer one is received as every other row receives it, and the body is then copied.
constexpr std::size_t kPeekBytes = 1024;
// The row's TCP_MAXSEG: a page of payload per segment, with the 12 bytes of TCP's timestamp option.
constexpr int kSegmentBytes = 4096 + 12;
// The target's extra query: the server's page-aligned zero-copy answer (server/routes.hpp).
constexpr std::string_view kPagesQuery = "&pages=1";
// Bodies kept mapped side by side (net::MappedRegion's slots): the pages of 8 responses are unmapped
// together, one TLB flush per 8 responses instead of one per response, for 8 bodies' pages held.
constexpr std::size_t kSlots = 8;

// The body's sink: its memory is the region (mapped pages, then the copied tail and the padding).
// Bytes that came with the head (a head longer than the peek) are copied in; everything else was
// received or mapped where the sink's window pointed.
class RegionSink final : public http::BodySink {
 public:
  RegionSink(net::MappedRegion& region, const net::Fd& socket) noexcept : region_(&region), socket_(&socket) {}

  http::Status begin(const http::ResponseHead& head) override {
    filled_ = 0;
    laid_out_ = true;
    if (!head.content_length) return sink_error("the answer has no Content-Length: nothing to lay out");
    length_ = *head.content_length;
    if (auto prepared = region_->prepare(socket_->get(), length_, base::kPadding, kSlots); !prepared) {
      return sink_error(prepared.error().message());
    }
    if (copy_all_) {
      if (auto writable = region_->copy_from(0); !writable) return sink_error(writable.error().message());
    }
    return {};
  }
  http::ReceiveWindow receive_window() override { return {{region_->data() + filled_, length_ - filled_}}; }
  [[nodiscard]] bool receives_in_place() const noexcept override { return true; }
  http::Status on_body(std::string_view bytes) override {
    char* cursor = region_->data() + filled_;
    if (bytes.data() != cursor) {
      // Body bytes that came with the head, into the anonymous memory copy_from(0) made.
      std::memcpy(cursor, bytes.data(), bytes.size());
      count_copied(bytes.size());
    }
    filled_ += bytes.size();
    return {};
  }
  http::Status end() override { return {}; }

  // A new response; `copy_all`: its head comes with body bytes, so its whole region is anonymous memory,
  // copied into.
  void restart(bool copy_all) noexcept {
    copy_all_ = copy_all;
    laid_out_ = false;
  }
  // The head was parsed and the region laid out for the body.
  [[nodiscard]] bool laid_out() const noexcept { return laid_out_; }
  [[nodiscard]] std::size_t filled() const noexcept { return filled_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  [[nodiscard]] simdjson::padded_string_view body() const noexcept {
    return simdjson::padded_string_view(region_->data(), length_, length_ + base::kPadding);
  }

 private:
  static std::unexpected<http::Error> sink_error(std::string detail) {
    return std::unexpected(http::Error{http::Errc::sink, "mapped: " + std::move(detail), {}});
  }

  net::MappedRegion* region_;
  const net::Fd* socket_;
  std::size_t length_ = 0;
  std::size_t filled_ = 0;
  bool copy_all_ = false;
  bool laid_out_ = false;
};

class Mapped final : public CaseStrategy {
 public:
  using CaseStrategy::CaseStrategy;

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures&) const override {
    static const net::Status supported = net::MappedRegion::supported();
    if (supported) return std::nullopt;
    return "kernel does not map TCP receive queues (TCP_ZEROCOPY_RECEIVE): " + supported.error().message();
  }
  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    if (config.server_mode == ServerMode::seed) {
      return "the seed server answers in chunks serialized per request: no page-aligned body to map";
    }
    return std::nullopt;
  }
  [[nodiscard]] IoCounters io_counters() const override {
    return copies_.into({.connections_opened = connections_opened_, .syscalls = syscalls_ + region_.syscalls()});
  }
  [[nodiscard]] HeldMemory held_memory() const override {
    // The region's laid-out pages hold the last body (mapped pages, tail and padding) until the next one.
    return {.connections = 1,
            .body_bytes = region_.laid_out_bytes(),
            .model_bytes = models_.capacity_bytes(),
            .receive_bytes = receiver_.buffer_bytes()};
  }
  void drop_connection() override { close_connection(); }

 private:
  Status open_case() override {
    close_connection();
    auto target = socket_target(config(), label(), kPagesQuery);
    if (!target) return std::unexpected(std::move(target.error()));
    target_ = std::move(*target);
    models_.reserve(config().payload, config().count);
    return {};
  }
  void close_case() override { close_connection(); }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    auto result = exchange(timeline, check);
    if (!result) [[unlikely]] {
      close_connection();
    }
    return result;
  }

  Result<Outcome> exchange(http::Timeline* timeline, Check check) {
    const http::TickSource ticks = config().ticks;
    const Stamper stamp{timeline, ticks};
    stamp(&http::Timeline::start);
    if (!socket_.valid()) {
      auto opened = open_blocking(target_.peer, target_.peer_text, timeout_ms(config()), kSegmentBytes, syscalls_);
      if (!opened) return fail(label(), opened.error().message());
      socket_ = std::move(*opened);
      ++connections_opened_;
      stamp(&http::Timeline::connected);
    }
    // The request, then the head's length from a peek at the response's first bytes.
    auto sent = send_blocking(socket_.get(), target_.request, target_.peer_text, syscalls_);
    if (!sent) return fail(label(), sent.error().message());
    stamp(&http::Timeline::request_sent);

    if (auto next = region_.next_slot(); !next) return fail(label(), next.error().message());
    receiver_.start(sink_, timeline, ticks);
    const uint64_t copied_before = sink_.copied_bytes();
    auto head = peek_head();
    if (!head) return fail(label(), head.error().message());
    sink_.restart(*head == 0);
    deadline_ = std::chrono::steady_clock::now() + config().timeout;
    auto received = receive_response(*head);
    if (!received) {
      if (received.error().peer.empty()) received.error().peer = target_.peer_text;
      return fail(label(), received.error().message());
    }
    copies_.received(receiver_.body_bytes(), copied_before, sink_.copied_bytes());
    if (receiver_.status() != 200) [[unlikely]] {
      return fail(label(), "status " + std::to_string(receiver_.status()) + " from " + target_.peer_text);
    }
    const auto consumed = models_.parse(config().payload, parser(), sink_.body());
    stamp(&http::Timeline::deserialized);
    auto outcome = conclude(label(), config(), expected(), consumed, check,
                            [this] { return models_.checksum(config().payload); });
    // Closed after the parse and the checksum, which read the body where it is mapped: closing unmaps it.
    if (!receiver_.keep_alive() || config().connection == Connection::fresh) close_connection();
    return outcome;
  }

  // The head's length, found in a peek at the response's first bytes; 0 when the head is longer than the
  // peek or has not fully arrived (it is then received as other rows receive it).
  net::Result<std::size_t> peek_head() {
    auto n = receive(peeked_, MSG_PEEK);
    if (!n) return std::unexpected(std::move(n.error()));
    // 0 bytes: closed, which the receiver reports as a truncation.
    const std::string_view start(peeked_.data(), *n);
    const auto end = start.find("\r\n\r\n");
    return end == std::string_view::npos ? 0 : end + 4;
  }

  // Receives the head (exactly `head_bytes` when known) and maps or receives the body.
  http::Result<void> receive_response(std::size_t head_bytes) {
    std::size_t head_left = head_bytes;
    while (!receiver_.complete()) {
      auto window = receiver_.window();
      if (!window) return std::unexpected(std::move(window.error()));
      std::span<char> into = window->bytes;
      if (head_left > 0) {
        into = into.first(std::min(into.size(), head_left));
      } else {
        auto mapped = map_step(into);
        if (!mapped) return std::unexpected(std::move(mapped.error()));
        if (*mapped) continue;
      }
      auto n = receive(into);
      if (!n) return std::unexpected(http::Error::from(n.error()));
      if (head_left > 0) head_left -= std::min(head_left, *n);
      auto done = *n == 0 ? receiver_.closed() : receiver_.received(*n);
      if (!done) return std::unexpected(std::move(done.error()));
    }
    return {};
  }

  // One step of the body's whole pages at the window `into`: maps what is queued of them, or turns the rest
  // of the body to copying, or waits for the next segment (true); false when no whole page of the mapped
  // part is left here, and the window is received by copy.
  http::Result<bool> map_step(std::span<char> into) {
    if (!sink_.laid_out()) return false;
    if (sink_.filled() >= region_.mappable_bytes()) {
      // The mapped part is in, or what is left of it was turned to copying (copy_from() shrinks it): the rest,
      // and the next response's head, are received as usual.
      if (auto low = set_receive_low_mark(1); !low) return std::unexpected(http::Error::from(low.error()));
      return false;
    }
    const std::size_t page = net::MappedRegion::page_bytes();
    const std::size_t offset = sink_.filled();
    const std::size_t whole = std::min(into.size(), region_.mappable_bytes() - offset) / page * page;
    if (whole == 0) return false;
    auto mapped = region_.map(offset, whole);
    if (!mapped) return std::unexpected(http::Error::from(mapped.error()));
    if (mapped->bytes > 0) {
      copies_.mapped += mapped->bytes;
      if (auto done = receiver_.received(mapped->bytes); !done) return std::unexpected(std::move(done.error()));
      return true;
    }
    if (mapped->queued >= page || mapped->stream_ended) {
      // A page or more queued and none of it maps (the kernel's skip hint: the rest of a segment that is not
      // whole pages), or the peer closed with nothing queued: from here on the body is received by copy (which
      // reads the end of the stream, so the receiver says what the response lacks).
      return copy_the_rest(offset);
    }
    // Less than a page queued (the kernel then maps nothing and hints that much as a skip, whatever follows):
    // wait until the rest of the whole pages is queued (SO_RCVLOWAT: poll() wakes once that much is in), so
    // that one mapping call maps it all, instead of a poll and a getsockopt per segment as they arrive.
    if (auto low = set_receive_low_mark(region_.mappable_bytes() - offset); !low) {
      return std::unexpected(http::Error::from(low.error()));
    }
    auto readable = wait_readable();
    if (!readable) return std::unexpected(http::Error::from(readable.error()));
    if (*readable == Readable::closed) {
      // The peer closed (or reset) with less than a page left: nothing more will map. What is queued, and then
      // the end of the stream, is received by copy, so the receiver says what the response lacks.
      return copy_the_rest(offset);
    }
    return true;
  }

  // Turns the body from `offset` on to copying: the region's memory there becomes writable, and the next
  // map_step() finds no whole page left to map (the low mark goes back to 1 there).
  http::Result<bool> copy_the_rest(std::size_t offset) {
    if (auto writable = region_.copy_from(offset); !writable) {
      return std::unexpected(http::Error::from(writable.error()));
    }
    return true;
  }

  // SO_RCVLOWAT: poll() reports the socket readable once `bytes` are queued (the kernel caps the mark at half
  // the receive buffer it may grow to, and grows the buffer to hold it). Set to what is left of the body's whole
  // pages while they arrive, never more, so the wait always ends; back to 1 once they are in, so that the tail's
  // receive and the next head's peek wait for no more than they need. A call only when the mark changes.
  net::Status set_receive_low_mark(std::size_t bytes) {
    const int mark = static_cast<int>(std::min<std::size_t>(bytes, INT_MAX));
    if (mark == receive_low_mark_) return {};
    ++syscalls_;
    if (::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof(mark)) != 0) {
      return net::fail("setsockopt SO_RCVLOWAT", errno, target_.peer_text);
    }
    receive_low_mark_ = mark;
    return {};
  }

  // Waits for bytes to map (as many as the receive low mark says), or for the peer to close, bounded by the
  // case's deadline.
  enum class Readable : uint8_t { queued, closed };
  net::Result<Readable> wait_readable() {
    if (std::chrono::steady_clock::now() > deadline_) return net::fail("poll", ETIMEDOUT, target_.peer_text);
    pollfd readable{.fd = socket_.get(), .events = POLLIN | POLLRDHUP, .revents = 0};
    while (true) {
      ++syscalls_;
      const int n = ::poll(&readable, 1, timeout_ms(config()));
      if (n > 0) return (readable.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0 ? Readable::closed : Readable::queued;
      if (n == 0) return net::fail("poll", ETIMEDOUT, target_.peer_text);
      if (errno != EINTR) return net::fail("poll", errno, target_.peer_text);
    }
  }

  net::Result<std::size_t> receive(std::span<char> into, int flags = 0) {
    return receive_blocking(socket_.get(), into, flags, target_.peer_text, syscalls_);
  }

  void close_connection() noexcept {
    if (!socket_.valid()) return;
    region_.reset();  // its mapping of the socket would keep the connection open
    socket_.reset();
    receive_low_mark_ = 1;  // a new socket's
    ++syscalls_;
  }

  SocketTarget target_;
  net::Fd socket_;
  net::MappedRegion region_;
  RegionSink sink_{region_, socket_};
  http::ResponseReceiver receiver_{http::ParserLimits{}, kReceiveBufferBytes};
  std::array<char, kPeekBytes> peeked_{};
  ViewModels models_;
  std::chrono::steady_clock::time_point deadline_{};  // of the response in progress
  int receive_low_mark_ = 1;  // the socket's SO_RCVLOWAT as last set (1: the kernel's default)
  uint64_t syscalls_ = 0;
  uint64_t connections_opened_ = 0;
  BodyCopies copies_;
};

}  // namespace

std::unique_ptr<Strategy> make_mapped(const Recipe& recipe) { return std::make_unique<Mapped>(recipe.name); }

}  // namespace ringlab::strategies::detail
