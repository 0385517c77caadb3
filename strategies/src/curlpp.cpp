// curlpp, curlpp_post (peers): curlpp, the thin C++ wrapper over libcurl's easy interface (as Flurl is
// over HttpClient). One curlpp::Easy, made at setup and reused, so libcurl keeps the connection alive between
// requests; its options are curlpp's typed option objects, and the body is received the way curlpp's
// examples do it: a WriteFunction (a std::function) that appends each piece to a std::string (cleared,
// not freed, between requests). The body is then copied into a padded buffer and parsed into reused
// owning models. What curlpp adds to libcurl per request is a std::function call per piece and its
// exception-based error reporting; libcurl's own allocations per request are measured as for libcurl.
// POST: curlpp's PostFields option keeps its own copy of the request body (made once, at setup) and
// hands libcurl a pointer to it; libcurl sends it from there. An empty Expect header keeps libcurl from
// waiting for a 100 Continue before large bodies, as no other row does.
//
// The phase timeline has start, first byte and end of head (from a HeaderFunction), end of body
// (perform() returns) and deserialized.
//
// Deadlines: CURLOPT_CONNECTTIMEOUT_MS and CURLOPT_TIMEOUT_MS (whole transfer) from the case's deadline,
// CURLOPT_NOSIGNAL. perform() reports errors by throwing curlpp::LibcurlRuntimeError, whose text is
// libcurl's error buffer; every curlpp exception is caught and becomes an error value here. Its system
// calls are libcurl's, unseen.
#include <curlpp/Easy.hpp>
#include <curlpp/Exception.hpp>
#include <curlpp/Infos.hpp>
#include <curlpp/Options.hpp>
#include <curlpp/cURLpp.hpp>

#include <memory>
#include <mutex>

#include "library_peer.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::strategies::detail {
namespace {

// curlpp::initialize() calls curl_global_init, which must run once before any handle; libcurl counts
// those calls, so the libcurl peers' own are harmless. Never undone: other handles may live on.
Status global_init() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    try {
      curlpp::initialize(CURL_GLOBAL_DEFAULT);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  if (!error.empty()) return std::unexpected(Error{"curlpp::initialize: " + error});
  return {};
}

class Curlpp final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;

  [[nodiscard]] std::string notes() const override {
    return "phases send and wait n/a: curlpp (libcurl) does not tell when the request left; syscalls n/a: "
           "libcurl makes its own, unseen";
  }

 private:
  void close_case() override { easy_.reset(); }
  Status open_case() override {
    easy_.reset();
    prepare_request();
    url_ = "http://" + authority(config()) + target();
    if (auto init = global_init(); !init) return fail(label(), init.error().message);
    const long ms = static_cast<long>(timeout().count());
    const http::ParserLimits limits;
    try {
      auto easy = std::make_unique<curlpp::Easy>();
      easy->setOpt(curlpp::options::Url(url_));
      easy->setOpt(curlpp::options::NoSignal(true));
      easy->setOpt(curlpp::OptionTrait<long, CURLOPT_CONNECTTIMEOUT_MS>(ms));
      easy->setOpt(curlpp::OptionTrait<long, CURLOPT_TIMEOUT_MS>(ms));
      easy->setOpt(curlpp::options::TcpNoDelay(true));
      easy->setOpt(curlpp::options::HttpVersion(CURL_HTTP_VERSION_1_1));
      easy->setOpt(curlpp::options::MaxFileSizeLarge(static_cast<curl_off_t>(limits.max_body_bytes)));
      easy->setOpt(curlpp::options::WriteFunction([this](char* data, std::size_t size, std::size_t count) {
        body_.append(data, size * count);
        return size * count;
      }));
      easy->setOpt(curlpp::options::HeaderFunction([this](char* data, std::size_t size, std::size_t count) {
        const std::size_t n = size * count;
        if (!head_started_) {
          head_started_ = true;
          stamp(&http::Timeline::first_byte);
        }
        if (n == 2 && data[0] == '\r' && data[1] == '\n') stamp(&http::Timeline::head_parsed);
        return n;
      }));
      if (fresh()) {
        easy->setOpt(curlpp::options::FreshConnect(true));
        easy->setOpt(curlpp::options::ForbidReuse(true));
      }
      if (posts()) {
        easy->setOpt(curlpp::options::HttpHeader({"Content-Type: application/json", "Expect:"}));
        easy->setOpt(curlpp::options::PostFields(request_body()));
        easy->setOpt(curlpp::options::PostFieldSizeLarge(static_cast<curl_off_t>(request_body().size())));
      }
      easy_ = std::move(easy);
    } catch (const std::exception& error) {
      return fail(label(), std::string("curlpp options: ") + error.what());
    }
    return {};
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    begin(timeline);
    body_.clear();
    head_started_ = false;
    long status = 0;
    curl_off_t declared = -1;
    try {
      try {
        easy_->perform();
      } catch (...) {
        count_connections(static_cast<uint64_t>(curlpp::infos::NumConnects::get(*easy_)));
        throw;
      }
      count_connections(static_cast<uint64_t>(curlpp::infos::NumConnects::get(*easy_)));
      status = curlpp::infos::ResponseCode::get(*easy_);
      curl_easy_getinfo(easy_->getHandle(), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
    } catch (const curlpp::LibcurlRuntimeError& error) {
      return fail(label(), "curlpp " + url_ + ": " + error.what() + " (" + curl_easy_strerror(error.whatCode()) + ")");
    } catch (const std::exception& error) {
      return fail(label(), "curlpp " + url_ + ": " + error.what());
    }
    if (status != 200) [[unlikely]] {
      return fail(label(), "status " + std::to_string(status) + " for " + url_);
    }
    // libcurl ends a transfer whose body differs from its Content-Length with an error itself; this
    // check only keeps the library peers alike.
    if (declared >= 0 && static_cast<uint64_t>(declared) != body_.size()) [[unlikely]] {
      return fail(label(), "body of " + std::to_string(body_.size()) + " bytes where Content-Length says " +
                               std::to_string(declared));
    }
    return deserialize(body_, check);
  }

  std::string url_;
  std::unique_ptr<curlpp::Easy> easy_;
  std::string body_;
  bool head_started_ = false;
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_curlpp(const Recipe& recipe) {
  return std::make_unique<Curlpp>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
