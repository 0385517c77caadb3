#pragma once
// The one way an errno value becomes text in ringlab: "<op> <what>: <description> (<ENAME>)", as in
// "connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)". Every layer's error type formats its
// system-call failures with it, so the text is the same wherever it is read.
//
// Threads: all three are thread-safe. They use glibc's strerrordesc_np and strerrorname_np, which
// return static strings; strerror is not used (it may write a shared buffer and follows the locale).
// Errors: none; an errno value glibc does not know reads "Unknown error" and "E?".
#include <string>
#include <string_view>

namespace ringlab::base {

// Symbolic name of an errno value ("ECONNREFUSED"); "E?" for a value glibc does not know.
[[nodiscard]] const char* errno_name(int code) noexcept;
// Its description ("Connection refused"); "Unknown error" for a value glibc does not know.
[[nodiscard]] const char* errno_description(int code) noexcept;
// "<op> <what>: <description> (<ENAME>)"; "<op>: ..." when `what` is empty. `code` is a positive
// errno value.
[[nodiscard]] std::string errno_message(std::string_view op, std::string_view what, int code);

}  // namespace ringlab::base
