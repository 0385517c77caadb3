// libcurl_multi, libcurl_multi_post (peers): libcurl's multi interface, the one event-driven programs
// use, driving one transfer at a time (and, for the GET row with --inflight N, N at once: below). A multi handle is made at setup beside the easy handle; each request
// adds the easy handle to the multi, runs curl_multi_perform / curl_multi_poll until libcurl reports the
// transfer done (curl_multi_info_read), then removes it. The connection lives in the multi's connection
// cache between requests (kept alive). libcurl's allocations per request include the add/remove
// bookkeeping of the multi. Each curl_multi_poll waits at most until libcurl's next timer, and the loop
// gives up on its own a little after the deadline should libcurl not end the transfer. curl_peer.hpp has
// the rest (the easy handle's options, the body, POST, the phase timeline, deadlines and errors).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "curl_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

// Runs `multi` until `transfers` of its transfers are done: `on_done(easy, result)` is called for each
// transfer libcurl reports done and says whether it was one of those awaited. Errors are those of the
// multi interface itself, prefixed with `label`. libcurl enforces each transfer's CURLOPT_TIMEOUT_MS; the
// loop gives up on its own a second after `deadline` only so that it ends should libcurl not end them.
// Each curl_multi_poll waits at most until libcurl's next timer, and at most a second.
template <class OnDone>
Status drive_multi(CURLM* multi, std::size_t transfers, std::chrono::steady_clock::time_point deadline,
                   std::string_view label, const std::string& url, OnDone&& on_done) {
  const auto give_up = deadline + std::chrono::seconds(1);
  std::size_t left = transfers;
  // "the transfer" / "3 of 64 transfers", for the errors.
  const auto which = [&] {
    return transfers == 1 ? std::string("the transfer")
                          : std::to_string(left) + " of " + std::to_string(transfers) + " transfers";
  };
  while (true) {
    int running = 0;
    if (CURLMcode code = curl_multi_perform(multi, &running); code != CURLM_OK) [[unlikely]] {
      return fail(label, std::string("curl_multi_perform: ") + curl_multi_strerror(code));
    }
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
      if (message->msg == CURLMSG_DONE && on_done(message->easy_handle, message->data.result)) --left;
    }
    if (left == 0) return {};
    if (running == 0) [[unlikely]] {
      return fail(label, "libcurl multi " + url + ": " + which() + " ended unreported");
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= give_up) [[unlikely]] {
      return fail(label, "libcurl multi " + url + ": timed out: " + which() + " outlived the deadline");
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(give_up - now).count();
    if (CURLMcode code = curl_multi_poll(multi, nullptr, 0, static_cast<int>(std::min<int64_t>(wait, 1000)), nullptr);
        code != CURLM_OK) [[unlikely]] {
      return fail(label, std::string("curl_multi_poll: ") + curl_multi_strerror(code));
    }
  }
}

class LibcurlMulti final : public CurlPeer {
 public:
  using CurlPeer::CurlPeer;
  ~LibcurlMulti() override { teardown(); }  // the multi handle goes before the easy handle

 private:
  [[nodiscard]] std::string_view interface_name() const noexcept override { return "libcurl multi"; }
  Status open_driver() override {
    multi_ = curl_multi_init();
    if (multi_ == nullptr) return fail(label(), "curl_multi_init failed");
    return {};
  }
  void close_driver() noexcept override {
    if (multi_ != nullptr && added_) curl_multi_remove_handle(multi_, easy());
    added_ = false;
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
    multi_ = nullptr;
  }
  Result<CURLcode> perform(std::chrono::steady_clock::time_point started) override {
    if (CURLMcode code = curl_multi_add_handle(multi_, easy()); code != CURLM_OK) [[unlikely]] {
      return fail(label(), std::string("curl_multi_add_handle: ") + curl_multi_strerror(code));
    }
    added_ = true;
    auto done = drive(started);
    curl_multi_remove_handle(multi_, easy());
    added_ = false;
    return done;
  }

  Result<CURLcode> drive(std::chrono::steady_clock::time_point started) {
    CURLcode result = CURLE_OK;
    auto driven = drive_multi(multi_, 1, started + config().timeout, label(), url(), [&](CURL* easy, CURLcode code) {
      if (easy != this->easy()) return false;
      result = code;
      return true;
    });
    if (!driven) [[unlikely]] return std::unexpected(std::move(driven.error()));
    return result;
  }

  CURLM* multi_ = nullptr;
  bool added_ = false;
};

// One easy handle of a round (LibcurlMultiInflight): the one-handle peer's handle, set up as CurlPeer sets
// it up, whose transfers the round drives (begin_transfer / end_transfer), never run() alone.
class RoundTransfer final : public CurlPeer {
 public:
  using CurlPeer::CurlPeer;
  ~RoundTransfer() override { teardown(); }

