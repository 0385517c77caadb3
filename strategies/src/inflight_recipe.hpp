#pragma once
// InflightRecipeStrategy: a recipe of ringlab's own stack (recipe.hpp) with N requests in flight
// (CaseConfig::inflight): N kept-alive connections on one ring, driven by http::InflightClient, one GET
// on each per run(). Each connection has its own BodySlot (recipe_strategy.hpp: the row's sink and models,
// the same code as the row's one-request strategy), so that the row means the same thing at any N.
//
// One run() is one round: every request sent, every response received whole into its connection's
// slot (InflightClient::round), then the N bodies parsed one after another and consumed. The
// consumption fold of the round folds the N per-connection folds in connection order (constant from
// round to round, as bench checks). A verified run checksums every connection's records and requires
// each to equal the generator's.
//
// Which rows take part (registry.cpp sets `inflight`): string_copy, presized, views, provided_buffers and
// provided_bundles through InflightRecipeStrategy or its shared form below; fixed_buffers too (below);
// and the streaming rows (streaming, streaming_array, streaming_array_fresh) through InflightStreamingStrategy
// (streaming_sink.hpp), which derives from InflightFrame with a streaming sink per connection instead
// of a BodySlot. What the row's client fields mean here: the receive mode (own buffer, or one
// provided-buffer ring shared by the N connections) and the query; a row that needs more (fresh
// connections, one enter per request, a send mode, a POST, several requests per op) has nothing to mean
// in a round of N GETs and is not offered with N > 1 (registry.cpp gives it no make_inflight).
//
// fixed_buffers: N buffers in one registration with the ring (a ring has one at a time), buffer i
// being connection i's: its slot's PresizedSink offers it as the receive window with fixed index i, and
// InflightClient's own_buffer mode then receives the body by READ_FIXED, as http::Client does for the
// one-request row. Each buffer is sized as that row sizes its one: from one real body, fetched at setup
// on a connection of its own (probe_body_bytes), rounded up to whole pages. Registered once; never
// grown: a larger body later is Errc::body_too_large naming its connection, as the one-request row
// fails (re-registering would unpin and pin every buffer of the ring in the middle of a measurement).
//
// Memory held while the connections wait (HeldMemory): a slot per connection keeps what its row keeps,
// so presized and views hold a padded buffer of the largest body seen and models of its records, per
// connection; fixed_buffers holds its registered buffer per connection, counted as body bytes (the
// client's receive bytes are only its receivers' own head buffers). A row that receives from the shared
// provided-buffer ring (provided_buffers, provided_bundles) runs as InflightSharedStrategy instead, so
// that an idle connection holds nothing but its share of the ring:
// the bytes a round receives still need a contiguous padded body per connection until that body is
// parsed (the N responses arrive interleaved, and simdjson parses contiguous padded input), but that
// buffer is made at begin() to Content-Length (one allocation per response, no regrowth) and freed
// right after its parse; the models are one set, shared by the N connections, since one thread parses
// the bodies one after another. The price is that allocation per response (and the page faults of
// memory the allocator returned to the kernel in between); what it buys is memory that does not grow
// with N times the largest body.
//
// Connections: kept alive between rounds; with --connection fresh (one request in flight only: bench
// refuses it with more) the client closes its connection after each round and the next round connects
// again, as a fresh connection per request does in the one-request client.
//
// Timeline: a round has no single request's phases. run() stamps `start` and `head_parsed` before the
// round, `body_done` when every response is in and `deserialized` after the N parses: bench's phase
// table then shows the round's network part as "body" and the N parses as "deserialize" (for the
// streaming rows, which parse while the round receives, nearly everything is "body").
//
// Errors: as ClientStrategy's, prefixed with the case label; InflightClient's errors name the
// connection ("connection 3 of 64: ..."), and so do a sink's errors (a body larger than a registered
// buffer, a streaming sink's parse error), which fail that connection's response. After an error the
// client's failed connections stay closed, so the next run() connects all N again; nothing is retried.
//
// Threads and lifetime: one thread (the ring's). The strategy keeps a reference to its row, which is
// constant data of the program.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "case_strategy.hpp"
#include "client_strategy.hpp"
#include "recipe.hpp"
#include "recipe_strategy.hpp"
#include "ringlab/http/inflight_client.hpp"
#include "ringlab/net/fixed_buffers.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::strategies::detail {

