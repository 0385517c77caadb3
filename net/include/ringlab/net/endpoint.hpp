#pragma once
// A socket address of a peer or a listener, IPv4 or IPv6.
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "ringlab/net/error.hpp"

namespace ringlab::net {

struct Endpoint {
  sockaddr_storage storage{};
  socklen_t length = 0;

  // Numeric addresses ("127.0.0.1", "::1") and "localhost" only: name resolution would put a
  // blocking DNS lookup into code that is measured. Error op: "resolve", code EINVAL.
  static Result<Endpoint> parse(std::string_view host, uint16_t port);
  // The address a bound socket got from the kernel (port 0 -> the real port).
  static Result<Endpoint> local_of(int fd);

  [[nodiscard]] const sockaddr* addr() const { return reinterpret_cast<const sockaddr*>(&storage); }
  [[nodiscard]] int family() const { return storage.ss_family; }
  [[nodiscard]] uint16_t port() const;
  // "127.0.0.1:8080" or "[::1]:8080"
  [[nodiscard]] std::string to_string() const;
};

}  // namespace ringlab::net