 private:
  [[nodiscard]] std::string_view interface_name() const noexcept override { return "libcurl multi"; }
  Result<CURLcode> perform(std::chrono::steady_clock::time_point) override {
    return fail(label(), "a transfer of a round is driven by its round");
  }
};

// libcurl_multi with N requests in flight (the GET row's Recipe::make_inflight): what an event-driven
// program does with many transfers at once. N = CaseConfig::inflight easy handles, each set up as the
// one-handle peer's (CurlPeer: the same options and deadlines, its own std::string body, padded copy and
// reused owning models), all driven by one multi handle. One run() is one round: every handle is added
// to the multi, curl_multi_perform / curl_multi_poll run until libcurl reports every transfer done
// (curl_multi_info_read), every handle is removed again; then each body is deserialized into its own
// handle's models and consumed, the folds folded in connection order (common.hpp's fold_connection).
//
// Connections: kept alive across rounds in the multi's connection cache, sized for all N
// (CURLMOPT_MAXCONNECTS = N: libcurl would otherwise close connections beyond its default size once
// the handles are removed), and HTTP/1.1 without pipelining (CURLMOPT_PIPELINING = CURLPIPE_NOTHING):
// each transfer has a connection of its own, as each request in flight has everywhere else. A round
// re-adds handles to a multi whose cache holds N idle connections, and each transfer takes one.
//
// Deadline: each transfer's CURLOPT_TIMEOUT_MS, as the one-handle peer's; the round gives up on its own
// a second after the deadline should libcurl not end its transfers. System calls are libcurl's, unseen
// (counts_syscalls false); the allocations counted include libcurl's per transfer and the multi's
// add/remove bookkeeping, N per round. Held memory is not reported (libcurl's buffers are its own).
//
// Errors name the case and the connection (the easy handle, counted from 1), then the one-handle peer's
// text without its own label: "libcurl_multi weather 10 x64: connection 3 of 64: libcurl multi
// http://127.0.0.1:8080/weather?count=10: Operation timed out after 200 milliseconds with 0 bytes
// received". A failed transfer's connection is closed by libcurl, which opens a new one at the next
// round; nothing is retried.
//
// Timeline (when run() is given one and the case a tick source): the round's start, first_byte and
// head_parsed (the first of any handle, from its header callback), body_done (every transfer done) and
// deserialized (every body parsed). Threads: one, the round's (libcurl's are the caller's).
class LibcurlMultiInflight final : public CaseStrategy {
 public:
  explicit LibcurlMultiInflight(const Recipe& recipe) : CaseStrategy(recipe.name), recipe_(&recipe) {}
  ~LibcurlMultiInflight() override { teardown(); }  // the multi handle goes before the easy handles

  [[nodiscard]] IoCounters io_counters() const override {
    IoCounters sum = ended_;
    for (const auto& transfer : transfers_) sum.connections_opened += transfer->io_counters().connections_opened;
    sum.counts_syscalls = false;  // libcurl makes its own, unseen
    return sum;
  }
  [[nodiscard]] std::string notes() const override {
    return std::to_string(transfers_.size()) +
           " easy handles in one multi handle (CURLMOPT_MAXCONNECTS " + std::to_string(transfers_.size()) +
           ", no pipelining); " + (transfers_.empty() ? std::string() : transfers_.front()->notes());
  }

 private:
  Status open_case() override;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) override;
  void close_case() override;
  // Takes every handle out of the multi.
  void remove_all() noexcept;

  const Recipe* recipe_;
  std::string one_label_;  // the label the handles' errors start with
  std::vector<std::unique_ptr<RoundTransfer>> transfers_;
  std::vector<http::Timeline> stamps_;              // each handle's share of a timed round
  std::vector<std::optional<CURLcode>> results_;   // each transfer's, once libcurl reported it done
  std::vector<char> added_;                         // the handle is in the multi
  CURLM* multi_ = nullptr;
  IoCounters ended_;  // the connections of handles an earlier setup ended
};

