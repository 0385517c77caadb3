#pragma once
// CaseStrategy: what every strategy of the table keeps about the case it was set up for, and the
// protocol of setup() and run() that all of them follow: setup() records the case, makes what the
// strategy needs (open_case), then proves the case with one verified run, so that a strategy that reads
// something else than the generator's records fails before anything is measured (not for a fresh client,
// CaseConfig::client fresh: that setup() is part of a timed op, and bench's verified ops, each on a client
// of its own, prove the case instead); run() refuses to go
// until a setup() got that far, then runs one request (run_case). ClientStrategy (ringlab's stack),
// SocketPeer (blocking sockets), the epoll peer and libcurl are built on it.
//
// The JSON parser (parser()): every strategy of the table parses with its CaseStrategy's, one simdjson
// parser whose buffers grow to the largest body it has parsed. A pooled client's is its own, kept from
// construction to destruction, so outside every op. A fresh client's (CaseConfig::client fresh) is the
// thread's: setup() moves the parser its thread keeps into the strategy's, teardown() moves it back
// (take_thread_parser, keep_thread_parser). A fresh client is then built and destroyed per op (ring or
// event loop, buffers, connection, the library's client object) but its JSON parser is not, as .NET
// keeps its JSON serializer per process while a new HttpClient is built per request. The parser object
// stays where it is (a move into it, not a new one), so what bound its address at construction (the
// streaming sinks) stays valid.
//
// Errors carry the case label ("presized weather 1000: ..."), or the strategy's name before any case.
// Threads: one strategy object is used by one thread at a time; a fresh client borrows the parser of the
// thread that calls setup() and gives it back in teardown(), which must be called on that same thread
// (strategy.hpp's rule: the thread that set a strategy up uses it). A strategy destroyed without
// teardown() frees the parser it borrowed: the thread's next fresh client makes a new one.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

// The JSON parser this thread keeps between fresh clients (case_strategy.cpp: thread_local storage, freed
// when the thread exits). take_thread_parser() moves it out, leaving the thread none; with none kept it
// returns a new parser, which allocates nothing until its first parse. keep_thread_parser() keeps
// `parser`, or, when the thread keeps one already, whichever of the two has the larger capacity (the
// other is freed): strategies set up at once on one thread (the connections of libcurl_multi) each
// borrow and give back in turn. Neither allocates; both are for this thread only.
[[nodiscard]] json::Parser take_thread_parser() noexcept;
void keep_thread_parser(json::Parser&& parser) noexcept;

class CaseStrategy : public Strategy {
 public:
  // `name` is the registry row's (a string literal): the factory passes it, derived classes inherit this.
  explicit CaseStrategy(std::string_view name) : name_(name) {}

  Status setup(const CaseConfig& config) final {
    config_ = config;
    label_ = case_label(name_, config_);
    expected_ = expected_of(config_);
    ready_ = false;
    give_back_parser();  // a second setup() starts over
    if (config_.client == Client::fresh) {
      parser_ = take_thread_parser();
      parser_borrowed_ = true;
    }
    if (auto opened = open_case(); !opened) return opened;
    ready_ = true;
    if (config_.client == Client::fresh) return {};
    auto first = run(nullptr, Check::verify);
    if (!first) return std::unexpected(first.error());
    return {};
  }
  Result<Outcome> run(http::Timeline* timeline, Check check) final {
    if (!ready_) [[unlikely]] {
      return fail(label_.empty() ? name_ : label_, "run() without a successful setup()");
    }
    return run_case(timeline, check);
  }
  // run() is refused again until the next setup(); then close_case() frees what open_case() made.
  void teardown() final {
    ready_ = false;
    close_case();
    give_back_parser();
  }

 protected:
  // Makes what the case needs (a second setup() starts over: what the first one made goes first).
  virtual Status open_case() = 0;
  // One whole request, as Strategy::run().
  virtual Result<Outcome> run_case(http::Timeline* timeline, Check check) = 0;
  // What teardown() frees: what open_case() made.
  virtual void close_case() {}
  // The checksum verified runs must give: by default the generator's records' (json/checksum.hpp).
  [[nodiscard]] virtual uint64_t expected_of(const CaseConfig& config) const { return expected_checksum(config); }

  [[nodiscard]] const CaseConfig& config() const noexcept { return config_; }
  [[nodiscard]] const std::string& label() const noexcept { return label_; }
  // The checksum of the generator's records for this case (what verified runs must equal).
  [[nodiscard]] uint64_t expected() const noexcept { return expected_; }
  // The JSON parser of this strategy's bodies (see the top of this file for whose it is).
  [[nodiscard]] json::Parser& parser() noexcept { return parser_; }

 private:
  void give_back_parser() noexcept {
    if (!parser_borrowed_) return;
    keep_thread_parser(std::exchange(parser_, json::Parser{}));
    parser_borrowed_ = false;
  }

  std::string_view name_;
  CaseConfig config_;
  std::string label_;
  uint64_t expected_ = 0;
  bool ready_ = false;
  json::Parser parser_;
  bool parser_borrowed_ = false;  // parser_ is the thread's, to give back at teardown()
};

}  // namespace ringlab::strategies::detail
