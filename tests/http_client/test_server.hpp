#pragma once
// A loopback HTTP/1.1 peer for client tests, written with plain blocking sockets so the client is
// tested against something that shares none of its code.
//
// Each accepted connection runs the test's handler on its own std::thread. Every socket has 5 s
// receive and send timeouts and the accept loop polls a stop flag, so a failing test ends instead
// of hanging. The server records every request it read, whole, for the test to inspect.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../support/net_loopback_acceptor.hpp"

namespace ringlab::http::testing {

class ServerConnection {
 public:
  explicit ServerConnection(int fd) : fd_(fd) {
    timeval tv{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~ServerConnection() { close(); }
  ServerConnection(const ServerConnection&) = delete;
  ServerConnection& operator=(const ServerConnection&) = delete;

  // One whole request (head and Content-Length body); nullopt when the client closed or went silent.
  std::optional<std::string> read_request() {
    std::size_t head_end;
    while ((head_end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    head_end += 4;
    const std::size_t body = content_length(std::string_view(pending_).substr(0, head_end));
    while (pending_.size() < head_end + body) {
      if (!fill()) return std::nullopt;
    }
    std::string request = pending_.substr(0, head_end + body);
    pending_.erase(0, head_end + body);
    return request;
  }

  // True when the client closed its end (reads 0) within the socket timeout.
  bool wait_for_close() {
    char byte;
    return ::recv(fd_, &byte, 1, 0) == 0;
  }

  bool write(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Closes with an RST rather than a FIN.
  void reset() {
    linger option{.l_onoff = 1, .l_linger = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &option, sizeof(option));
    close();
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  static std::size_t content_length(std::string_view head) {
    std::string lower(head);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t at = lower.find("\r\ncontent-length:");
    if (at == std::string::npos) return 0;
    return std::stoul(lower.substr(at + 17));
  }

  bool fill() {
    char chunk[64 * 1024];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    pending_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  std::string pending_;
};

class TestServer {
 public:
  using Handler = std::function<void(ServerConnection&, TestServer&)>;

  explicit TestServer(Handler handler)
      : handler_(std::move(handler)), acceptor_([this](int fd) {
          ++accepted_;
          connections_.emplace_back([this, fd] {
            ServerConnection connection(fd);
            handler_(connection, *this);
          });
        }) {}

  ~TestServer() {
    acceptor_.stop();
    for (std::thread& t : connections_) t.join();
  }

  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  [[nodiscard]] uint16_t port() const { return acceptor_.port(); }
  [[nodiscard]] std::string url(std::string_view target = "/") const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.port()) + std::string(target);
  }
  [[nodiscard]] int accepted() const { return accepted_.load(); }

  void record(std::string request) {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(request));
  }
  [[nodiscard]] std::vector<std::string> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  Handler handler_;
  std::atomic<int> accepted_{0};
  std::vector<std::thread> connections_;  // touched by the acceptor thread only, joined after it
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  ringlab::testing::LoopbackAcceptor acceptor_;  // last: its thread starts once the rest exists
};

// Response builders.
inline std::string with_length(std::string_view body, std::string_view extra_headers = {}) {
  std::string response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ";
  response += std::to_string(body.size());
  response += "\r\n";
  response += extra_headers;
  response += "\r\n";
  response += body;
  return response;
}

// Chunks of the given sizes in turn (cycling), then the last chunk.
inline std::string chunked(std::string_view body, const std::vector<std::size_t>& sizes) {
  std::string response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::size_t at = 0, turn = 0;
  char hex[32];
  while (at < body.size()) {
    const std::size_t size = std::min(sizes[turn++ % sizes.size()], body.size() - at);
    std::snprintf(hex, sizeof(hex), "%zx", size);
    response += hex;
    response += "\r\n";
    response.append(body.substr(at, size));
    response += "\r\n";
    at += size;
  }
  response += "0\r\n\r\n";
  return response;
}

inline std::string body_of(std::size_t size, unsigned seed = 0) {
  std::string body(size, '\0');
  for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<char>('a' + (i * 7 + seed) % 26);
  return body;
}

// Serves every request on the connection with the same response until the client closes.
inline TestServer::Handler respond_with(std::string response) {
  return [response = std::move(response)](ServerConnection& c, TestServer& server) {
    while (auto request = c.read_request()) {
      server.record(std::move(*request));
      if (!c.write(response)) return;
    }
  };
}

enum class HangUp { close, reset };

// Answers the first request with `writes`, one send each, then hangs up without saying so in the
// response: with a FIN, or with an RST once the bytes had time to arrive. With nothing to write,
// a peer that closes (or resets) before responding.
inline TestServer::Handler answer_once_then_hang_up(std::vector<std::string> writes, HangUp how = HangUp::close) {
  return [writes = std::move(writes), how](ServerConnection& c, TestServer& server) {
    auto request = c.read_request();
    if (!request) return;
    server.record(std::move(*request));
    for (const std::string& bytes : writes) c.write(bytes);
    if (how == HangUp::reset) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      c.reset();
    } else {
      c.close();
    }
  };
}

}  // namespace ringlab::http::testing
