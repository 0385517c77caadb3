#include "ringlab/net/endpoint.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

namespace ringlab::net {
namespace {

std::string describe(std::string_view host, uint16_t port) {
  std::string text(host);
  text += ':';
  text += std::to_string(port);
  return text;
}

}  // namespace

Result<Endpoint> Endpoint::parse(std::string_view host, uint16_t port) {
  // inet_pton needs a terminated string; no valid numeric address is longer than INET6_ADDRSTRLEN.
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") host = "127.0.0.1";
  char text[INET6_ADDRSTRLEN + 1];
  if (host.empty() || host.size() >= sizeof(text) || host.find('\0') != std::string_view::npos) {
    return fail("resolve", EINVAL, describe(host, port));
  }
  std::memcpy(text, host.data(), host.size());
  text[host.size()] = '\0';

  Endpoint endpoint;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&endpoint.storage);
  if (::inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    endpoint.length = sizeof(sockaddr_in);
    return endpoint;
  }
  endpoint.storage = {};
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&endpoint.storage);
  if (::inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    endpoint.length = sizeof(sockaddr_in6);
    return endpoint;
  }
  return fail("resolve", EINVAL, describe(host, port));
}

Result<Endpoint> Endpoint::local_of(int fd) {
  Endpoint endpoint;
  endpoint.length = sizeof(endpoint.storage);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&endpoint.storage), &endpoint.length) != 0) {
    return fail("getsockname", errno);
  }
  return endpoint;
}

uint16_t Endpoint::port() const {
  switch (family()) {
    case AF_INET: return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
    case AF_INET6: return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
    default: return 0;
  }
}

std::string Endpoint::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  switch (family()) {
    case AF_INET:
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text, sizeof(text));
      return describe(text, port());
    case AF_INET6: {
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text, sizeof(text));
      std::string bracketed = "[";
      bracketed += text;
      bracketed += ']';
      return describe(bracketed, port());
    }
    default: return "(no address)";
  }
}

}  // namespace ringlab::net
