#pragma once
// ClientStrategy: the frame of every strategy that goes through ringlab's own stack (net::Ring +
// http::Client). A strategy derived from it says only what makes it different:
//   client_options()   connection policy, receive mode (provided buffers), receive buffer size;
//   target()           the request target ("/weather?count=N", "&chunked=1", "/echo");
//   request()          method, body and send mode (POST strategies);
//   prepare()          once, after the ring and the client exist (registered buffers);
//   before_request()   at the start of every run(), before the request is sent (arena resets);
//                      verifying() says whether this run is a verified one (streaming sinks, which
//                      drop their records while the body arrives, checksum them as they go);
//   sink()             where the body lands;
//   deserialize()      parse the body the sink holds; return the consumption fold (json/consume.hpp);
//   checksum()         the full checksum of the records the last deserialize() produced (verified runs
//                      only, clock stopped);
//   requests_per_run() 1 by default; 0 for floor_parse (the body is fetched once by prepare() and run()
//                      only parses); more for the proxy rows (the cycles of an op): before_request() runs
//                      before each, after_response() after each, deserialize() once after the last.
// Everything else is the same for all of them, so that a difference in the table is a difference in
// those hooks: one Ring (default options) and one Client per strategy, the timeouts of the case, the
// status check, the checksum check against the generator's, the timeline's `deserialized` stamp, the
// counters.
//
// Errors: every error is prefixed with the case label ("presized weather 1000: truncated
// 127.0.0.1:8080: ..."). The client closes the connection involved; the next run() connects again.
//
// Lifetime: the Ring and Client live from setup() to teardown(). teardown() calls release() first, so
// that a derived strategy frees what it registered with the ring (fixed buffers) before the ring goes.
#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "case_strategy.hpp"
#include "common.hpp"
#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

class ClientStrategy : public CaseStrategy {
 public:
  using CaseStrategy::CaseStrategy;
  [[nodiscard]] IoCounters io_counters() const override;
  void drop_connection() final {
    if (client_) client_->close_idle();
  }
  void teardown() final;

 protected:
  [[nodiscard]] virtual http::ClientOptions client_options() const { return {}; }
  [[nodiscard]] virtual std::string target() const { return get_target(config()); }
  [[nodiscard]] virtual http::Request request() const { return {}; }
  virtual Status prepare() { return {}; }
  virtual Status before_request() { return {}; }
  virtual http::BodySink& sink() = 0;
  virtual json::Result<uint64_t> deserialize() = 0;
  virtual uint64_t checksum() = 0;
  [[nodiscard]] virtual unsigned requests_per_run() const { return 1; }
  virtual Status after_response() { return {}; }
  virtual void release() {}

  [[nodiscard]] net::Ring& ring() noexcept { return *ring_; }
  [[nodiscard]] http::Client& client() noexcept { return *client_; }
  [[nodiscard]] json::Parser& parser() noexcept { return parser_; }
  // True during a run(…, Check::verify): checksum() will be called after deserialize().
  [[nodiscard]] bool verifying() const noexcept { return check_ == Check::verify; }
  // One request outside the timed runs (prepare() uses it to learn a body's size): body into `sink`,
  // no checksum.
  Result<http::ResponseInfo> fetch_once(http::BodySink& sink);
  // Bytes of one body as the server sends it (fetch_once into a scratch buffer): what strategies that
  // size memory up front size it for.
  Result<std::size_t> probe_body_bytes();

 private:
  Status open_case() final;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) final;

  std::string url_text_;  // url_ points into it: never changed after setup()
  http::Url url_;
  Check check_ = Check::consume;  // of the run() in progress
  std::unique_ptr<net::Ring> ring_;
  std::unique_ptr<http::Client> client_;
  json::Parser parser_;
  uint64_t zero_copy_sends_ = 0;
  uint64_t zero_copy_copied_ = 0;
};

// Fresh owning models at every request, as .NET's deserializers build them: the previous request's
// models are freed when the next request starts, and the models are built anew from the body (the
// vector grows, long strings are allocated one by one). The body lands through `Sink` in a `Body`
// (std::string or base::PaddedBuffer); kFreshBody frees it too, so that every request grows it anew
// from nothing. A std::string body is copied once into a simdjson padded string to be parsed (it has
// no padding); a PaddedBuffer is parsed in place.
//   string_copy      std::string, StringSink (appended, regrown), freed
//   exact_string     std::string, a sink that reserves Content-Length at the head, freed
//   buffered_stream  PaddedBuffer, GrowingSink (doubling), freed
//   presized_fresh   PaddedBuffer, PresizedSink (Content-Length, in place), kept: only the models are new
template <class Body, class Sink, bool kFreshBody>
class FreshModelsStrategy final : public ClientStrategy {
 public:
  using ClientStrategy::ClientStrategy;

 private:
  Status before_request() override {
    if constexpr (kFreshBody && std::is_same_v<Body, std::string>) {
      // Swap, not assignment: libstdc++'s move assignment from an empty, small-string temporary copies
      // its characters and keeps the old buffer, so the string would never grow again.
      std::string().swap(body_);
    } else if constexpr (kFreshBody) {
      body_ = Body();
    }
    models_.reset();
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    if constexpr (std::is_same_v<Body, std::string>) {
      const simdjson::padded_string padded(body_);
      return models_.emplace().parse(config().payload, parser(), padded);
    } else {
      return models_.emplace().parse(config().payload, parser(), json::padded_view(body_));
    }
  }
  uint64_t checksum() override { return models_->checksum(config().payload); }

  Body body_;
  Sink sink_{body_};
  std::optional<OwningModels> models_;  // fresh at every request; kept until the next one starts
};

// The body lands in one padded buffer kept across requests (PresizedSink: received in place, grown only
// for a body larger than any before) and is parsed in place into `Models` overwritten at every
// request: owning models for presized, chunked, provided_buffers and fresh_connection (each with
// another target, receive mode or connection policy), viewing models for views. A subclass that
// overrides prepare() calls this one.
template <class Models>
class PresizedStrategy : public ClientStrategy {
 public:
  using ClientStrategy::ClientStrategy;

 protected:
  Status prepare() override {
    models_.reserve(config().payload, config().count);
    return {};
  }

 private:
  http::BodySink& sink() final { return sink_; }
  json::Result<uint64_t> deserialize() final {
    return models_.parse(config().payload, parser(), json::padded_view(body_));
  }
  uint64_t checksum() final { return models_.checksum(config().payload); }

  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  Models models_;  // viewing models point into body_: valid until the next request
};
using PresizedOwningStrategy = PresizedStrategy<OwningModels>;

}  // namespace ringlab::strategies::detail
