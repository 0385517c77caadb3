#include "support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <simdjson.h>

#include "ringlab/server/body_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ringlab::e2e {
namespace {

using Clock = bench::ProcessClock;
using bench::poll_timeout_ms;

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

// ---- TestServer ----

TestServer::TestServer(server::ServerOptions options) {
  auto started = server::Server::start(options);
  REQUIRE_MESSAGE(started.has_value(), "server did not start: ", (started ? std::string() : started.error().message));
  server_ = std::move(*started);
}

TestServer::~TestServer() { (void)stop(); }

std::string TestServer::url(std::string_view target) const {
  return "http://127.0.0.1:" + std::to_string(port()) + std::string(target);
}

server::ServerStats TestServer::stop() {
  if (!stopped_) {
    server_->stop();
    auto result = server_->wait();
    stopped_ = true;
    CHECK_MESSAGE(result.has_value(), "server failed: ", result ? "" : result.error().message);
  }
  return server_->stats();
}

// ---- Response ----

std::optional<std::string> Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequal(key, name)) return value;
  }
  return std::nullopt;
}

// ---- RawClient ----

RawClient::RawClient(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE_MESSAGE(fd_ >= 0, "socket: ", std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  REQUIRE_MESSAGE(rc == 0, "connect 127.0.0.1:", port, ": ", std::strerror(errno));
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawClient::RawClient(uint16_t port, std::string_view first_bytes) : RawClient(port) { send(first_bytes); }

RawClient::~RawClient() {
  if (fd_ >= 0) ::close(fd_);
}

void RawClient::send(std::string_view bytes) {
  const auto deadline = Clock::now() + kIoTimeout;
  while (!bytes.empty()) {
    pollfd p{fd_, POLLOUT, 0};
    int ready = ::poll(&p, 1, poll_timeout_ms(deadline));
    REQUIRE_MESSAGE(ready > 0, "send: timed out with ", bytes.size(), " bytes left");
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    REQUIRE_MESSAGE(n > 0, "send: ", std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

Response RawClient::get(std::string_view target) {
  send(get_request(target));
  return read_response();
}

bool RawClient::fill() {
  const auto deadline = Clock::now() + kIoTimeout;
  char chunk[65536];
  while (true) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, poll_timeout_ms(deadline));
    // FAIL, not REQUIRE: this runs once per receive, and only failures should count.
    if (ready <= 0) FAIL("recv: nothing from the server for ", kIoTimeout.count(), " ms");
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0 && errno == ECONNRESET) return false;
    if (n < 0) FAIL("recv: ", std::strerror(errno));
    if (n == 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
}

Response RawClient::read_response(bool head_request) {
  Response response;
  std::size_t end = 0;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill()) FAIL("connection closed before a response head; got: '", buffer_, "'");
  }
  response.head = buffer_.substr(0, end + 4);
  buffer_.erase(0, end + 4);

  std::istringstream lines(response.head);
  std::string line;
  std::getline(lines, line);
  if (line.rfind("HTTP/1.", 0) != 0) FAIL("not a status line: '", line, "'");
  if (line.size() < 12) FAIL("short status line: '", line, "'");
  response.status = std::stoi(line.substr(9, 3));
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    auto colon = line.find(':');
    if (colon == std::string::npos) FAIL("bad header line: '", line, "'");
    response.headers.emplace_back(line.substr(0, colon), trim(std::string_view(line).substr(colon + 1)));
  }
  if (response.status / 100 == 1 || head_request || response.status == 204 || response.status == 304) {
    return response;
  }

  auto need = [&](std::size_t n) {
    while (buffer_.size() < n) {
      if (!fill()) FAIL("connection closed inside a response body");
    }
  };
  auto encoding = response.header("Transfer-Encoding");
  if (encoding && iequal(*encoding, "chunked")) {
    response.chunked = true;
    // `at` walks the buffer; consumed bytes are erased once at the end (erasing per chunk would be
    // quadratic for bodies of a million one-byte chunks).
    std::size_t at = 0;
    auto need_from = [&](std::size_t n) {
      while (buffer_.size() < at + n) {
        if (!fill()) FAIL("connection closed inside a chunked body");
      }
    };
    auto line_from = [&]() {
      std::size_t line_end = 0;
      while ((line_end = buffer_.find("\r\n", at)) == std::string::npos) {
        if (!fill()) FAIL("connection closed inside chunk framing");
      }
      return line_end;
    };
    while (true) {
      const std::size_t line_end = line_from();
      const std::string_view size_line = std::string_view(buffer_).substr(at, line_end - at);
      const std::string size_text(size_line.substr(0, size_line.find(';')));
      if (size_text.empty()) FAIL("empty chunk size");
      const std::size_t size = std::stoul(size_text, nullptr, 16);
      at = line_end + 2;
      if (size == 0) {
        // Trailers (none expected) end with an empty line.
        const std::size_t trailer_end = line_from();
        if (trailer_end != at) FAIL("unexpected trailer: '", buffer_.substr(at, trailer_end - at), "'");
        buffer_.erase(0, at + 2);
        return response;
      }
      need_from(size + 2);
      response.body.append(buffer_, at, size);
      if (buffer_.compare(at + size, 2, "\r\n") != 0) FAIL("chunk data not followed by CRLF");
      at += size + 2;
      response.chunk_sizes.push_back(size);
    }
  }
  if (auto length = response.header("Content-Length")) {
    std::size_t n = std::stoul(*length);
    need(n);
    response.body = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return response;
  }
  // Close-delimited.
  while (fill()) {
  }
  response.body = std::move(buffer_);
  buffer_.clear();
  return response;
}

std::string RawClient::read_until_close() {
  while (fill()) {
  }
  return std::exchange(buffer_, {});
}

bool RawClient::closed_by_peer(std::chrono::milliseconds within) {
  const auto deadline = Clock::now() + within;
  char chunk[65536];
  buffer_.clear();
  while (true) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, poll_timeout_ms(deadline));
    if (ready == 0) return false;
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0 && (errno == ECONNRESET || errno == EPIPE)) return true;
    if (n < 0 && errno != EAGAIN && errno != EINTR) return true;
  }
}

