#pragma once
// Field-by-field equality of two records, for round trips (written and read back) and for one record
// made from another (a registry row from its table row): the test names the fields once, in a generic
// lambda that std::tie's them, and every field gets its own CHECK, so a failure shows that field's two
// values instead of a whole record's "not equal".
//
// Threads: the test's thread (doctest's CHECK and INFO).
#include <doctest/doctest.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace ringlab::testing {

// CHECKs std::get<i>(fields(actual)) == std::get<i>(fields(expected)) for every i. `fields` takes either
// record (a generic lambda when the two types differ) and returns a tuple of its fields, usually by
// std::tie. A failure's INFO says the field's position in that tuple (0-based).
template <class Fields, class Actual, class Expected>
void check_same_fields(const Fields& fields, const Actual& actual, const Expected& expected) {
  const auto actual_fields = fields(actual);
  const auto expected_fields = fields(expected);
  using Tuple = std::remove_cvref_t<decltype(actual_fields)>;
  static_assert(std::tuple_size_v<Tuple> == std::tuple_size_v<std::remove_cvref_t<decltype(expected_fields)>>);
  const auto check_field = [&]<std::size_t i>(std::integral_constant<std::size_t, i>) {
    INFO("field " << i << " of the tuple");
    CHECK(std::get<i>(actual_fields) == std::get<i>(expected_fields));
  };
  [&]<std::size_t... i>(std::index_sequence<i...>) {
    (check_field(std::integral_constant<std::size_t, i>{}), ...);
  }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

}  // namespace ringlab::testing
