// cpp_httplib, cpp_httplib_post (peers): cpp-httplib's blocking httplib::Client, made at setup and kept
// for the case with set_keep_alive(true), so one connection serves every request. Its idiomatic calls,
// Get(path) and Post(path, body, content_type), return a fresh httplib::Response per request whose
// std::string body the library grows as the bytes arrive (received through its own 4 KiB read buffer);
// that string is then copied into a padded buffer and parsed into reused owning models. Post() copies
// the request body (serialized once per case) into its Request. The Request, the Response, their headers
// and body strings are allocated per request by the library, and counted as its cost.
//
// The phase timeline has start, end of body (the call returns) and deserialized: the library tells
// nothing in between, so only the deserialize phase is seen. Connections are counted by the socket-options callback, which the library calls on every
// socket it makes before connecting. Its system calls are its own and unseen.
//
// Deadlines: set_connection_timeout, set_read_timeout and set_write_timeout from the case's deadline
// (each receive and send waits at most that long). A failed read is all the library reports, whether
// the peer closed or the deadline passed; the error says "timed out" when the deadline had passed.
// cpp-httplib compares a Content-Length body with the header itself; the size is checked again after
// it returns, like the other library peers. It does not check the CRLF after each chunk's data, so a
// body with that framing wrong comes back mis-de-chunked rather than failing: the parse or the checksum
// catches it, and the error then says that the body was chunked.
#include <httplib.h>

#include <atomic>
#include <memory>

#include "library_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

// httplib::to_string gives the enumerator's name only ("Read"); what it means for a request.
std::string describe(httplib::Error error) {
  std::string text = "httplib::Error::" + httplib::to_string(error);
  switch (error) {
    case httplib::Error::Connection: return text + ": could not connect";
    case httplib::Error::ConnectionTimeout: return text + ": connect timed out";
    case httplib::Error::Read:
      return text + ": the response could not be read whole (connection closed early, a head, length or "
                    "chunk framing it rejects, or no byte within the read timeout)";
    case httplib::Error::Write: return text + ": the request could not be sent";
    case httplib::Error::Compression: return text + ": the body could not be decompressed";
    default: return text;
  }
}

class CppHttplib final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;

  [[nodiscard]] std::string notes() const override {
    return "phases connect, send, wait, head and body n/a: cpp-httplib tells nothing between the call and "
           "its return; syscalls n/a: the library makes its own, unseen";
  }

  // Closes the kept-alive connection: cpp-httplib would send on it without checking it first.
  void drop_connection() override {
    if (client_) client_->stop();
  }

 private:
  void close_case() override { client_.reset(); }
  Status open_case() override {
    return open_client(client_, "httplib::Client", [this] {
      auto client = std::make_unique<httplib::Client>(config().host, config().port);
      client->set_keep_alive(!fresh());  // false: "Connection: close", the socket closed after each request
      client->set_tcp_nodelay(true);
      client->set_connection_timeout(timeout());
      client->set_read_timeout(timeout());
      client->set_write_timeout(timeout());
      client->set_socket_options([sockets = connected_counter()](socket_t) {
        sockets->fetch_add(1, std::memory_order_relaxed);
      });
      return client;
    });
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    begin(timeline);
    const auto started = std::chrono::steady_clock::now();
    try {
      const httplib::Result result =
          posts() ? client_->Post(target(), request_body(), "application/json") : client_->Get(target());
      if (!result) [[unlikely]] {
        return library_error("cpp-httplib " + std::string(method_name()) + " " + authority(config()) + target() +
                                 ": " + describe(result.error()),
                             started);
      }
      const httplib::Response& response = *result;
      if (response.status != 200) [[unlikely]] {
        return fail(label(), "status " + std::to_string(response.status) + " for " + target());
      }
      std::optional<std::string_view> length;
      const std::string declared = response.get_header_value("Content-Length");
      if (response.has_header("Content-Length")) length = declared;
      if (auto sized = check_length(length, response.body.size()); !sized) return std::unexpected(sized.error());
      auto outcome = deserialize(response.body, check);
      if (!outcome && response.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos) {
        // cpp-httplib 0.11 does not check the CRLF that must follow each chunk's data: a body with bad
        // chunk framing can come back de-chunked wrongly instead of failing. Only the parse or the
        // checksum then sees it; say where the bytes came from.
        outcome.error().message += " (a chunked body as cpp-httplib de-chunked it: it does not check the CRLF "
                                   "after each chunk's data)";
      }
      return outcome;
    } catch (const std::exception& error) {
      return fail(label(), "cpp-httplib " + std::string(method_name()) + " " + target() + ": " + error.what());
    }
  }

  std::unique_ptr<httplib::Client> client_;
  // Shared with the callback the client keeps, so that the count outlives neither.
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_cpp_httplib(const Recipe& recipe) {
  return std::make_unique<CppHttplib>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