void RawClient::reset() {
  linger hard{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd_);
  fd_ = -1;
}

std::string get_request(std::string_view target, std::string_view extra_headers) {
  std::string request = "GET ";
  request += target;
  request += " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  request += extra_headers;
  request += "\r\n";
  return request;
}

server::ServerOptions proxying_to(std::string upstream) {
  server::ServerOptions options;
  options.upstream = std::move(upstream);
  return options;
}

server::ServerOptions with_threads(unsigned threads) {
  server::ServerOptions options;
  options.threads = threads;
  return options;
}

std::string error_answer(RawClient& client, std::string_view target, int status) {
  const Response response = client.get(target);
  CHECK(response.status == status);
  auto message = json_error(response.body);
  REQUIRE(message.has_value());
  return *message;
}

std::string post_request(std::string_view target, std::string_view body, std::string_view content_type,
                         std::string_view extra_headers) {
  std::string request = "POST ";
  request += target;
  request += " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ";
  request += std::to_string(body.size());
  request += "\r\n";
  if (!content_type.empty()) {
    request += "Content-Type: ";
    request += content_type;
    request += "\r\n";
  }
  request += extra_headers;
  request += "\r\n";
  request += body;
  return request;
}

// ---- files ----

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "ringlab-e2e-XXXXXX").string();
  REQUIRE_MESSAGE(::mkdtemp(pattern.data()) != nullptr, "mkdtemp: ", std::strerror(errno));
  path_ = pattern;
  // Servers started as root hand requests to unprivileged workers: they must be able to read here.
  ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  REQUIRE_MESSAGE(out.good(), "cannot write ", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
  out.close();
  ::chmod(path.c_str(), 0644);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

SilentListener::SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  REQUIRE(fd_.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  // Room for the connections a load run opens again after each timeout: never accepted, each stays
  // in the queue, and a full queue would turn them into connect timeouts.
  REQUIRE(::listen(fd_.get(), 128) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length) == 0);
  port_ = ntohs(address.sin_port);
}

uint16_t unused_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

long json_array_size(const std::string& json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return -1;
  simdjson::ondemand::array array;
  if (doc.get_array().get(array) != simdjson::SUCCESS) return -1;
  long n = 0;
  for (auto element : array) {
    simdjson::ondemand::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) return -1;
    ++n;
  }
  return n;
}

std::optional<std::string> json_error(const std::string& json) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return std::nullopt;
  std::string_view message;
  if (doc["error"].get_string().get(message) != simdjson::SUCCESS) return std::nullopt;
  return std::string(message);
}

std::string pattern_bytes(std::size_t size, unsigned seed) {
  std::string bytes(size, '\0');
  uint32_t state = seed * 2654435761u + 1;
  for (char& c : bytes) {
    state = state * 1664525u + 1013904223u;
    c = static_cast<char>(state >> 24);
  }
  return bytes;
}

std::chrono::nanoseconds longest_oversleep(std::chrono::milliseconds step, int samples) {
  std::chrono::nanoseconds longest{0};
  for (int i = 0; i < samples; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(step);
    longest = std::max(longest, std::chrono::steady_clock::now() - start - step);
  }
  return longest;
}

bool accepts_connections(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

namespace {
constexpr const char* kNginx = "/usr/sbin/nginx";
}  // namespace

Nginx::Nginx(std::span<const uint32_t> counts) {
  REQUIRE_MESSAGE(::access(kNginx, X_OK) == 0, kNginx,
                  " is missing: the nginx peer tests need nginx (install nginx-light; tools/setup does)");
  const std::string www = dir_.file("www");
  REQUIRE(::mkdir(www.c_str(), 0755) == 0);
  for (uint32_t count : counts) {
    write_file(www + "/weather_" + std::to_string(count) + ".json",
               server::generate_body({server::Route::weather, server::Format::json, count}).bytes);
  }
  port_ = unused_port();
  const std::string d = dir_.path();
  std::string config;
  // Started as root, nginx drops its worker to an unprivileged user unless told otherwise.
  if (::geteuid() == 0) config += "user root;\n";
  config += "daemon off;\nmaster_process on;\nworker_processes 1;\n";
  config += "pid " + d + "/nginx.pid;\nerror_log " + d + "/error.log warn;\n";
  config += "events { worker_connections 128; }\n";
  config += "http {\n  access_log off;\n  default_type application/json;\n  keepalive_requests 100000;\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    config += std::string("  ") + temp + "_temp_path " + d + "/" + temp + ";\n";
  }
  config += "  server {\n    listen 127.0.0.1:" + std::to_string(port_) + ";\n    root " + www +
            ";\n    location / { }\n  }\n}\n";
  write_file(dir_.file("nginx.conf"), config);
  child_ = std::make_unique<Child>(
      std::vector<std::string>{kNginx, "-p", d, "-c", dir_.file("nginx.conf"), "-e", dir_.file("error.log")});
  for (int attempt = 0; attempt < 1000 && !accepts_connections(port_); ++attempt) {
    if (auto exited = child_->wait(10ms)) {
      FAIL("nginx exited with ", *exited, ": ", read_file(dir_.file("error.log")));
    }
  }
  REQUIRE_MESSAGE(accepts_connections(port_), "nginx did not start listening on port ", port_);
}

std::string Nginx::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

}  // namespace ringlab::e2e
