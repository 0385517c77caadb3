// libcurl_multi, libcurl_multi_post (peers): libcurl's multi interface, the one event-driven programs
// use, driving one transfer at a time. A multi handle and one easy handle are made at setup; each request adds the easy
// handle to the multi, runs curl_multi_perform / curl_multi_poll until libcurl reports the transfer
// done (curl_multi_info_read), then removes it. The connection lives in the multi's connection cache
// between requests (kept alive). The write callback appends each piece to a std::string (cleared, not
// freed, between requests); the body is then copied into a padded buffer and parsed into reused owning
// models. libcurl's own allocations per request (its transfer state, header handling, the add/remove
// bookkeeping of the multi) are part of what is measured. POST: the request body (serialized once per
// case) is given with CURLOPT_POSTFIELDS, which libcurl sends from where it lies, without a copy; an
// empty Expect header keeps libcurl from waiting for a 100 Continue before large bodies, as no other
// row does.
//
// The phase timeline has start, first byte and end of head (from the header callback), end of body
// (the transfer reported done) and deserialized.
//
// Deadlines: CURLOPT_CONNECTTIMEOUT_MS and CURLOPT_TIMEOUT_MS (whole transfer) from the case's deadline,
// CURLOPT_NOSIGNAL; each curl_multi_poll waits at most until libcurl's next timer, and the loop gives up
// on its own a little after the deadline should libcurl not end the transfer. Errors carry libcurl's
// own text (CURLOPT_ERRORBUFFER). Its system calls are its own and unseen.
#include <curl/curl.h>

#include <chrono>
#include <mutex>

#include "curl_easy.hpp"
#include "factories.hpp"
#include "library_peer.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {
namespace {

class LibcurlMulti final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;
  ~LibcurlMulti() override { teardown(); }

  [[nodiscard]] std::string notes() const override {
    return "phases send and wait n/a: libcurl does not tell when the request left; syscalls n/a: libcurl "
           "makes its own, unseen";
  }

  void teardown() override {
    forget_case();
    if (headers_ != nullptr) curl_slist_free_all(headers_);
    headers_ = nullptr;
    if (multi_ != nullptr && added_) curl_multi_remove_handle(multi_, easy_);
    added_ = false;
    if (easy_ != nullptr) curl_easy_cleanup(easy_);
    easy_ = nullptr;
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
    multi_ = nullptr;
  }

 private:
  Status open_case() override {
    if (CURLcode code = curl_global_once(); code != CURLE_OK) {
      return fail(label(), std::string("curl_global_init: ") + curl_easy_strerror(code));
    }
    teardown();
    prepare_request();
    url_ = "http://" + authority(config()) + target();
    multi_ = curl_multi_init();
    easy_ = curl_easy_init();
    if (multi_ == nullptr || easy_ == nullptr) return fail(label(), "curl_multi_init or curl_easy_init failed");
    const auto ms = static_cast<long>(timeout().count());
    bool ok = set_easy_options(easy_, url_.c_str(), error_, ms, &LibcurlMulti::on_write, &LibcurlMulti::on_header, this);
    const auto set = [&ok](CURLcode code) { ok = ok && code == CURLE_OK; };
    if (fresh()) {
      set(curl_easy_setopt(easy_, CURLOPT_FRESH_CONNECT, 1L));
      set(curl_easy_setopt(easy_, CURLOPT_FORBID_REUSE, 1L));
    }
    if (posts()) {
      for (const char* header : {"Content-Type: application/json", "Expect:"}) {
        curl_slist* more = curl_slist_append(headers_, header);
        if (more == nullptr) return fail(label(), "curl_slist_append failed");
        headers_ = more;
      }
      set(curl_easy_setopt(easy_, CURLOPT_POST, 1L));
      set(curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, request_body().data()));
      set(curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request_body().size())));
      set(curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers_));
    }
    if (!ok) return fail(label(), "curl_easy_setopt refused an option");
    return {};
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    begin(timeline);
    const auto started = std::chrono::steady_clock::now();
    body_.clear();
    head_started_ = false;
    error_[0] = '\0';
    if (CURLMcode code = curl_multi_add_handle(multi_, easy_); code != CURLM_OK) [[unlikely]] {
      return fail(label(), std::string("curl_multi_add_handle: ") + curl_multi_strerror(code));
    }
    added_ = true;
    const auto done = drive(started);
    curl_multi_remove_handle(multi_, easy_);
    added_ = false;
    long connects = 0;
    curl_easy_getinfo(easy_, CURLINFO_NUM_CONNECTS, &connects);
    count_connections(static_cast<uint64_t>(connects));
    if (!done) [[unlikely]] return std::unexpected(done.error());
    if (*done != CURLE_OK) [[unlikely]] {
      return fail(label(), std::string("libcurl multi ") + url_ + ": " +
                               (error_[0] != '\0' ? error_ : curl_easy_strerror(*done)));
    }
    long status = 0;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) [[unlikely]] {
      return fail(label(), "status " + std::to_string(status) + " for " + url_);
    }
    // libcurl ends a transfer whose body differs from its Content-Length with an error itself; this
    // check only keeps the library peers alike.
    curl_off_t declared = -1;
    curl_easy_getinfo(easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
    if (declared >= 0 && static_cast<uint64_t>(declared) != body_.size()) [[unlikely]] {
      return fail(label(), "body of " + std::to_string(body_.size()) + " bytes where Content-Length says " +
                               std::to_string(declared));
    }
    return deserialize(body_, check);
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
        if (message->msg == CURLMSG_DONE && message->easy_handle == easy_) return message->data.result;
      }
      if (running == 0) [[unlikely]] return fail(label(), "libcurl multi " + url_ + ": transfer ended unreported");
      const auto now = std::chrono::steady_clock::now();
      if (now >= give_up) [[unlikely]] {
        return fail(label(), "libcurl multi " + url_ + ": timed out: the transfer outlived its deadline");
      }
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up - now).count();
      if (CURLMcode code = curl_multi_poll(multi_, nullptr, 0, static_cast<int>(std::min<int64_t>(left, 1000)),
                                           nullptr);
          code != CURLM_OK) [[unlikely]] {
        return fail(label(), std::string("curl_multi_poll: ") + curl_multi_strerror(code));
      }
    }
  }

  static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* self) {
    static_cast<LibcurlMulti*>(self)->body_.append(data, size * count);
    return size * count;
  }
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) {
    auto* me = static_cast<LibcurlMulti*>(self);
    const std::size_t n = size * count;
    if (!me->head_started_) {
      me->head_started_ = true;
      me->stamp(&http::Timeline::first_byte);
    }
    if (n == 2 && data[0] == '\r' && data[1] == '\n') me->stamp(&http::Timeline::head_parsed);
    return n;
  }

  std::string url_;
  CURLM* multi_ = nullptr;
  CURL* easy_ = nullptr;
  curl_slist* headers_ = nullptr;
  bool added_ = false;
  char error_[CURL_ERROR_SIZE] = {};
  std::string body_;
  bool head_started_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_libcurl_multi() { return std::make_unique<LibcurlMulti>("libcurl_multi"); }
std::unique_ptr<Strategy> make_libcurl_multi_post() {
  return std::make_unique<LibcurlMulti>("libcurl_multi_post", Method::post);
}

}  // namespace ringlab::strategies::detail
