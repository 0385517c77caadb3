// beast with N requests in flight (peer; the beast row's Recipe::make_inflight): what a library with its
// own event loop does with many requests at once. N = CaseConfig::inflight kept-alive Boost.Beast
// connections (beast_connection.hpp: a tcp_stream and its flat_buffer each, TCP_NODELAY) on one
// io_context, one request in flight on each. One run() is one round: the request (built once, at setup,
// as the one-connection row builds it) starts a chain of asynchronous operations on every connection
// (connect when closed, write, read the head, read the body into a response_parser<string_body> made per
// request), then the io_context runs, on the calling thread, until all N chains have ended. Each chain is
// the one the one-connection row runs (beast.cpp); Beast and asio interleave the N of them.
//
// Deserialized after all N responses are in, in connection order, as the epoll peer with N in flight
// does: the round then reads as network first, parsing second, as every N-in-flight row's does, and
// its phases mean the same. (Parsing each body as its chain ends would overlap parsing with the other
// responses' waits on this one thread, and mix the two in the timeline.) Each body is checked as the
// one-connection row checks it (status 200, the body against its Content-Length), copied into its
// connection's padded buffer, its response freed, and parsed into its connection's reused owning models;
// the N consumption folds are folded in connection order (common.hpp's fold_connection), so that one
// connection's fold is the one-connection row's.
//
// Deadline: every step of every chain is bounded by the case's deadline (tcp_stream::expires_after, set
// before each step), so a round ends within a few deadlines whatever the server does; a chain that
// fails stops the io_context at once.
//
// Memory: Beast's and asio's, measured as they are: per request a parser whose std::string body is
// reserved to the Content-Length and filled from the flat_buffer 512 bytes at a time (each receive an
// asio operation, with its allocations), as the one-connection row. Per connection, kept while idle:
// the flat_buffer (512 bytes once used), the padded body buffer of the largest body seen and owning
// models reused in place (HeldMemory); the response is freed once its body is copied, so an idle
// connection keeps no body string. The tcp_stream's state and asio's per-socket state are not counted.
//
// Errors name the case and the connection ("connection 3 of 64", counted from 1): "beast weather 10 x64:
// connection 3 of 64: beast read head 127.0.0.1:8080: The socket was closed due to a timeout". When
// more than one chain failed before the io_context stopped, the first connection in order is named.
// After an error every connection is closed and the next run() connects all N again; nothing is
// retried. A response that closes its connection (Connection: close) closes it; the next round connects
// it again.
//
// Timeline (when run() is given one and the case a tick source): the round's start, connected (when the
// round connected: the last connect done), request_sent (the last request written), first_byte and
// head_parsed (the first head read), body_done (the last body complete) and deserialized. Each
// connection's chain stamps its own timeline; the round's are taken from them.
//
// System calls: asio's, unseen (counts_syscalls false). Threads: the calling thread only; the
// io_context is the strategy's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "beast_connection.hpp"
#include "library_peer.hpp"

namespace ringlab::strategies::detail {
namespace {


// What a connection's bodies become, beside its BeastConnection.
struct Slot {
  base::PaddedBuffer body;
  OwningModels models;
  http::Timeline stamps;  // this connection's share of a timed round
};

class BeastInflight final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;
  ~BeastInflight() override { teardown(); }

  [[nodiscard]] std::string notes() const override {
    return "N connections on one io_context, each request a chain of asio operations; head read whole (head "
           "shows the first head); 512-byte receives, each an asio operation; syscalls n/a: asio makes its own, "
           "unseen";
  }
  void drop_connection() override { close_all(); }
  // Per connection: its flat_buffer, its padded body buffer and its models (see "Memory" above).
  [[nodiscard]] HeldMemory held_memory() const override {
    HeldMemory held{.connections = count_};
    for (std::size_t i = 0; i < count_; ++i) {
      held.receive_bytes += connections_[i].buffer_bytes();
      held.body_bytes += held_bytes(slots_[i].body);
      held.model_bytes += slots_[i].models.capacity_bytes();
    }
    return held;
  }

 private:
  Status open_case() override;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    Result<Outcome> result;
    try {
      result = round(timeline, check);
    } catch (const std::exception& error) {
      result = fail(label(), std::string("beast ") + authority(config()) + ": " + error.what());
    }
    if (!result) [[unlikely]] {
      close_all();
    }
    return result;
  }
  void close_case() override { close_all(); }

  Result<Outcome> round(http::Timeline* timeline, Check check);
  // Connection `index`'s response: checked, copied into its padded buffer, freed, parsed; its fold.
  Result<uint64_t> take_body(std::size_t index);
  // Summarises the connections' stamps into the round's timeline.
  void stamp_round(http::Timeline& timeline) const noexcept;
  void close_all() noexcept { close_connections(io_, std::span(connections_.get(), count_)); }

  // "label: connection 3 of 64: what"; only on error paths (it allocates).
  [[nodiscard]] std::unexpected<Error> failed_on(std::size_t index, std::string_view what) const {
    return fail_on_connection(label(), index, count_, what);
  }

