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
// Threads: the SDK does the work on its own thread pool (crossplat::threadpool, Boost.Asio: one per
// process, its threads running the io_service that sends, receives, fires the deadline timer and runs
// every task continuation); the calling thread only waits on the tasks. Left to itself the SDK makes the
// pool on first use with 40 threads, which then all share the client's one CPU: each request wakes most
// of them (measured at 10 records: 32 context switches per request against 7 with a pool of one, and
// 1.5x the CPU time over all threads), and they wait on that CPU's run queue instead of running. So the
// first client sizes the pool through the SDK's documented crossplat::threadpool::initialize_with_threads,
// to the CPUs its thread may run on (one when bench pins the client), before anything of the SDK starts
// it; the threads inherit that thread's affinity, so they run on the client's CPUs. A pool that was made
// before (by code outside this peer) keeps its size; the notes say which.
// CPU time: the pool threads' CPU is the request's, so io_counters() reports it in the worker_* fields
// (since setup): one task per pool thread reads that thread's getrusage(RUSAGE_THREAD), each held until
// all have arrived so that every thread takes exactly one. With --client-threads each copy reports the
// one shared pool, so bench would count it once per copy; a fresh client does not read it (open_case()).
// Allocations are counted per thread, so those the pool's threads make (most of the SDK's) are not in
// this peer's numbers, and its system calls are unseen.
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
#include <boost/asio/post.hpp>
#include <cpprest/http_client.h>
#include <pplx/threadpool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "library_peer.hpp"
#include "ringlab/base/cpus.hpp"

namespace ringlab::strategies::detail {
namespace {

namespace client = web::http::client;

// The SDK's pool threads: how many, 0 when the pool was made before this peer could size it.
std::size_t sdk_pool_threads() {
  static const std::size_t threads = [] {
    // Once per process, on the thread that makes the first client: the pool's threads inherit its CPUs.
    const std::size_t cpus = std::max<std::size_t>(1, base::allowed_cpus().size());
    try {
      crossplat::threadpool::initialize_with_threads(cpus);
      return cpus;
    } catch (const std::exception&) {
      return std::size_t{0};  // made already, at the SDK's size or another's
    }
  }();
  return threads;
}

// The pool threads' CPU time and minor faults since each started, summed; nullopt when not every thread
// answered within `patience` (one busy with a request longer than that).
std::optional<IoCounters> sdk_pool_usage(std::size_t threads, std::chrono::milliseconds patience) {
  struct Gathering {
    std::mutex mutex;
    std::condition_variable all_in;
    std::size_t arrived = 0;
    IoCounters sum;
  };
  // Shared with the tasks: one that is still waiting when this call gives up keeps it alive.
  auto gathering = std::make_shared<Gathering>();
  const auto everyone = [gathering, threads] { return gathering->arrived >= threads; };
  for (std::size_t i = 0; i < threads; ++i) {
    boost::asio::post(crossplat::threadpool::shared_instance().service(), [gathering, everyone, patience] {
      IoCounters mine;
      take_thread_usage(mine);
      std::unique_lock lock(gathering->mutex);
      gathering->sum.worker_user_ns += mine.worker_user_ns;
      gathering->sum.worker_system_ns += mine.worker_system_ns;
      gathering->sum.worker_minor_faults += mine.worker_minor_faults;
      ++gathering->arrived;
      gathering->all_in.notify_all();
      // Held until every thread has one, so that none takes two.
      gathering->all_in.wait_for(lock, patience, everyone);
    });
  }
  std::unique_lock lock(gathering->mutex);
  if (!gathering->all_in.wait_for(lock, patience, everyone)) return std::nullopt;
  return gathering->sum;
}

class Cpprest final : public LibraryPeer {
 public:
  using LibraryPeer::LibraryPeer;

  [[nodiscard]] IoCounters io_counters() const override {
    IoCounters counters = LibraryPeer::io_counters();
    if (counts_pool_) {
      // A reading that timed out keeps the last one: the counters never go back.
      if (auto usage = sdk_pool_usage(pool_threads_, kUsagePatience)) pool_usage_ = *usage;
      counters.worker_user_ns = pool_usage_.worker_user_ns - pool_base_.worker_user_ns;
      counters.worker_system_ns = pool_usage_.worker_system_ns - pool_base_.worker_system_ns;
      counters.worker_minor_faults = pool_usage_.worker_minor_faults - pool_base_.worker_minor_faults;
    }
    return counters;
  }

  [[nodiscard]] std::string notes() const override {
    const std::string pool =
        pool_threads_ > 0 ? "cpprest's thread pool sized to " + std::to_string(pool_threads_) +
                                " thread(s), on the client's CPUs, their CPU time " +
                                (counts_pool_ ? "counted" : "not counted (a fresh client)")
                          : std::string("cpprest's thread pool made before this peer, its size and CPU time unknown");
    return pool + "; allocations on the pool are not counted; connections opened so far: " +
           std::to_string(connected_counter()->load(std::memory_order_relaxed)) +
           " (the pool takes a connection back on its own thread after the body, so a request made right after "
           "can find it empty and open another); phases connect, send, wait and head n/a: the SDK tells only "
           "when the head is in; syscalls n/a: the SDK makes its own, unseen";
  }

 private:
  void close_case() override { client_.reset(); }
  Status open_case() override {
    pool_threads_ = sdk_pool_threads();
    // A fresh client (--client fresh) is set up and read inside the timed op: a reading there would add
    // a round trip to the pool to every request, so its pool CPU is left out.
    counts_pool_ = pool_threads_ > 0 && config().client == Client::pooled;
    if (counts_pool_) {
      pool_usage_ = sdk_pool_usage(pool_threads_, kUsagePatience).value_or(IoCounters{});
      pool_base_ = pool_usage_;
    }
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

  // How long io_counters() waits for every pool thread to read its usage (they are idle between requests).
  static constexpr std::chrono::milliseconds kUsagePatience{1000};

  std::unique_ptr<client::http_client> client_;
  std::size_t pool_threads_ = 0;  // sdk_pool_threads(): 0 when the pool's size is not this peer's
  bool counts_pool_ = false;      // io_counters() reports the pool's CPU time (a pooled client)
  IoCounters pool_base_;           // the pool's usage at setup
  mutable IoCounters pool_usage_;  // its last reading
};

}  // namespace

// Every row of this library (peer_recipes.hpp): the method is the row's.
std::unique_ptr<Strategy> make_cpprest(const Recipe& recipe) {
  return std::make_unique<Cpprest>(recipe.name, recipe.method);
}

}  // namespace ringlab::strategies::detail
