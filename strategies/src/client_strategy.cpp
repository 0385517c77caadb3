#include "client_strategy.hpp"

#include "ringlab/http/sinks.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {

Status CaseEndpoint::open(std::string_view label, const CaseConfig& config, std::string_view target) {
  url_text = "http://" + authority(config);
  url_text += target;
  auto parsed = http::Url::parse(url_text);
  if (!parsed) return fail(label, "URL " + url_text + ": " + parsed.error().message());
  url = *parsed;

  auto made = net::Ring::create();
  if (!made) return fail(label, made.error().message());
  ring = std::move(*made);
  return {};
}

Status ClientStrategy::open_case() {
  // A second setup() starts over: what the first one made goes first, client before ring.
  if (endpoint_.ring) teardown();
  if (auto opened = endpoint_.open(label(), config(), target()); !opened) return opened;

  http::ClientOptions options = client_options();
  if (config().connection == Connection::fresh) options.connection = http::ConnectionPolicy::fresh_per_request;
  options.connect_timeout = config().timeout;
  options.io_timeout = config().timeout;
  options.ticks = config().ticks;
  client_ = std::make_unique<http::Client>(*endpoint_.ring, options);

  if (auto prepared = prepare(); !prepared) return prepared;
  return {};
}

Result<http::ResponseInfo> ClientStrategy::fetch_once(http::BodySink& sink) {
  auto response = client_->request(endpoint_.url, request(), sink, nullptr);
  if (!response) return fail(label(), response.error().message());
  if (response->status != 200) {
    return fail(label(), "status " + std::to_string(response->status) + " for " + endpoint_.url_text);
  }
  return *response;
}

Result<std::size_t> ClientStrategy::probe_body_bytes() {
  base::PaddedBuffer scratch;
  http::PresizedSink scratch_sink(scratch);
  auto response = fetch_once(scratch_sink);
  if (!response) return std::unexpected(response.error());
  return scratch.size();
}

Result<Outcome> ClientStrategy::run_case(http::Timeline* timeline, Check check) {
  check_ = check;
  if (auto ready = before_request(); !ready) return std::unexpected(ready.error());
  const unsigned requests = requests_per_run();
  for (unsigned i = 0; i < requests; ++i) {
    if (i > 0) {
      if (auto ready = before_request(); !ready) return std::unexpected(ready.error());
    }
    // Several requests per run: the phase timeline follows the last one.
    http::BodySink& into = sink();
    const uint64_t copied_before = into.copied_bytes();
    auto response = client_->request(endpoint_.url, request(), into, i + 1 == requests ? timeline : nullptr);
    if (!response) [[unlikely]] {
      return fail(label(), response.error().message());
    }
    copies_.received(response->body_bytes, copied_before, into.copied_bytes());
    zero_copy_sends_ += response->zero_copy.sends;
    zero_copy_copied_ += response->zero_copy.copied_sends;
    if (response->status != 200) [[unlikely]] {
      return fail(label(), "status " + std::to_string(response->status) + " for " + endpoint_.url_text);
    }
    if (auto taken = after_response(); !taken) [[unlikely]] return std::unexpected(taken.error());
  }
  if (requests == 0 && timeline != nullptr && config().ticks != nullptr) {
    // No request: the timeline is the parse alone (start = body done = now).
    timeline->start = timeline->body_done = config().ticks();
  }
  const auto consumed = deserialize();
  if (timeline != nullptr && config().ticks != nullptr) timeline->deserialized = config().ticks();
  return conclude(label(), config(), expected(), consumed, check, [this] { return checksum(); });
}

IoCounters ring_counters(const net::Ring* ring, uint64_t connections_opened) noexcept {
  IoCounters counters;
  if (ring != nullptr) {
    const net::RingStats& stats = ring->stats();
    counters.ring_enters = stats.enters;
    counters.sqes_submitted = stats.sqes_submitted;
    counters.cqes_reaped = stats.cqes_reaped;
    counters.syscalls = stats.enters;
  }
  counters.connections_opened = connections_opened;
  return counters;
}

IoCounters ClientStrategy::io_counters() const {
  IoCounters counters = ring_counters(endpoint_.ring.get(), client_ ? client_->stats().connections_opened : 0);
  counters.zero_copy_sends = zero_copy_sends_;
  counters.zero_copy_copied = zero_copy_copied_;
  return copies_.into(counters);
}

void ClientStrategy::close_case() {
  release();
  client_.reset();
  endpoint_.ring.reset();
}

}  // namespace ringlab::strategies::detail