Status LibcurlMultiInflight::open_case() {
  close_case();  // a second setup() starts over
  if (config().inflight == 0) return fail(label(), "no request in flight (CaseConfig::inflight is 0)");
  CaseConfig one = config();
  one.inflight = 1;
  // Build only, as a fresh client's setup does (CaseStrategy): the round's own verified run, which
  // setup() makes next, proves the case on every handle.
  one.client = Client::fresh;
  one_label_ = case_label(recipe_->name, one);

  const std::size_t count = config().inflight;
  transfers_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    transfers_.push_back(std::make_unique<RoundTransfer>(recipe_->name, recipe_->method));
    if (auto set = transfers_.back()->setup(one); !set) {
      return fail_on_connection(label(), i, count, without_label(set.error().message, one_label_));
    }
    // The handle's index, for the round to find it when libcurl reports it done.
    if (curl_easy_setopt(transfers_.back()->easy(), CURLOPT_PRIVATE, reinterpret_cast<void*>(i)) != CURLE_OK) {
      return fail_on_connection(label(), i, count, "curl_easy_setopt refused CURLOPT_PRIVATE");
    }
  }
  stamps_.assign(count, http::Timeline{});
  results_.assign(count, std::nullopt);
  added_.assign(count, 0);

  multi_ = curl_multi_init();  // after the handles: their setup ran curl_global_init
  if (multi_ == nullptr) return fail(label(), "curl_multi_init failed");
  if (curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(count)) != CURLM_OK ||
      curl_multi_setopt(multi_, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_NOTHING)) != CURLM_OK) {
    return fail(label(), "curl_multi_setopt refused an option");
  }
  return {};
}

Result<Outcome> LibcurlMultiInflight::run_case(http::Timeline* timeline, Check check) {
  const http::TickSource ticks = config().ticks;
  const bool stamping = timeline != nullptr && ticks != nullptr;
  if (stamping) timeline->start = ticks();
  const auto started = std::chrono::steady_clock::now();
  const std::size_t count = transfers_.size();
  for (std::size_t i = 0; i < count; ++i) {
    stamps_[i] = {};
    results_[i].reset();
    transfers_[i]->begin_transfer(stamping ? &stamps_[i] : nullptr);
    if (CURLMcode code = curl_multi_add_handle(multi_, transfers_[i]->easy()); code != CURLM_OK) [[unlikely]] {
      remove_all();
      return fail_on_connection(label(), i, count, std::string("curl_multi_add_handle: ") + curl_multi_strerror(code));
    }
    added_[i] = 1;
  }
  auto driven = drive_multi(multi_, count, started + config().timeout, label(), transfers_.front()->url(),
                            [this, count](CURL* easy, CURLcode code) {
                              char* index = nullptr;
                              curl_easy_getinfo(easy, CURLINFO_PRIVATE, &index);
                              const auto i = reinterpret_cast<std::size_t>(index);
                              if (i >= count || transfers_[i]->easy() != easy || results_[i]) return false;
                              results_[i] = code;
                              return true;
                            });
  remove_all();
  if (!driven) [[unlikely]] return std::unexpected(std::move(driven.error()));
  const uint64_t all_in = stamping ? ticks() : 0;

  // Every transfer is done: each body into its own handle's models, the folds folded in connection order.
  // After a failed one the others are still ended, so that every handle's new connections are counted.
  uint64_t consumed = 0;
  std::optional<std::unexpected<Error>> failed;
  for (std::size_t i = 0; i < count; ++i) {
    auto ended = transfers_[i]->end_transfer(*results_[i], check);
    if (!ended) [[unlikely]] {
      if (!failed) failed = fail_on_connection(label(), i, count, without_label(ended.error().message, one_label_));
      continue;
    }
    consumed = fold_connection(consumed, ended->consumed);
  }
  if (failed) [[unlikely]] return *failed;
  if (stamping) {
    stamp_round(*timeline, count, [this](std::size_t i) -> const http::Timeline& { return stamps_[i]; });
    timeline->body_done = all_in;  // the handles stamp theirs when their body is parsed, after the round
    timeline->deserialized = ticks();
  }
  // Each handle checked its own records against the generator's.
  return Outcome{consumed, check == Check::verify ? expected() : 0};
}

void LibcurlMultiInflight::remove_all() noexcept {
  for (std::size_t i = 0; i < added_.size(); ++i) {
    if (added_[i] != 0) curl_multi_remove_handle(multi_, transfers_[i]->easy());
    added_[i] = 0;
  }
}

void LibcurlMultiInflight::close_case() {
  if (multi_ != nullptr) {
    remove_all();
    curl_multi_cleanup(multi_);  // closes the cached connections
    multi_ = nullptr;
  }
  for (const auto& transfer : transfers_) ended_.connections_opened += transfer->io_counters().connections_opened;
  transfers_.clear();  // each handle's teardown
  stamps_.clear();
  results_.clear();
  added_.clear();
}

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_libcurl_multi(const Recipe& recipe) {
  return std::make_unique<LibcurlMulti>(recipe.name, recipe.method);
}

std::unique_ptr<Strategy> make_libcurl_multi_inflight(const Recipe& recipe) {
  return std::make_unique<LibcurlMultiInflight>(recipe);
}

}  // namespace ringlab::strategies::detail