// What every many-in-flight strategy of ringlab's stack does whatever its sinks and models: the ring, the
// client, the round.
class InflightFrame : public CaseStrategy {
 public:
  explicit InflightFrame(const Recipe& recipe) : CaseStrategy(recipe.name), recipe_(&recipe) {}
  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override {
    return missing_feature(*recipe_, features);
  }
  [[nodiscard]] IoCounters io_counters() const override;
  // The N slots' bodies and models, and the client's receive memory (its receivers' own buffers, or the
  // one provided-buffer ring), for the N connections of the case.
  [[nodiscard]] HeldMemory held_memory() const override;

 protected:
  // The N slots' sinks, in connection order; made by open_slots(), called once the ring exists and
  // before the N connections are opened.
  virtual Status open_slots(std::size_t connections) = 0;
  // At the start of every round; `check` is the round's (a streaming sink checksums as it parses).
  virtual void before_round(Check check) = 0;
  // Parses slot `index`'s body; its consumption fold.
  virtual json::Result<uint64_t> parse_slot(std::size_t index) = 0;
  virtual uint64_t checksum_slot(std::size_t index) = 0;
  virtual void close_slots() = 0;
  // After slot `index`'s body was parsed, consumed and (verified rounds) checksummed.
  virtual void parsed_slot(std::size_t index) { (void)index; }
  // What the slots keep now, bodies and models (HeldMemory's fields).
  [[nodiscard]] virtual std::size_t held_body_bytes() const = 0;
  [[nodiscard]] virtual std::size_t held_model_bytes() const = 0;
  // What `slots` keep together: `held(slot)`, bytes, summed over them.
  template <class Slots, class Held>
  [[nodiscard]] static std::size_t held_by(const Slots& slots, Held&& held) {
    std::size_t bytes = 0;
    for (const auto& slot : slots) bytes += held(slot);
    return bytes;
  }

  [[nodiscard]] net::Ring& ring() noexcept { return *endpoint_.ring; }
  // Bytes of one body as the server sends it for the case: one GET on a connection of its own (closed
  // after), outside the measured rounds; what open_slots() sizes registered memory for.
  Result<std::size_t> probe_body_bytes();
  // Body bytes copied outside the sinks, before a parse: counted with the sinks' in io_counters().
  void count_copied(std::size_t bytes) noexcept { copies_.copied(bytes); }
  std::vector<http::BodySink*> sinks_;

 private:
  Status open_case() final;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) final;
  void close_case() final;
  // What the N sinks copied so far, together (BodySink::copied_bytes).
  [[nodiscard]] uint64_t sinks_copied() const noexcept;

  const Recipe* recipe_;
  std::string target_;
  CaseEndpoint endpoint_;  // opened by open_case() only
  std::unique_ptr<http::InflightClient> client_;
  BodyCopies copies_;  // of the rounds of run(), not of the probe
};

template <Sink kSink, Models kModels>
class InflightRecipeStrategy final : public InflightFrame {
  static_assert(kModels == Models::fresh_owning || kModels == Models::reused_owning || kModels == Models::views,
                "the many-in-flight rows parse whole records");

 public:
  using InflightFrame::InflightFrame;
  ~InflightRecipeStrategy() override { close_slots(); }

