// cpprest, cpprest_post (peers): Microsoft's C++ REST SDK, the closest relative of .NET's HttpClient
// (both are task-based clients with a pooled connection per host). One web::http::client::http_client,
// made at setup and kept for the case; its pool keeps the connection alive between requests. Each
// request is client.request(GET, target).get() (POST: request(POST, "/echo", body, "application/json"),
// which copies the body, serialized once per case, into the request's stream buffer), which completes
// once the head is read, then the SDK's idiomatic
// extract_string().get(): the SDK has buffered the body in the response's stream buffer as it arrived
// (read through its asio streambuf), and extract_string copies it out into a fresh std::string. That
// string is then copied into a padded buffer and parsed into reused owning models.
//
// Threads: the SDK does the work on its own thread pool (crossplat::threadpool, Boost.Asio); the
// calling thread only waits on the tasks. Allocations are counted per thread, so those the pool's
// threads make (most of the SDK's) are not in this peer's numbers, and its system calls are unseen.
//
// The phase timeline has start, end of head (the request task completes), end of body (extract_string
// completes) and deserialized. Connections are counted with the native-handle callback the SDK calls on
// each request before sending: the socket is not open yet when the request opens a new connection.
// The pool takes a connection back on the SDK's thread once the body is read, which can come after the
// caller has the body: a request made right after then finds the pool empty and opens another
// connection (about 1 % of requests at 10 records here); the notes say how many were opened.
// drop_connection() does nothing: the SDK sends a request again on a new connection when a pooled one
// turns out closed by the server.
//
// Deadlines: http_client_config::set_timeout from the case's deadline; the SDK reports a timeout as an
// http_exception. Every exception of the SDK (http_exception, pplx::task_canceled, ...) is caught and
// becomes an error value.
#include <boost/asio/ip/tcp.hpp>
#include <cpprest/http_client.h>

#include <atomic>
#include <memory>
#include <vector>

#include "library_peer.hpp"

namespace ringlab::strategies::detail {
namespace {

namespace client = web::http::client;

class Cpprest final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;

  [[nodiscard]] std::string notes() const override {
    return "runs on cpprest's own thread pool: allocations there are not counted; connections opened so far: " +
           std::to_string(connected_counter()->load(std::memory_order_relaxed)) +
           " (the pool takes a connection back on its own thread after the body, so a request made right after "
           "can find it empty and open another); phases connect, send, wait and head n/a: the SDK tells only "
           "when the head is in; syscalls n/a: the SDK makes its own, unseen";
  }

 private:
  void close_case() override { client_.reset(); }
  Status open_case() override {
    return open_client(client_, "cpprest http_client", [this] {
      client::http_client_config settings;
      settings.set_timeout(timeout());
      settings.set_nativehandle_options([connections = connected_counter()](client::native_handle handle) {
        const auto* socket = static_cast<const boost::asio::ip::tcp::socket*>(handle);
        if (socket != nullptr && !socket->is_open()) connections->fetch_add(1, std::memory_order_relaxed);
      });
      return std::make_unique<client::http_client>(web::uri("http://" + authority(config())), settings);
    });
  }

  Result<Outcome> run_case(http::Timeline* timeline, Check check) override {
    begin(timeline);
    const auto started = std::chrono::steady_clock::now();
    try {
      // What the SDK's request(method, path[, body, type]) overloads build, and with --connection fresh the
      // "Connection: close" that makes the server close the connection after the answer.
      web::http::http_request request(posts() ? web::http::methods::POST : web::http::methods::GET);
      request.set_request_uri(target());
      if (posts()) {
        // Copied into each request, as request(method, path, body, type) does; as bytes, because the
        // std::string overload reads a streambuf<char> through a streambuf<unsigned char> (undefined
        // behaviour that the sanitizers stop on).
        request.set_body(std::vector<unsigned char>(request_body().begin(), request_body().end()));
        request.headers().set_content_type("application/json");
      }
      if (fresh()) request.headers().add(web::http::header_names::connection, "close");
      web::http::http_response response = client_->request(request).get();
      stamp(&http::Timeline::head_parsed);
      if (response.status_code() != web::http::status_codes::OK) [[unlikely]] {
        return fail(label(), "status " + std::to_string(response.status_code()) + " for " + target());
      }
      const std::string body = response.extract_string().get();
      std::optional<std::string_view> length;
      std::string declared;
      if (response.headers().match(web::http::header_names::content_length, declared)) length = declared;
      if (auto sized = check_length(length, body.size()); !sized) return std::unexpected(sized.error());
      return deserialize(body, check);
    } catch (const web::http::http_exception& error) {
      // The SDK's error codes are mostly errno-like values out of their category (an end of stream reads
      // "No such file or directory"); only the deadline's is worth repeating.
      const bool timed_out = error.error_code() == std::errc::timed_out;
      return library_error("cpprest " + std::string(method_name()) + " " + authority(config()) + target() + ": " +
                               error.what() + (timed_out ? " (timed out)" : ""),
                           started);
    } catch (const std::exception& error) {
      return library_error("cpprest " + std::string(method_name()) + " " + authority(config()) + target() + ": " +
                               error.what(),
                           started);
    }
  }

  std::unique_ptr<client::http_client> client_;
  // Shared with the callback the client's settings keep.
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_cpprest(const Recipe& recipe) {
  return std::make_unique<Cpprest>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
