#pragma once
// The values rapidjson's Reader hands the SAX handler (rapidjson_handler.hpp), and their conversion into
// the records' fields: each assign() says whether the value fits the field, and the handler words the error.
// Also the key lookup of a record's table of keys. No allocation but a string field's growth; nothing throws
// but that growth.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <string>
#include <string_view>
#include <type_traits>

namespace ringlab::strategies::detail::rapidjson_sax {

// Index of `key` in `keys`, or -1. Bodies list keys in the usual order, so the key after the previous match
// (`hint`) is tried first.
template <std::size_t N>
int match(std::string_view key, const std::array<std::string_view, N>& keys, std::size_t& hint) noexcept {
  if (hint < N && keys[hint] == key) return static_cast<int>(hint++);
  for (std::size_t i = 0; i < N; ++i) {
    if (keys[i] == key) {
      hint = i + 1;
      return static_cast<int>(i);
    }
  }
  return -1;
}

// A scalar as the Reader delivers it. Integers above INT64_MAX fit no field: kept apart as `huge`.
struct Scalar {
  // object and array: only to report a structure where a field wants a scalar (every assign() refuses them).
  enum class Kind { null, boolean, integer, huge, real, string, object, array } kind = Kind::null;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t huge = 0;
  double real = 0;
  std::string_view text{};

  [[nodiscard]] std::string_view name() const noexcept {
    switch (kind) {
      case Kind::null: return "null";
      case Kind::boolean: return "a boolean";
      case Kind::integer:
      case Kind::huge: return "an integer";
      case Kind::real: return "a number with a fraction or exponent";
      case Kind::string: return "a string";
      case Kind::object: return "an object";
      case Kind::array: return "an array";
    }
    return "?";
  }
};

enum class Problem { none, wrong_type, out_of_range };

inline Problem assign(const Scalar& s, int64_t& out) noexcept {
  if (s.kind == Scalar::Kind::huge) return Problem::out_of_range;
  if (s.kind != Scalar::Kind::integer) return Problem::wrong_type;
  out = s.integer;
  return Problem::none;
}
inline Problem assign(const Scalar& s, int32_t& out) noexcept {
  int64_t wide = 0;
  if (const Problem p = assign(s, wide); p != Problem::none) return p;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return Problem::out_of_range;
  }
  out = static_cast<int32_t>(wide);
  return Problem::none;
}
inline Problem assign(const Scalar& s, double& out) noexcept {
  switch (s.kind) {
    case Scalar::Kind::real: out = s.real; return Problem::none;
    case Scalar::Kind::integer: out = static_cast<double>(s.integer); return Problem::none;
    case Scalar::Kind::huge: out = static_cast<double>(s.huge); return Problem::none;
    default: return Problem::wrong_type;
  }
}
inline Problem assign(const Scalar& s, bool& out) noexcept {
  if (s.kind != Scalar::Kind::boolean) return Problem::wrong_type;
  out = s.boolean;
  return Problem::none;
}
// Assigned, not replaced: the record's string keeps its capacity.
inline Problem assign(const Scalar& s, std::pmr::string& out) {
  if (s.kind != Scalar::Kind::string) return Problem::wrong_type;
  out.assign(s.text);
  return Problem::none;
}

template <class T>
constexpr std::string_view expected_kind() noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    return "a boolean";
  } else if constexpr (std::is_same_v<T, double>) {
    return "a number";
  } else if constexpr (std::is_integral_v<T>) {
    return "an integer";
  } else {
    return "a string";
  }
}

}  // namespace ringlab::strategies::detail::rapidjson_sax
