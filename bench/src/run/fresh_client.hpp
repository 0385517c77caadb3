#pragma once
// FreshClient: the strategy the runner measures a case with under --client fresh (CaseConfig::client
// fresh). It wraps the case's Descriptor and, at every run(), makes a new strategy (Descriptor::make),
// sets it up, runs its one request and tears it down: inside the timed op, so the whole client (ring or
// event loop, client object, pool, buffers, connection) is built and torn down per request, as a new
// HttpClient per request (jos's Version 0/1, HttpWebRequest, WebRequest/WebClient on .NET Core) is.
// What teardown() leaves of the strategy (the records the op produced, its body buffer, the object
// itself) is destroyed at the start of the next run(), still inside a timed op, one client per op: the
// records an op returns outlive its client, as the list a .NET request returns outlives the disposed
// HttpClient until the collector takes it, and as a pooled client's fresh records live until its next
// request. Destroyed at the end of its own op instead, the client freed every block above glibc's heap
// top at once, glibc gave the top back to the kernel (its trim threshold), and every op page-faulted its
// body buffers in again: 6,274 page faults per op at 10,000 /profiles records in seed mode, against 0 for the
// pooled client of the same row. Generic: ringlab's stack and every peer go through it unchanged. The JSON parser is not
// rebuilt: every strategy made here borrows the parser the runner's thread keeps (its buffers sized by the
// ops before) for its one request and gives it back at teardown (strategies/src/case_strategy.hpp), as
// .NET keeps its serializer per process while a new HttpClient is built per request.
//
// What each op then holds besides the request: what the strategy's setup() does with
// CaseConfig::client fresh, which is building only (strategy.hpp): the case label, the URL or target,
// the request head, for POST rows the request body serialized from the records (json/'s serializer; a
// seed's client serialized per request too), the models reserved for the case's record count, the
// library's global set-up where a library has one (curl_global_init, once per process, never undone).
// What it does not hold: no verified request (the runner's verified ops are fresh clients too, outside
// the clock), no sizing request (strategies that need one skip the case: common.hpp's no_fresh_client),
// no read of /proc, no growth of the JSON parser once an op has parsed a body of the case's size. The
// thread pools a library keeps per process (cpprest's) are not rebuilt per client.
//
// Checks: a verified op is a fresh client whose one request runs with Check::verify, so the checksum gate
// stays as it is. Counters: io_counters() sums those of every strategy it made, read just before each is
// torn down (the connections it opened, its ring's enters...). Allocations and page faults are read by
// the runner around the timed ops, so they cover building and destroying the client.
//
// Errors: a strategy factory that returns nothing, a setup() or run() error, each with the step
// ("fresh client setup: ..."); the strategy made for the op is torn down whatever happened, and destroyed
// at once when its setup() failed. teardown() destroys the last op's strategy.
// Threads: the runner's thread only. Lifetime: the Descriptor is the registry's (static storage).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

class FreshClient final : public strategies::Strategy {
 public:
  // `probe`: a strategy `descriptor` made, asked skip_reason() and skip_case() for the case and set up
  // once in setup() (untimed), so that a case it cannot build fails before anything is measured, and
  // its notes() are the case's; then destroyed. Null probe: run() fails.
  FreshClient(const strategies::Descriptor& descriptor, std::unique_ptr<strategies::Strategy> probe);

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override;
  [[nodiscard]] std::optional<std::string> skip_case(const strategies::CaseConfig& config) const override;
  strategies::Status setup(const strategies::CaseConfig& config) override;
  strategies::Result<strategies::Outcome> run(http::Timeline* timeline, strategies::Check check) override;
  [[nodiscard]] strategies::IoCounters io_counters() const override { return io_; }
  [[nodiscard]] std::string notes() const override;
  void teardown() override;

  // Strategies made, set up and torn down by run() so far (the probe not counted).
  [[nodiscard]] uint64_t clients_made() const noexcept { return clients_made_; }

 private:
  const strategies::Descriptor* descriptor_;
  std::unique_ptr<strategies::Strategy> probe_;
  std::unique_ptr<strategies::Strategy> last_;  // the last run()'s, torn down, destroyed by the next
  strategies::CaseConfig config_;
  std::string probe_notes_;
  strategies::IoCounters io_;
  uint64_t clients_made_ = 0;
};

}  // namespace ringlab::bench
