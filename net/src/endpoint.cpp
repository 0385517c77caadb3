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

// Sets `endpoint` to the numeric address `text` of `family` (AF_INET in a sockaddr_in, AF_INET6 in
// a sockaddr_in6, whose address, family and port fields the member pointers name) and `port`;
// false, with `endpoint` cleared, when `text` is no address of that family.
template <class Address, class Bytes>
bool set_numeric(Endpoint& endpoint, const char* text, uint16_t port, int family, Bytes Address::*address,
                 sa_family_t Address::*family_field, in_port_t Address::*port_field) {
  endpoint.storage = {};
  auto* socket_address = reinterpret_cast<Address*>(&endpoint.storage);
  if (::inet_pton(family, text, &(socket_address->*address)) != 1) return false;
  socket_address->*family_field = static_cast<sa_family_t>(family);
  socket_address->*port_field = htons(port);
  endpoint.length = sizeof(Address);
  return true;
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
  if (set_numeric(endpoint, text, port, AF_INET, &sockaddr_in::sin_addr, &sockaddr_in::sin_family,
                  &sockaddr_in::sin_port) ||
      set_numeric(endpoint, text, port, AF_INET6, &sockaddr_in6::sin6_addr, &sockaddr_in6::sin6_family,
                  &sockaddr_in6::sin6_port)) {
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
