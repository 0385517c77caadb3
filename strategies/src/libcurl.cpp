// libcurl (peer): what a C or C++ program usually links. One easy handle, made at setup and reused, so
// libcurl keeps the connection alive between requests; the write callback appends each piece to a
// std::string (cleared, not freed, between requests); the body is then copied into a padded buffer,
// because simdjson needs padding that a std::string lacks, and parsed into reused owning models.
// libcurl's own allocations per request (its state, header handling) are part of what is measured.
//
// The phase timeline has what can be seen from outside: start, first byte and end of head (from the
// header callback), end of body (curl_easy_perform returns), deserialized.
//
// Deadlines: CURLOPT_CONNECTTIMEOUT_MS and CURLOPT_TIMEOUT_MS (whole transfer) from the case's
// deadline; CURLOPT_NOSIGNAL, so no SIGALRM is used. Errors carry libcurl's own text
// (CURLOPT_ERRORBUFFER).
#include <curl/curl.h>

#include <chrono>
#include <cstring>
#include <mutex>

#include "case_strategy.hpp"
#include "common.hpp"
#include "curl_easy.hpp"
#include "factories.hpp"
#include "ringlab/http/client.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

class Libcurl final : public CaseStrategy {
 public:
  using CaseStrategy::CaseStrategy;
  ~Libcurl() override { teardown(); }

 private:
  Status open_case() override {
    url_ = "http://" + authority(config()) + get_target(config());
    if (CURLcode code = curl_global_once(); code != CURLE_OK) {
      return fail(label(), std::string("curl_global_init: ") + curl_easy_strerror(code));
    }
    teardown();
    easy_ = curl_easy_init();
    if (easy_ == nullptr) return fail(label(), "curl_easy_init failed");
    const auto ms = static_cast<long>(std::max<int64_t>(
        1, std::chrono::ceil<std::chrono::milliseconds>(config().timeout).count()));
    bool ok = set_easy_options(easy_, url_.c_str(), error_, ms, &Libcurl::on_write, &Libcurl::on_header, this);
    const auto set = [&ok](CURLcode code) { ok = ok && code == CURLE_OK; };
    if (config().connection == Connection::fresh) {  // a new connection per transfer, closed after it
      set(curl_easy_setopt(easy_, CURLOPT_FRESH_CONNECT, 1L));
      set(curl_easy_setopt(easy_, CURLOPT_FORBID_REUSE, 1L));
    }
    if (!ok) return fail(label(), "curl_easy_setopt refused an option");
    models_.reserve(config().payload, config().count);
    return {};
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    timeline_ = timeline;
    stamp(&http::Timeline::start);
    body_.clear();
    head_started_ = false;
    error_[0] = '\0';
    const CURLcode code = curl_easy_perform(easy_);
    long connects = 0;
    curl_easy_getinfo(easy_, CURLINFO_NUM_CONNECTS, &connects);
    connections_opened_ += static_cast<uint64_t>(connects);
    if (code != CURLE_OK) [[unlikely]] {
      return fail(label(), std::string("libcurl ") + url_ + ": " + (error_[0] != '\0' ? error_ : curl_easy_strerror(code)));
    }
    stamp(&http::Timeline::body_done);
    long status = 0;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) [[unlikely]] {
      return fail(label(), "status " + std::to_string(status) + " for " + url_);
    }
    padded_.clear();
    padded_.append(body_);
    const auto consumed = models_.parse(config().payload, parser_, json::padded_view(padded_));
    stamp(&http::Timeline::deserialized);
    return conclude(label(), config(), expected(), consumed, check,
                    [this] { return models_.checksum(config().payload); });
  }

 public:
  [[nodiscard]] std::string notes() const override {
    return "phases send and wait n/a: libcurl does not tell when the request left; syscalls n/a: libcurl "
           "makes its own, unseen";
  }

  [[nodiscard]] IoCounters io_counters() const override {
    IoCounters counters;
    counters.connections_opened = connections_opened_;
    counters.counts_syscalls = false;  // libcurl makes its own, unseen
    return counters;
  }

  void teardown() override {
    forget_case();
    if (easy_ != nullptr) curl_easy_cleanup(easy_);
    easy_ = nullptr;
  }

 private:
  static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* self) {
    static_cast<Libcurl*>(self)->body_.append(data, size * count);
    return size * count;
  }
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) {
    auto* me = static_cast<Libcurl*>(self);
    const std::size_t n = size * count;
    if (!me->head_started_) {
      me->head_started_ = true;
      me->stamp(&http::Timeline::first_byte);
    }
    if (n == 2 && data[0] == '\r' && data[1] == '\n') me->stamp(&http::Timeline::head_parsed);
    return n;
  }
  void stamp(uint64_t http::Timeline::*phase) noexcept {
    if (timeline_ != nullptr && config().ticks != nullptr) timeline_->*phase = config().ticks();
  }

  std::string url_;
  CURL* easy_ = nullptr;
  char error_[CURL_ERROR_SIZE] = {};
  std::string body_;
  base::PaddedBuffer padded_;
  OwningModels models_;
  json::Parser parser_;
  http::Timeline* timeline_ = nullptr;
  bool head_started_ = false;
  uint64_t connections_opened_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_libcurl() { return std::make_unique<Libcurl>("libcurl"); }

}  // namespace ringlab::strategies::detail
