#include "inflight_recipe.hpp"

#include <string>

#include "client_strategy.hpp"
#include "common.hpp"

namespace ringlab::strategies::detail {

Status InflightFrame::open_case() {
  // A second setup() starts over: what the first one made goes first, client before ring.
  close_case();
  target_ = get_target(config(), recipe_->client.query);
  if (auto opened = endpoint_.open(label(), config(), target_); !opened) return opened;
  if (auto reason = missing_feature(*recipe_, endpoint_.ring->features())) return fail(label(), *reason);

  http::InflightOptions options;
  options.receive = recipe_->client.receive;
  const RingGeometry ring = ring_for(recipe_->client, config().ring);
  options.provided_buffer_count = ring.buffers;
  options.provided_buffer_bytes = ring.buffer_bytes;
  options.ring_per_connection = recipe_->client.ring_per_connection;
  if (options.ring_per_connection) options.provided_buffer_bytes = own_ring_bytes(ring.buffer_bytes, config().inflight);
  options.connect_timeout = config().timeout;
  options.io_timeout = config().timeout;
  client_ = std::make_unique<http::InflightClient>(*endpoint_.ring, options);
  if (auto opened = open_slots(config().inflight); !opened) return opened;
  if (auto connected = client_->connect(endpoint_.url, config().inflight); !connected) {
    return fail(label(), connected.error().message());
  }
  return {};
}

Result<Outcome> InflightFrame::run_case(http::Timeline* timeline, Check check) {
  const http::TickSource ticks = config().ticks;
  const bool stamping = timeline != nullptr && ticks != nullptr;
  before_round(check);
  if (stamping) timeline->start = timeline->head_parsed = ticks();
  if (client_->open_connections() == 0) {
    // Every connection failed in an earlier round: connect them all again (what the others do after an
    // error: the next request opens a new connection).
    if (auto connected = client_->connect(endpoint_.url, config().inflight); !connected) {
      return fail(label(), connected.error().message());
    }
  }
  const uint64_t copied_before = sinks_copied();
  auto round = client_->round(target_, sinks_);
  if (!round) [[unlikely]] {
    // A failed connection stays closed: the next run() reconnects them all.
    client_->close();
    return fail(label(), round.error().message());
  }
  copies_.received(round->body_bytes, copied_before, sinks_copied());
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    if (const int status = client_->status(i); status != 200) [[unlikely]] {
      return fail_on_connection(label(), i, sinks_.size(), "status " + std::to_string(status) + " for " + target_);
    }
  }
  // --connection fresh (one request in flight): a new connection per request, closed once its response is
  // in (the client closes first: its side waits in TIME_WAIT); the next round connects again, above.
  if (config().connection == Connection::fresh) client_->close();
  if (stamping) timeline->body_done = ticks();
  // The N folds folded in connection order: the same at every round, since every body is the same. A
  // verified round checksums each connection's records right after their parse, while they are still
  // there (the shared form parses every body into the same models); the stamp then also covers the
  // checksums, which only verified rounds (clock stopped) compute.
  uint64_t folded = 0;
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    const json::Result<uint64_t> consumed = parse_slot(i);
    if (!consumed) [[unlikely]] return fail(label(), describe(consumed.error()));
    folded = fold_connection(folded, *consumed);
    if (check == Check::verify) {
      if (const uint64_t checksum = checksum_slot(i); checksum != expected()) [[unlikely]] {
        return fail_on_connection(label(), i, sinks_.size(), checksum_mismatch(checksum, expected(), config().count));
      }
    }
    parsed_slot(i);
  }
  if (stamping) timeline->deserialized = ticks();
  return Outcome{folded, check == Check::verify ? expected() : 0};
}

Result<std::size_t> InflightFrame::probe_body_bytes() {
  http::InflightOptions options;
  options.connect_timeout = config().timeout;
  options.io_timeout = config().timeout;
  http::InflightClient probe(*endpoint_.ring, options);
  if (auto connected = probe.connect(endpoint_.url, 1); !connected) return fail(label(), connected.error().message());
  base::PaddedBuffer scratch;
  http::PresizedSink scratch_sink(scratch);
  http::BodySink* const sinks[] = {&scratch_sink};
  if (auto round = probe.round(target_, sinks); !round) return fail(label(), round.error().message());
  if (const int status = probe.status(0); status != 200) {
    return fail(label(), "status " + std::to_string(status) + " for " + target_ + " (the body probed at setup)");
  }
  return scratch.size();
}

IoCounters InflightFrame::io_counters() const {
  return copies_.into(ring_counters(endpoint_.ring.get(), client_ ? client_->stats().connections_opened : 0));
}

uint64_t InflightFrame::sinks_copied() const noexcept {
  uint64_t copied = 0;
  for (const http::BodySink* sink : sinks_) copied += sink->copied_bytes();
  return copied;
}

HeldMemory InflightFrame::held_memory() const {
  if (!client_) return {};
  return HeldMemory{.connections = config().inflight,
                    .body_bytes = held_body_bytes(),
                    .model_bytes = held_model_bytes(),
                    .receive_bytes = client_->receive_memory_bytes()};
}

void InflightFrame::close_case() {
  client_.reset();  // before the slots its sinks point into, and before the ring
  close_slots();
  endpoint_.ring.reset();
}

}  // namespace ringlab::strategies::detail
