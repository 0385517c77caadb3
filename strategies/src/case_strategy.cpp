#include "case_strategy.hpp"

#include <optional>

namespace ringlab::strategies::detail {
namespace {

// The parser this thread keeps between fresh clients; empty while one of them has it, or before the
// thread's first fresh client gave one back.
thread_local std::optional<json::Parser> kept_parser;

}  // namespace

json::Parser take_thread_parser() noexcept {
  if (!kept_parser) return json::Parser{};
  json::Parser parser = std::move(*kept_parser);
  kept_parser.reset();
  return parser;
}

void keep_thread_parser(json::Parser&& parser) noexcept {
  if (kept_parser && kept_parser->capacity() >= parser.capacity()) return;  // `parser` is freed by the caller
  kept_parser = std::move(parser);
}

}  // namespace ringlab::strategies::detail
