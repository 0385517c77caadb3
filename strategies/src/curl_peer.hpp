#pragma once
// CurlPeer: the frame of the peers built on libcurl's easy handle (libcurl, libcurl_multi). One easy handle
// made at setup and reused, so libcurl keeps the connection alive between requests (--connection fresh:
// CURLOPT_FRESH_CONNECT and CURLOPT_FORBID_REUSE); the write callback appends each piece to a std::string
// (cleared, not freed, between requests), which LibraryPeer copies into a padded buffer and parses. POST
// rows give the body with CURLOPT_POSTFIELDS, which libcurl sends from where it lies, without a copy; an
// empty Expect header keeps libcurl from waiting for a 100 Continue before large bodies, as no other row
// does. What differs is how a transfer is driven: perform() (curl_easy_perform, or a multi handle's loop),
// or, for a handle of a round of N (libcurl_multi with N in flight), the round's own loop, run between
// begin_transfer() and end_transfer().
//
// The phase timeline has what can be seen from outside: start, first byte and end of head (from the header
// callback), end of body (the transfer done), deserialized. Deadlines: CURLOPT_CONNECTTIMEOUT_MS and
// CURLOPT_TIMEOUT_MS (the whole transfer) from the case's deadline; CURLOPT_NOSIGNAL, so no SIGALRM.
// Errors carry libcurl's own text (CURLOPT_ERRORBUFFER). libcurl's allocations per request are part of
// what is measured; its system calls are its own and unseen.
#include <curl/curl.h>

#include <chrono>
#include <string>
#include <string_view>

#include "library_peer.hpp"
#include "recipe.hpp"

namespace ringlab::strategies::detail {

class CurlPeer : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;
  ~CurlPeer() override { teardown(); }

  [[nodiscard]] std::string notes() const override {
    return "phases send and wait n/a: libcurl does not tell when the request left; syscalls n/a: libcurl "
           "makes its own, unseen";
  }

  // What run() does around perform(), for a driver of many easy handles that runs this one's transfer
  // itself (libcurl_multi with N in flight, libcurl_multi.cpp): before the transfer, and after it with
  // libcurl's result (or the driver's error): the status, length and body checks, then deserialize().
  void begin_transfer(http::Timeline* timeline) noexcept;
  [[nodiscard]] Result<Outcome> end_transfer(const Result<CURLcode>& done, Check check);
  [[nodiscard]] CURL* easy() const noexcept { return easy_; }
  [[nodiscard]] const std::string& url() const noexcept { return url_; }

 protected:
  // "libcurl" or "libcurl multi": how errors name the interface.
  [[nodiscard]] virtual std::string_view interface_name() const noexcept = 0;
  // What the driver needs besides the easy handle (a multi handle), made after it; and undone, before it
  // goes. A subclass that makes something calls teardown() from its own destructor.
  virtual Status open_driver() { return {}; }
  virtual void close_driver() noexcept {}
  // The one transfer of a run(), on easy(): libcurl's result, or an error of the driver itself.
  virtual Result<CURLcode> perform(std::chrono::steady_clock::time_point started) = 0;

 private:
  Status open_case() final;
  Result<Outcome> run_case(http::Timeline* timeline, Check check) final;
  void close_case() override;
  static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* self);
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self);

  std::string url_;
  CURL* easy_ = nullptr;
  curl_slist* headers_ = nullptr;
  char error_[CURL_ERROR_SIZE] = {};
  std::string body_;
  bool head_started_ = false;
};

// The rows of libcurl's two interfaces (peer_recipes.hpp), the method being the row's: libcurl.cpp (GET and
// echo), libcurl_multi.cpp (GET, POST and echo).
std::unique_ptr<Strategy> make_libcurl(const Recipe& recipe);
std::unique_ptr<Strategy> make_libcurl_multi(const Recipe& recipe);
// The libcurl_multi GET row's strategy with N requests in flight (Recipe::make_inflight): N easy handles,
// each set up as the one-handle peer's, in one multi handle (libcurl_multi.cpp).
std::unique_ptr<Strategy> make_libcurl_multi_inflight(const Recipe& recipe);

}  // namespace ringlab::strategies::detail