 private:
  Status open_slots(std::size_t connections) override {
    close_slots();
    if constexpr (kSink == Sink::fixed_buffers) {
      // N buffers in one registration (a ring has one at a time), each the size the one-request row
      // gives its one: from one real body, probed now. Registered once; never grown (recipe_strategy.hpp).
      auto body_bytes = probe_body_bytes();
      if (!body_bytes) return std::unexpected(body_bytes.error());
      const std::size_t bytes = fixed_buffer_bytes(*body_bytes);
      auto buffers = net::FixedBuffers::create(ring(), static_cast<unsigned>(connections), bytes);
      if (!buffers) {
        // Pinned pages count against RLIMIT_MEMLOCK unless the process may lock memory: N large bodies
        // can pass it where one does not.
        const bool memlock = buffers.error().code == ENOMEM;
        return fail(label(), std::to_string(connections) + " registered buffers of " + std::to_string(bytes) +
                                 " bytes: " + buffers.error().message() +
                                 (memlock ? " (pinned memory counts against RLIMIT_MEMLOCK)" : ""));
      }
      registered_ = std::move(*buffers);
    }
    for (std::size_t i = 0; i < connections; ++i) {
      slots_.push_back(std::make_unique<BodySlot<kSink, kModels>>());
      if constexpr (kSink == Sink::fixed_buffers) {
        slots_.back()->landing.land_in(*registered_, static_cast<unsigned>(i));  // buffer index = connection
      }
      slots_.back()->reserve(config().payload, config().count);
      sinks_.push_back(&slots_.back()->sink());
    }
    return {};
  }
  void before_round(Check) override {
    for (auto& slot : slots_) slot->before_request();
  }
  json::Result<uint64_t> parse_slot(std::size_t index) override {
    BodySlot<kSink, kModels>& slot = *slots_[index];
    const uint64_t copied = slot.parse_copied;
    auto consumed = slot.parse(parser(), config().payload);
    count_copied(slot.parse_copied - copied);
    return consumed;
  }
  uint64_t checksum_slot(std::size_t index) override { return slots_[index]->checksum(config().payload); }
  void close_slots() override {
    sinks_.clear();
    slots_.clear();
    registered_.reset();  // after the slots that land in it; unregisters, before the ring goes
  }
  // fixed_buffers: the registered buffers (a slot's held body is its buffer, idle or not).
  [[nodiscard]] std::size_t held_body_bytes() const override {
    return held_by(slots_, [](const auto& slot) { return slot->held_body_bytes(); });
  }
  [[nodiscard]] std::size_t held_model_bytes() const override {
    return held_by(slots_, [](const auto& slot) { return slot->held_model_bytes(); });
  }

  // Each slot on the heap: a sink refers to its own body, so a slot never moves.
  std::vector<std::unique_ptr<BodySlot<kSink, kModels>>> slots_;
  std::unique_ptr<net::FixedBuffers> registered_;  // fixed_buffers: buffer i is connection i's
};

// The shared form (see "Memory held" above): per connection a padded body made to Content-Length at
// begin() and freed after its parse; one set of models for all connections.
template <Models kModels>
class InflightSharedStrategy final : public InflightFrame {
  static_assert(kModels == Models::reused_owning || kModels == Models::views,
                "the shared form parses into models reused in place");

 public:
  using InflightFrame::InflightFrame;
  ~InflightSharedStrategy() override { close_slots(); }

 private:
  // A connection's body and its sink; on the heap, so that the sink's reference never moves.
  struct Body {
    base::PaddedBuffer buffer;
    http::PresizedSink sink{buffer};
  };

  Status open_slots(std::size_t connections) override {
    close_slots();
    for (std::size_t i = 0; i < connections; ++i) {
      bodies_.push_back(std::make_unique<Body>());
      sinks_.push_back(&bodies_.back()->sink);
    }
    models_.reserve(config().payload, config().count);
    return {};
  }
  void before_round(Check) override {}
  json::Result<uint64_t> parse_slot(std::size_t index) override {
    return models_.parse(config().payload, parser(), json::padded_view(bodies_[index]->buffer));
  }
  uint64_t checksum_slot(std::size_t) override { return models_.checksum(config().payload); }
  // The body's memory goes back now (viewing models point into it: they are not read again until the
  // next parse overwrites them).
  void parsed_slot(std::size_t index) override { bodies_[index]->buffer = base::PaddedBuffer(); }
  void close_slots() override {
    sinks_.clear();
    bodies_.clear();
  }
  [[nodiscard]] std::size_t held_body_bytes() const override {
    return held_by(bodies_, [](const auto& body) { return held_bytes(body->buffer); });
  }
  [[nodiscard]] std::size_t held_model_bytes() const override { return models_.capacity_bytes(); }

  std::vector<std::unique_ptr<Body>> bodies_;
  std::conditional_t<kModels == Models::views, ViewModels, OwningModels> models_;
};

// The row's many-in-flight strategy: the shared form for a row that receives from the provided-buffer
// ring into a presized body, a slot per connection otherwise.
template <Sink kSink, Models kModels>
[[nodiscard]] std::unique_ptr<Strategy> make_inflight_recipe_strategy(const Recipe& recipe) {
  if constexpr (kSink == Sink::presized_buffer && (kModels == Models::reused_owning || kModels == Models::views)) {
    if (http::receives_from_ring(recipe.client.receive)) {
      return std::make_unique<InflightSharedStrategy<kModels>>(recipe);
    }
  }
  return std::make_unique<InflightRecipeStrategy<kSink, kModels>>(recipe);
}

}  // namespace ringlab::strategies::detail