  boost::asio::io_context io_{1};
  BeastEndpoints endpoints_;
  BeastRequest request_;
  std::string target_;
  std::size_t count_ = 0;  // N: connections, so requests in flight
  std::unique_ptr<BeastConnection[]> connections_;  // a span for close_connections(); never moved
  std::unique_ptr<Slot[]> slots_;
};

Status BeastInflight::open_case() {
  close_all();  // a second setup() starts over
  if (posts()) return fail(label(), "N requests in flight are GETs: this row posts");
  if (config().inflight == 0) return fail(label(), "no request in flight (CaseConfig::inflight is 0)");
  endpoints_ = {};
  if (auto ec = resolve_endpoints(io_, config(), endpoints_); ec) {
    return fail(label(), "resolve " + authority(config()) + ": " + ec.message());
  }
  target_ = get_target(config());
  // keep_alive false (--connection fresh): "Connection: close", and each connection is closed after
  // its answer.
  build_request(request_, config(), /*post=*/false, target_, {}, !fresh());

  count_ = 0;  // the connections go first: close_all() must not see a count without them
  connections_ = std::make_unique<BeastConnection[]>(config().inflight);
  slots_ = std::make_unique<Slot[]>(config().inflight);
  count_ = config().inflight;
  for (std::size_t i = 0; i < count_; ++i) slots_[i].models.reserve(config().payload, config().count);
  return {};
}

Result<Outcome> BeastInflight::round(http::Timeline* timeline, Check check) {
  begin(timeline);
  http::Timeline* const timed = timeline != nullptr && config().ticks != nullptr ? timeline : nullptr;

  // Every chain starts before any runs: the N requests are in flight together.
  for (std::size_t i = 0; i < count_; ++i) {
    slots_[i].stamps = {};
    connections_[i].start({.io = &io_,
                           .endpoints = &endpoints_,
                           .request = &request_,
                           .deadline = timeout(),
                           .stamps = timed != nullptr ? &slots_[i].stamps : nullptr,
                           .ticks = config().ticks});
  }
  io_.restart();
  io_.run();

  uint64_t opened = 0;
  for (std::size_t i = 0; i < count_; ++i) opened += connections_[i].opened() ? 1 : 0;
  count_connections(opened);
  for (std::size_t i = 0; i < count_; ++i) {
    if (connections_[i].failed()) [[unlikely]] {
      return failed_on(i, connections_[i].failure_text(authority(config())));
    }
  }
  for (std::size_t i = 0; i < count_; ++i) {
    // Not reached: the io_context stops early only for a chain that failed.
    if (!connections_[i].finished()) [[unlikely]] {
      return failed_on(i, "beast " + authority(config()) + ": the exchange did not end");
    }
  }
  if (timed != nullptr) stamp_round(*timed);

  // All N are in: each body into its own models, the folds folded in connection order.
  auto consumed = fold_round(count_, [this](std::size_t i) { return take_body(i); });
  if (!consumed) [[unlikely]] {
    return std::unexpected(std::move(consumed.error()));
  }
  stamp(&http::Timeline::deserialized);
  return conclude_round(label(), config(), expected(), *consumed, check, count_,
                        [this](std::size_t i) { return slots_[i].models.checksum(config().payload); });
}

Result<uint64_t> BeastInflight::take_body(std::size_t index) {
  BeastConnection& connection = connections_[index];
  const BeastResponse& message = connection.response();
  if (message.result_int() != 200) [[unlikely]] {
    return failed_on(index, "status " + std::to_string(message.result_int()) + " for " + target_);
  }
  // Beast's parser ends a Content-Length body at its length; the check keeps the library peers alike.
  if (auto mismatch = length_mismatch(content_length(message), message.body().size())) [[unlikely]] {
    return failed_on(index, *mismatch);
  }
  const bool closes = !message.keep_alive() || fresh();
  Slot& slot = slots_[index];
  const auto folded = parse_copy(message.body(), slot.body, slot.models);
  connection.release_response();  // `message` is gone from here on
  // The server said it closes (or --connection fresh): the next round connects it again.
  if (closes) close_connections(io_, std::span(&connection, 1));
  if (!folded) [[unlikely]] {
    return failed_on(index, describe(folded.error()));
  }
  return *folded;
}

void BeastInflight::stamp_round(http::Timeline& timeline) const noexcept {
  uint64_t first_byte = UINT64_MAX;
  uint64_t head_parsed = UINT64_MAX;
  uint64_t connected = 0;
  uint64_t request_sent = 0;
  uint64_t body_done = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    const http::Timeline& own = slots_[i].stamps;
    if (own.first_byte != 0) first_byte = std::min(first_byte, own.first_byte);
    if (own.head_parsed != 0) head_parsed = std::min(head_parsed, own.head_parsed);
    connected = std::max(connected, own.connected);
    request_sent = std::max(request_sent, own.request_sent);
    body_done = std::max(body_done, own.body_done);
  }
  timeline.connected = connected;  // 0 when the round connected nothing
  timeline.request_sent = request_sent;
  timeline.first_byte = first_byte == UINT64_MAX ? 0 : first_byte;
  timeline.head_parsed = head_parsed == UINT64_MAX ? 0 : head_parsed;
  timeline.body_done = body_done;
}

}  // namespace

std::unique_ptr<Strategy> make_beast_inflight(const Recipe& recipe) {
  return std::make_unique<BeastInflight>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
