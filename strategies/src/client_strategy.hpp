#pragma once
// ClientStrategy: the frame of every strategy that goes through ringlab's own stack (net::Ring +
// http::Client). RecipeStrategy (recipe_strategy.hpp) derives from it to run the rows of the table that
// are recipes; a strategy with code of its own derives from it too. Either says only what makes it
// different:
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
// The JSON parser (parser()) is CaseStrategy's: the strategy's own for a pooled client, the thread's,
// lent from setup() to teardown(), for a fresh one (case_strategy.hpp).
#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "case_strategy.hpp"
#include "common.hpp"
#include "recipe.hpp"
#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

// Where a case of ringlab's stack sends its requests and the ring they go through, opened by the setup()
// of both frames (ClientStrategy, InflightFrame): the case's URL, as text and parsed, and the io_uring ring.
// Lifetime: `url` points into `url_text`, so an endpoint is opened where it stays and is neither copied
// nor moved; whatever uses the ring (the client) goes before the ring is reset.
struct CaseEndpoint {
  CaseEndpoint() = default;
  CaseEndpoint(const CaseEndpoint&) = delete;
  CaseEndpoint& operator=(const CaseEndpoint&) = delete;

  // "http://host:port" and `target` for the case's server, parsed into `url`, then a new ring. Errors:
  // "label: URL <text>: why" when the URL does not parse, "label: why" when the ring cannot be made (no
  // ring is made after a URL that does not parse).
  Status open(std::string_view label, const CaseConfig& config, std::string_view target);

  std::string url_text;  // "http://127.0.0.1:8080/weather?count=10"; url points into it
  http::Url url;
  std::unique_ptr<net::Ring> ring;
};

class ClientStrategy : public CaseStrategy {
 public:
  using CaseStrategy::CaseStrategy;
  [[nodiscard]] IoCounters io_counters() const override;
  void drop_connection() final {
    if (client_) client_->close_idle();
  }

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

  [[nodiscard]] net::Ring& ring() noexcept { return *endpoint_.ring; }
  [[nodiscard]] http::Client& client() noexcept { return *client_; }
  // True during a run(…, Check::verify): checksum() will be called after deserialize().
  [[nodiscard]] bool verifying() const noexcept { return check_ == Check::verify; }
  // One request outside the timed runs (prepare() uses it to learn a body's size): body into `sink`,
  // no checksum.
  Result<http::ResponseInfo> fetch_once(http::BodySink& sink);
  // Body bytes the strategy copied outside its sink, before the parse (a string's padded copy): counted
  // with the sink's in io_counters().
  void count_copied(std::size_t bytes) noexcept { copies_.copied(bytes); }
  // Bytes of one body as the server sends it (fetch_once into a scratch buffer): what strategies that
  // size memory up front size it for.
  Result<std::size_t> probe_body_bytes();

 private:
  Status open_case() final;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) final;
  void close_case() final;

  CaseEndpoint endpoint_;  // opened by setup() only
  Check check_ = Check::consume;  // of the run() in progress
  std::unique_ptr<http::Client> client_;
  uint64_t zero_copy_sends_ = 0;
  uint64_t zero_copy_copied_ = 0;
  BodyCopies copies_;  // of the requests of run(), not of fetch_once()
};

// The counters of a strategy on ringlab's stack: its ring's enters (its system calls on the request path),
// SQEs and CQEs, and the connections its client opened; a null ring counts nothing of the ring.
[[nodiscard]] IoCounters ring_counters(const net::Ring* ring, uint64_t connections_opened) noexcept;

// The ClientStrategy rows with code of their own (registry.cpp names them; each maker gets its row):
//   floors.cpp   floor_transfer, floor_parse: the physical limits, nothing or no request measured
//   proxy.cpp    the four proxy rows: N requests per op, each answer compared with what it must be
// The rows of the generic client are RecipeStrategy's (recipe_strategy.hpp); streaming's, the memory
// resources' and the JSON libraries' are declared with their classes.
std::unique_ptr<Strategy> make_floor_transfer(const Recipe& recipe);
std::unique_ptr<Strategy> make_floor_parse(const Recipe& recipe);
std::unique_ptr<Strategy> make_proxy_cycles(const Recipe& recipe);

}  // namespace ringlab::strategies::detail
