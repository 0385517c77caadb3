#pragma once
// The names of an enum's values, as the command line and the reports spell them: one table per enum,
// read both ways, so that a name and its parse cannot drift apart. Constant data; no allocation.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace ringlab::base {

template <class Enum, std::size_t N>
struct EnumNames {
  std::array<std::pair<Enum, std::string_view>, N> names;
  std::string_view unknown;  // the name of a value the table lacks (a cast from an integer)

  [[nodiscard]] constexpr std::string_view name(Enum value) const noexcept {
    for (const auto& [each, text] : names) {
      if (each == value) return text;
    }
    return unknown;
  }
  [[nodiscard]] constexpr std::optional<Enum> parse(std::string_view text) const noexcept {
    for (const auto& [each, name_text] : names) {
      if (name_text == text) return each;
    }
    return std::nullopt;
  }
};

}  // namespace ringlab::base
