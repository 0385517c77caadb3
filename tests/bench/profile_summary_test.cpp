// profile_summary.cpp: tools/profile's profile.json read (and refused when it is not that file). The
// section it gives a results page is checked on a page in console_test.cpp.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "ringlab/bench/report/profile_summary.hpp"

namespace rb = ringlab::bench;

TEST_CASE("a profile summary of tools/profile's format is read as written") {
  auto parsed = rb::parse_profile_summary(R"json({"format": "ringlab profile summary 1", "event": "cycles",
    "samples_outside_spans": 3, "cases": [{"case": "views weather 10", "spans": 2, "samples": 10, "kernel": 0.3,
    "user": 0.7, "dsos": [{"dso": "bench", "share": 0.7}, {"dso": "kernel", "share": 0.3}],
    "symbols": [{"symbol": "main", "dso": "bench", "share": 0.7}]}]})json");
  REQUIRE_MESSAGE(parsed.has_value(), parsed.error().message);
  CHECK(parsed->event == "cycles");
  CHECK(parsed->samples_outside_spans == 3);
  REQUIRE(parsed->cases.size() == 1);
  const rb::CaseProfile& c = parsed->cases[0];
  CHECK(c.case_name == "views weather 10");
  CHECK(c.spans == 2);
  CHECK(c.samples == 10);
  CHECK(c.kernel == doctest::Approx(0.3));
  CHECK(c.user == doctest::Approx(0.7));
  REQUIRE(c.dsos.size() == 2);
  CHECK(c.dsos[1].name == "kernel");
  REQUIRE(c.symbols.size() == 1);
  CHECK(c.symbols[0].name == "main");
  CHECK(c.symbols[0].dso == "bench");
  CHECK(c.symbols[0].share == doctest::Approx(0.7));
  const std::string section = rb::render_profile_section(*parsed);
  CHECK(section.find("3 samples fell between the timed segments") != std::string::npos);
  CHECK(section.find("cycles counts while the thread is on a CPU") != std::string::npos);
  // The timer's blind spot is cpu-clock's, not a hardware counter's.
  CHECK(section.find("interrupts off") == std::string::npos);
}

TEST_CASE("a profile summary that is not tools/profile's is refused, naming what is wrong") {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"not json", "not valid JSON"},
      {R"({"format": "other 2"})", "format: \"other 2\", expected \"ringlab profile summary 1\""},
      {R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0})", "cases: missing"},
      {R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
           "cases": [{"case": "x", "spans": 1, "samples": "many"}]})",
       "cases[0].samples: not a number of at least 0"},
      {R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
           "cases": [{"case": "x", "spans": 1, "samples": 3, "kernel": 1.5, "user": 0, "dsos": [], "symbols": []}]})",
       "cases[0].kernel: a share above 1"},
      {R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
           "cases": [{"case": "x", "spans": 1, "samples": 3, "kernel": 1, "user": 0, "dsos": [{"share": 1}],
                      "symbols": []}]})",
       "cases[0].dsos[0].dso: missing"},
  };
  for (const auto& [text, message] : rows) {
    CAPTURE(text);
    auto parsed = rb::parse_profile_summary(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().message == message);
  }
}
