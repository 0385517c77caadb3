#include "curl_peer.hpp"

#include <mutex>

#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {
namespace {

// curl_global_init is not thread-safe and must run once before any handle (libcurl's rule). Never undone:
// handles of other peers may live on.
CURLcode curl_global_once() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return code;
}

}  // namespace

void CurlPeer::close_case() {
  close_driver();
  if (headers_ != nullptr) curl_slist_free_all(headers_);
  headers_ = nullptr;
  if (easy_ != nullptr) curl_easy_cleanup(easy_);
  easy_ = nullptr;
}

Status CurlPeer::open_case() {
  if (CURLcode code = curl_global_once(); code != CURLE_OK) {
    return fail(label(), std::string("curl_global_init: ") + curl_easy_strerror(code));
  }
  teardown();
  prepare_request();
  url_ = "http://" + authority(config()) + target();
  easy_ = curl_easy_init();
  if (easy_ == nullptr) return fail(label(), "curl_easy_init failed");
  const auto ms = static_cast<long>(timeout().count());
  const http::ParserLimits limits;
  bool ok = true;
  const auto set = [&ok](CURLcode code) { ok = ok && code == CURLE_OK; };
  set(curl_easy_setopt(easy_, CURLOPT_URL, url_.c_str()));
  set(curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_));
  set(curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L));
  set(curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, ms));
  set(curl_easy_setopt(easy_, CURLOPT_TIMEOUT_MS, ms));
  set(curl_easy_setopt(easy_, CURLOPT_TCP_NODELAY, 1L));
  set(curl_easy_setopt(easy_, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1)));
  set(curl_easy_setopt(easy_, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_body_bytes)));
  set(curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &CurlPeer::on_write));
  set(curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this));
  set(curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &CurlPeer::on_header));
  set(curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this));
  if (fresh()) {  // a new connection per transfer, closed after it
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
  return open_driver();
}

Result<Outcome> CurlPeer::run_case(http::Timeline* timeline, Check check) {
  begin_transfer(timeline);
  return end_transfer(perform(std::chrono::steady_clock::now()), check);
}

void CurlPeer::begin_transfer(http::Timeline* timeline) noexcept {
  begin(timeline);
  body_.clear();
  head_started_ = false;
  error_[0] = '\0';
}

Result<Outcome> CurlPeer::end_transfer(const Result<CURLcode>& done, Check check) {
  long connects = 0;
  curl_easy_getinfo(easy_, CURLINFO_NUM_CONNECTS, &connects);
  count_connections(static_cast<uint64_t>(connects));
  if (!done) [[unlikely]] return std::unexpected(done.error());
  if (*done != CURLE_OK) [[unlikely]] {
    return fail(label(), std::string(interface_name()) + " " + url_ + ": " +
                             (error_[0] != '\0' ? error_ : curl_easy_strerror(*done)));
  }
  long status = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) [[unlikely]] {
    return fail(label(), "status " + std::to_string(status) + " for " + url_);
  }
  // libcurl ends a transfer whose body differs from its Content-Length with an error itself; this check
  // only keeps the library peers alike.
  curl_off_t declared = -1;
  curl_easy_getinfo(easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
  if (declared >= 0 && static_cast<uint64_t>(declared) != body_.size()) [[unlikely]] {
    return fail(label(), "body of " + std::to_string(body_.size()) + " bytes where Content-Length says " +
                             std::to_string(declared));
  }
  return deserialize(body_, check);
}

std::size_t CurlPeer::on_write(char* data, std::size_t size, std::size_t count, void* self) {
  static_cast<CurlPeer*>(self)->body_.append(data, size * count);
  return size * count;
}

std::size_t CurlPeer::on_header(char* data, std::size_t size, std::size_t count, void* self) {
  auto* me = static_cast<CurlPeer*>(self);
  const std::size_t n = size * count;
  if (!me->head_started_) {
    me->head_started_ = true;
    me->stamp(&http::Timeline::first_byte);
  }
  if (n == 2 && data[0] == '\r' && data[1] == '\n') me->stamp(&http::Timeline::head_parsed);
  return n;
}

}  // namespace ringlab::strategies::detail
