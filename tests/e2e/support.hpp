#pragma once
// What the end-to-end tests share: an in-process server, a blocking raw-socket client with its own
// small HTTP response reader (independent of http/, so the server is not checked by the code it
// shares), temporary folders, and file helpers; child processes, killed by PID on every path, come
// from tests/support/process.hpp.
//
// Every wait is bounded (kIoTimeout): a server that does not answer fails the test, never hangs it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../support/process.hpp"
#include "ringlab/net/socket.hpp"
#include "ringlab/server/server.hpp"

namespace ringlab::e2e {

using namespace std::chrono_literals;

inline constexpr std::chrono::milliseconds kIoTimeout = 20s;

// A server running in this process on a free loopback port; stopped and joined on destruction.
class TestServer {
 public:
  explicit TestServer(server::ServerOptions options = {});
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  [[nodiscard]] uint16_t port() const { return server_->port(); }
  [[nodiscard]] server::Server& get() { return *server_; }
  [[nodiscard]] std::string url(std::string_view target) const;
  // Stops, joins, and returns the final counters.
  server::ServerStats stop();

 private:
  std::unique_ptr<server::Server> server_;
  bool stopped_ = false;
};

struct Response {
  int status = 0;
  std::string head;  // status line and headers, through the blank line
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // de-chunked
  bool chunked = false;
  std::vector<std::size_t> chunk_sizes;

  // Case-insensitive; the first one.
  [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
};

// One TCP connection with blocking sockets and poll()-bounded waits.
class RawClient {
 public:
  explicit RawClient(uint16_t port);
  // Connects and sends `first_bytes` before anything else happens (a later connection is accepted after it).
  RawClient(uint16_t port, std::string_view first_bytes);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send(std::string_view bytes);
  // Sends GET `target` (get_request) and reads its response.
  Response get(std::string_view target);
  // Next response on the connection (bytes after it stay buffered for the next call).
  // `head_request`: the response has no body whatever its headers say. Fails the test on timeout,
  // on a close before the response is complete, or on bytes that are not a response.
  Response read_response(bool head_request = false);
  // Everything until the server closes (or kIoTimeout): what a response to a closing request leaves.
  std::string read_until_close();
  // True when the server closed the connection (EOF or reset) within `within`; false if it is
  // still open then. Buffered or arriving bytes are discarded.
  bool closed_by_peer(std::chrono::milliseconds within = kIoTimeout);
  // Sets SO_LINGER 0 and closes: the server sees a reset.
  void reset();
  [[nodiscard]] int fd() const { return fd_; }

 private:
  bool fill();  // one recv into buffer_; false on EOF
  int fd_ = -1;
  std::string buffer_;
};

// "GET /path HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
std::string get_request(std::string_view target, std::string_view extra_headers = {});
std::string post_request(std::string_view target, std::string_view body, std::string_view content_type,
                         std::string_view extra_headers = {});

// Options of a server whose /proxy fetches from `upstream` ("http://host:port").
server::ServerOptions proxying_to(std::string upstream);
// The default options but for `threads` worker threads.
server::ServerOptions with_threads(unsigned threads);

// The message of the JSON error that answers GET `target` on `client`, whose status is checked to be
// `status`; fails the test if the body is not a JSON error.
std::string error_answer(RawClient& client, std::string_view target, int status);

// Child, run, ServerBinary, start_server_binary, resident_bytes and open_fds: tests/support/process.hpp.
using testing::Child;
using testing::open_fds;
using testing::resident_bytes;
using testing::run;
using testing::ServerBinary;
using testing::start_server_binary;

// A temporary folder (mode 0755: readable by servers that drop privileges), removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

void write_file(const std::string& path, std::string_view bytes);
std::string read_file(const std::string& path);

// A plain listener (no SO_REUSEPORT) on a free loopback port that never accepts: the kernel
// completes handshakes and nobody ever answers. Holds its port against other listeners while it
// lives; move-only, as the socket it owns.
class SilentListener {
 public:
  SilentListener();
  [[nodiscard]] uint16_t port() const { return port_; }

 private:
  net::Fd fd_;
  uint16_t port_ = 0;
};

// A port nothing listens on (bound, then closed: the kernel will refuse connections to it).
uint16_t unused_port();

// True when a TCP connect to 127.0.0.1:port succeeds now.
bool accepts_connections(uint16_t port);

// nginx (/usr/sbin/nginx) with one worker on a free loopback port, serving weather_N.json for each
// of `counts` (the bytes our server's /weather?count=N answers) from a temporary folder. Fails the
// test when nginx is missing or does not start; stopped (SIGTERM to the master, by PID) on
// destruction.
class Nginx {
 public:
  explicit Nginx(std::span<const uint32_t> counts);
  [[nodiscard]] std::string url(std::string_view path) const;
  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] pid_t pid() const { return child_->pid(); }

 private:
  TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<Child> child_;
};

// Number of elements of a top-level JSON array (simdjson); -1 when it is not a JSON array.
long json_array_size(const std::string& json);
// The "error" string of {"error": "..."}; nullopt when the body is not that.
std::optional<std::string> json_error(const std::string& json);

// Deterministic bytes of a given size (for echo bodies).
std::string pattern_bytes(std::size_t size, unsigned seed = 1);

// The longest that `samples` sleeps of `step` overran it: how late this machine wakes a sleeping thread
// now. For tests whose pauses between sends must stay below a server's timeout, so that the timeout
// is chosen against the machine instead of a guess.
std::chrono::nanoseconds longest_oversleep(std::chrono::milliseconds step, int samples = 20);

}  // namespace ringlab::e2e
