#pragma once
// Errors of the bench/ layer.
//
// Convention: a function that can fail returns Result<T> (std::expected<T, Error>). The message is
// complete on its own and names what failed and on what ("open results/2024-01-01T12-00-00/report.json:
// Permission denied", "server: no 'listening on' line within 5000 ms"), so callers print it as is or
// prefix their own context with Error::wrap. Nothing in bench/ retries on its own.
#include <expected>
#include <string>
#include <string_view>
#include <utility>

#include "ringlab/base/errno_text.hpp"

namespace ringlab::bench {

struct Error {
  std::string message;

  // "<context>: <message>", for adding the caller's step to an error it passes on.
  [[nodiscard]] Error wrap(std::string_view context) const {
    std::string out(context);
    out += ": ";
    out += message;
    return Error{std::move(out)};
  }
};

template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

[[nodiscard]] inline std::unexpected<Error> fail(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

// "<op> <what>: <description> (<ENAME>)" for a failed system call; `code` is a positive errno value.
// The project's one errno formatter (base/errno_text.hpp), thread-safe.
using base::errno_message;

}  // namespace ringlab::bench
