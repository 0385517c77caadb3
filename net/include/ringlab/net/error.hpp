#pragma once
// Errors of the net/ layer.
//
// Convention: a function that can fail returns Result<T> (std::expected<T, Error>). An Error names
// the operation that failed ("connect", "recv", "io_uring_queue_init", ...), carries the positive
// errno the kernel gave (a CQE's -res, or errno right after a syscall) and, where one is known, the
// peer. A deadline that expires is reported as ETIMEDOUT for the operation it cut short. Nothing in
// net/ retries on its own: a short send is continued (it is not an error), anything else is returned.
#include <expected>
#include <string>

namespace ringlab::net {

struct Error {
  const char* op = "";  // a string literal: lives forever
  int code = 0;         // positive errno value
  std::string peer;     // "127.0.0.1:8080" or "[::1]:80"; empty when no peer is involved

  // "connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)" (base/errno_text.hpp)
  [[nodiscard]] std::string message() const;
};

template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

// Shorthand for the error branch: `return fail("recv", -cqe->res, peer);`
[[nodiscard]] inline std::unexpected<Error> fail(const char* op, int code, std::string peer = {}) {
  return std::unexpected<Error>(Error{op, code, std::move(peer)});
}

}  // namespace ringlab::net
