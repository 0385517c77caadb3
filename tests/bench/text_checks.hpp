#pragma once
// Checks on rendered text (a table, a page, the findings, a run's output): the phrases it must hold.
// Header-only; no state.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string_view>

namespace ringlab::bench::testing {

// One CHECK per phrase that `text` holds it; the failure of one names the phrase missing. The text
// itself is the caller's to show (INFO), once for all its phrases.
inline void check_contains(std::string_view text, std::initializer_list<std::string_view> phrases) {
  for (const std::string_view phrase : phrases) {
    INFO("missing: " << phrase);
    CHECK(text.find(phrase) != std::string_view::npos);
  }
}

}  // namespace ringlab::bench::testing
