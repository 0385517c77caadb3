#pragma once
// LibraryPeer: the frame of the peers that hand the whole request to an HTTP client library
// (libcurl_multi, cpp_httplib, beast, cpprest, curlpp). The library receives the body its own way and
// hands it over whole; from there every such peer does the same as libcurl: copy the body into a padded
// buffer (simdjson needs padding that the libraries' strings and vectors lack), parse it into reused
// owning models, consume, and on verified runs compare the full checksum with the generator's.
//
// Each library peer comes in three rows (peer_recipes.hpp's peer_rows()): GET of the case's records; POST
// /echo (the `post` suite) of a body of N serialized records (made once per case by json/'s serializer,
// the bytes the POST rows of ringlab's stack send), handed to the library its own way, the echoed body
// read as the GET body is; and the echo row (the `echo` suite): the 17-byte object of common.hpp POSTed
// to /echo?chunked=1, the answer taken as the library hands it over and compared, nothing parsed.
//
// What the frame adds to CaseStrategy: the method, target and request body of the row, the stamps of the
// phase timeline, the connections the library reports opening, the case's deadline as the libraries
// want it, a Content-Length check for the libraries that hand over a body without comparing its size
// with the header, and the text of an error that ended at the deadline. The system calls these
// libraries make are their own and unseen (counts_syscalls = false).
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "case_strategy.hpp"
#include "common.hpp"
#include "recipe.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/timeline.hpp"

namespace ringlab::strategies::detail {

class LibraryPeer : public CaseStrategy {
 public:
  // `name` as CaseStrategy's; `method` the row's: GET of the case's records, POST /echo of records, or
  // the echo of one small object.
  explicit LibraryPeer(std::string_view name, Method method = Method::get) : CaseStrategy(name), method_(method) {}

  [[nodiscard]] IoCounters io_counters() const override {
    IoCounters counters;
    counters.connections_opened = connections_->load(std::memory_order_relaxed);
    counters.counts_syscalls = false;  // the library makes its own, unseen
    return counters;
  }

 protected:
  // What open_case() does first: the target, the request body (POST) and the models, for the case.
  void prepare_request();
  // open_case() of a peer that keeps one client object of its library for the case (cpp-httplib's
  // Client, cpprest's http_client): prepare_request(), then `make()` builds and configures the client.
  // Those libraries report a bad argument by throwing: the exception becomes an error naming `what`.
  template <class Client, class Make>
  Status open_client(std::unique_ptr<Client>& client, std::string_view what, Make&& make) {
    client.reset();
    prepare_request();
    try {
      client = make();
    } catch (const std::exception& error) {
      client.reset();
      return fail(label(), std::string(what) + ": " + error.what());
    }
    return {};
  }
  // POST rows: records (Method::post) or the echo object (Method::echo).
  [[nodiscard]] bool posts() const noexcept { return method_ == Method::post || method_ == Method::echo; }
  // --connection fresh: a new connection per request, closed after the response, each library its way.
  [[nodiscard]] bool fresh() const noexcept { return config().connection == Connection::fresh; }
  // "/weather?count=N" (GET), "/echo" (POST) or "/echo?chunked=1" (echo).
  [[nodiscard]] const std::string& target() const noexcept { return target_; }
  // POST: N serialized records (the payload's), made by prepare_request(); echo: the echo object; empty
  // for GET.
  [[nodiscard]] const std::string& request_body() const noexcept { return request_body_; }
  // "GET" or "POST", for error messages.
  [[nodiscard]] std::string_view method_name() const noexcept { return posts() ? "POST" : "GET"; }

  // The start of a run(): remembers the timeline and stamps start.
  void begin(http::Timeline* timeline) noexcept {
    timeline_ = timeline;
    stamp(&http::Timeline::start);
  }
  void stamp(uint64_t http::Timeline::*phase) noexcept {
    if (timeline_ != nullptr && config().ticks != nullptr) timeline_->*phase = config().ticks();
  }
  void count_connections(uint64_t opened) noexcept { connections_->fetch_add(opened, std::memory_order_relaxed); }
  // The same count, for the libraries that report a new connection from their own threads (a socket
  // callback): shared with the callback, which may outlive a run.
  [[nodiscard]] const std::shared_ptr<std::atomic<uint64_t>>& connected_counter() const noexcept {
    return connections_;
  }

  // The case's deadline, rounded up to whole milliseconds, at least 1.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept {
    return std::max(std::chrono::milliseconds(1), std::chrono::ceil<std::chrono::milliseconds>(config().timeout));
  }

  // An error of the library for the request started at `started`: "<what>", and, when the deadline had
  // passed by then, " (timed out after N ms)", for the libraries whose error does not say that it was
  // the deadline that ended the request (a read that failed is all cpp-httplib reports).
  [[nodiscard]] std::unexpected<Error> library_error(std::string_view what,
                                                     std::chrono::steady_clock::time_point started) const;

  // The body a library handed over against the response's Content-Length header (its value as text;
  // nullopt: no such header, a chunked or close-delimited body): a body shorter or longer than the
  // header says is an error, whatever the library made of it.
  [[nodiscard]] Status check_length(std::optional<std::string_view> content_length, std::size_t body_bytes) const;
  // What check_length() says, without the case label (for an error that names a connection first);
  // nullopt when the body agrees with the header or there is none.
  [[nodiscard]] static std::optional<std::string> length_mismatch(std::optional<std::string_view> content_length,
                                                                  std::size_t body_bytes);

  // The end of every run(): stamps body_done, copies the body into the padded buffer, parses it into the
  // reused owning models, stamps deserialized, consumes and, with Check::verify, compares the checksum.
  // An echo row parses nothing: it consumes the answer's size and checks the answer's checksum.
  [[nodiscard]] Result<Outcome> deserialize(std::string_view body, Check check);
  // What deserialize() does with a body of records, into the buffer and models given: `body` copied into
  // `padded`, parsed into `models`; the consumption fold. A peer with N requests in flight keeps a buffer
  // and models per connection (its bodies are parsed one after another, by the frame's parser).
  [[nodiscard]] json::Result<uint64_t> parse_copy(std::string_view body, base::PaddedBuffer& padded,
                                                  OwningModels& models);

 private:
  [[nodiscard]] uint64_t expected_of(const CaseConfig& config) const override {
    return method_ == Method::echo ? echo_checksum(kEchoBody) : expected_checksum(config);
  }

  Method method_;
  std::string target_;
  std::string request_body_;
  base::PaddedBuffer padded_;
  OwningModels models_;
  http::Timeline* timeline_ = nullptr;
  std::shared_ptr<std::atomic<uint64_t>> connections_ = std::make_shared<std::atomic<uint64_t>>(0);
};

// The rows of each library (peer_recipes.hpp's peer_rows(): GET, POST and echo, the method being the row's),
// one maker per library in its source file. libcurl's are curl_peer.hpp's.
std::unique_ptr<Strategy> make_cpp_httplib(const Recipe& recipe);
std::unique_ptr<Strategy> make_beast(const Recipe& recipe);
// The beast GET row's strategy with N requests in flight (Recipe::make_inflight): N connections on one
// io_context (beast_inflight.cpp).
std::unique_ptr<Strategy> make_beast_inflight(const Recipe& recipe);
std::unique_ptr<Strategy> make_cpprest(const Recipe& recipe);
std::unique_ptr<Strategy> make_curlpp(const Recipe& recipe);

}  // namespace ringlab::strategies::detail
