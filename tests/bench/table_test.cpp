// The markdown table renderer shared by every table bench prints.
#include "ringlab/bench/core/table.hpp"

#include <doctest/doctest.h>

#include <string>

namespace rb = ringlab::bench;

TEST_CASE("display width counts code points, so μs pads like ns") {
  CHECK(rb::display_width("ns") == 2);
  CHECK(rb::display_width("μs") == 2);
  CHECK(rb::display_width("") == 0);
}

TEST_CASE("columns are padded to their widest cell, numbers right-aligned under a ---: rule") {
  const std::string table = rb::render_table_columns({{"Method", false, {"views", "string_copy"}},
                                                      {"Mean", true, {"1.5 μs", "12.25 μs"}}});
  CHECK(table ==
        "| Method      |     Mean |\n"
        "|-------------|---------:|\n"
        "| views       |   1.5 μs |\n"
        "| string_copy | 12.25 μs |\n");
  CHECK(rb::render_table_columns({}).empty());
}
