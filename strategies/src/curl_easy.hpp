#pragma once
// What the peers built on libcurl (libcurl, libcurl_multi) do alike: the one curl_global_init, and the
// options of their easy handle.
#include <curl/curl.h>

#include <mutex>

#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {

// curl_global_init is not thread-safe and must run once before any handle (libcurl's rule). Inline, so
// that its once-flag is one for the program. Never undone: handles of other peers may live on.
inline CURLcode curl_global_once() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return code;
}

// The options every libcurl peer sets: the URL, an error buffer of CURL_ERROR_SIZE, no signals, the case's
// deadline for the connect and the whole transfer, TCP_NODELAY, HTTP/1.1, the parser's body limit, and
// the write and header callbacks with `self` as their data. False when libcurl refused one. `url` and
// `error_buffer` must live as long as the handle.
using CurlCallback = std::size_t (*)(char* data, std::size_t size, std::size_t count, void* self);
inline bool set_easy_options(CURL* easy, const char* url, char* error_buffer, long timeout_ms, CurlCallback on_write,
                             CurlCallback on_header, void* self) {
  const http::ParserLimits limits;
  bool ok = true;
  const auto set = [&ok](CURLcode code) { ok = ok && code == CURLE_OK; };
  set(curl_easy_setopt(easy, CURLOPT_URL, url));
  set(curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer));
  set(curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L));
  set(curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms));
  set(curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms));
  set(curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L));
  set(curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1)));
  set(curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limits.max_body_bytes)));
  set(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_write));
  set(curl_easy_setopt(easy, CURLOPT_WRITEDATA, self));
  set(curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header));
  set(curl_easy_setopt(easy, CURLOPT_HEADERDATA, self));
  return ok;
}

}  // namespace ringlab::strategies::detail
