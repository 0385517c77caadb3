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
// What the row's client fields mean here: the receive mode (own buffer, or one provided-buffer ring
// shared by the N connections); a row that needs more (fresh connections, one enter per request, a
// send mode, registered buffers) is not offered with N > 1 (registry.cpp gives it no make_inflight).
//
// Memory held while the connections wait (HeldMemory): a slot per connection keeps what its row keeps,
// so presized and views hold a padded buffer of the largest body seen and models of its records, per
// connection. A row that receives from the shared provided-buffer ring (provided_buffers) runs as
// InflightSharedStrategy instead, so that an idle connection holds nothing but its share of the ring:
// the bytes a round receives still need a contiguous padded body per connection until that body is
// parsed (the N responses arrive interleaved, and simdjson parses contiguous padded input), but that
// buffer is made at begin() to Content-Length (one allocation per response, no regrowth) and freed
// right after its parse; the models are one set, shared by the N connections, since one thread parses
// the bodies one after another. The price is that allocation per response (and the page faults of
// memory the allocator returned to the kernel in between); what it buys is memory that does not grow
// with N times the largest body.
//
// Timeline: a round has no single request's phases. run() stamps `start` and `head_parsed` before the
// round, `body_done` when every response is in and `deserialized` after the N parses: bench's phase
// table then shows the round's network part as "body" and the N parses as "deserialize".
//
// Errors: as ClientStrategy's, prefixed with the case label; InflightClient's errors name the
// connection ("connection 3 of 64: ..."). After an error the client's failed connections stay closed,
// so the next run() connects all N again; nothing is retried.
//
// Threads and lifetime: one thread (the ring's). The strategy keeps a reference to its row, which is
// constant data of the program.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "case_strategy.hpp"
#include "recipe.hpp"
#include "recipe_strategy.hpp"
#include "ringlab/http/inflight_client.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::strategies::detail {

// What every InflightRecipeStrategy does whatever its sink and models: the ring, the client, the round.
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
  // The N slots' sinks, in connection order; made by open_slots().
  virtual Status open_slots(std::size_t connections) = 0;
  virtual void before_round() = 0;
  // Parses slot `index`'s body; its consumption fold.
  virtual json::Result<uint64_t> parse_slot(std::size_t index) = 0;
  virtual uint64_t checksum_slot(std::size_t index) = 0;
  virtual void close_slots() = 0;
  // After slot `index`'s body was parsed, consumed and (verified rounds) checksummed.
  virtual void parsed_slot(std::size_t index) { (void)index; }
  // What the slots keep now, bodies and models (HeldMemory's fields).
  [[nodiscard]] virtual std::size_t held_body_bytes() const = 0;
  [[nodiscard]] virtual std::size_t held_model_bytes() const = 0;

  [[nodiscard]] json::Parser& parser() noexcept { return parser_; }
  std::vector<http::BodySink*> sinks_;

 private:
  Status open_case() final;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) final;
  void close_case() final;

  const Recipe* recipe_;
  std::string target_;
  std::string url_text_;  // url_ points into it: set by open_case() only
  http::Url url_;
  std::unique_ptr<net::Ring> ring_;
  std::unique_ptr<http::InflightClient> client_;
  json::Parser parser_;
};

template <Sink kSink, Models kModels>
class InflightRecipeStrategy final : public InflightFrame {
  static_assert(kSink != Sink::fixed_buffers, "registered buffers: one per connection is not built");
  static_assert(kModels == Models::fresh_owning || kModels == Models::reused_owning || kModels == Models::views,
                "the many-in-flight rows parse whole records");

 public:
  using InflightFrame::InflightFrame;
  ~InflightRecipeStrategy() override { close_slots(); }

 private:
  Status open_slots(std::size_t connections) override {
    slots_.clear();
    sinks_.clear();
    for (std::size_t i = 0; i < connections; ++i) {
      slots_.push_back(std::make_unique<BodySlot<kSink, kModels>>());
      slots_.back()->reserve(config().payload, config().count);
      sinks_.push_back(&slots_.back()->sink());
    }
    return {};
  }
  void before_round() override {
    for (auto& slot : slots_) slot->before_request();
  }
  json::Result<uint64_t> parse_slot(std::size_t index) override {
    return slots_[index]->parse(parser(), config().payload);
  }
  uint64_t checksum_slot(std::size_t index) override { return slots_[index]->checksum(config().payload); }
  void close_slots() override {
    sinks_.clear();
    slots_.clear();
  }
  [[nodiscard]] std::size_t held_body_bytes() const override {
    std::size_t bytes = 0;
    for (const auto& slot : slots_) bytes += slot->held_body_bytes();
    return bytes;
  }
  [[nodiscard]] std::size_t held_model_bytes() const override {
    std::size_t bytes = 0;
    for (const auto& slot : slots_) bytes += slot->held_model_bytes();
    return bytes;
  }

  // Each slot on the heap: a sink refers to its own body, so a slot never moves.
  std::vector<std::unique_ptr<BodySlot<kSink, kModels>>> slots_;
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
  void before_round() override {}
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
    std::size_t bytes = 0;
    for (const auto& body : bodies_) {
      if (body->buffer.capacity() != 0) bytes += body->buffer.capacity() + base::kPadding;
    }
    return bytes;
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
    if (recipe.client.receive == http::ReceiveMode::provided_buffers) {
      return std::make_unique<InflightSharedStrategy<kModels>>(recipe);
    }
  }
  return std::make_unique<InflightRecipeStrategy<kSink, kModels>>(recipe);
}

}  // namespace ringlab::strategies::detail
