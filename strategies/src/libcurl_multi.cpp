// libcurl_multi, libcurl_multi_post (peers): libcurl's multi interface, the one event-driven programs
// use, driving one transfer at a time. A multi handle is made at setup beside the easy handle; each request
// adds the easy handle to the multi, runs curl_multi_perform / curl_multi_poll until libcurl reports the
// transfer done (curl_multi_info_read), then removes it. The connection lives in the multi's connection
// cache between requests (kept alive). libcurl's allocations per request include the add/remove
// bookkeeping of the multi. Each curl_multi_poll waits at most until libcurl's next timer, and the loop
// gives up on its own a little after the deadline should libcurl not end the transfer. curl_peer.hpp has
// the rest (the easy handle's options, the body, POST, the phase timeline, deadlines and errors).
#include <algorithm>
#include <chrono>

#include "curl_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

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

  // Runs the multi until the transfer is done: its result, or an error of the multi interface itself.
  Result<CURLcode> drive(std::chrono::steady_clock::time_point started) {
    // libcurl enforces CURLOPT_TIMEOUT_MS; this bound only guarantees the loop ends should it not.
    const auto give_up = started + config().timeout + std::chrono::seconds(1);
    while (true) {
      int running = 0;
      if (CURLMcode code = curl_multi_perform(multi_, &running); code != CURLM_OK) [[unlikely]] {
        return fail(label(), std::string("curl_multi_perform: ") + curl_multi_strerror(code));
      }
      int queued = 0;
      while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
        if (message->msg == CURLMSG_DONE && message->easy_handle == easy()) return message->data.result;
      }
      if (running == 0) [[unlikely]] {
        return fail(label(), "libcurl multi " + url() + ": transfer ended unreported");
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= give_up) [[unlikely]] {
        return fail(label(), "libcurl multi " + url() + ": timed out: the transfer outlived its deadline");
      }
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up - now).count();
      if (CURLMcode code = curl_multi_poll(multi_, nullptr, 0, static_cast<int>(std::min<int64_t>(left, 1000)),
                                           nullptr);
          code != CURLM_OK) [[unlikely]] {
        return fail(label(), std::string("curl_multi_poll: ") + curl_multi_strerror(code));
      }
    }
  }

  CURLM* multi_ = nullptr;
  bool added_ = false;
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_libcurl_multi(const Recipe& recipe) {
  return std::make_unique<LibcurlMulti>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
