// The HTML report (bench/src/report/html.cpp): one self-contained page that says what the markdown
// report says, with the plots inline.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ringlab/bench/report/reporters.hpp"
#include "../support/bench_cases.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::bench::testing::check_contains;

namespace {

rb::Report sample_report() {
  rb::Report r = ringlab::testing::measured_report(ringlab::testing::prototype_case("system", 40),
                                                   {{"string_copy", 10, {100000, 101000, 99000, 100500, 400000}, true},
                                                    {"views<&>", 10, {90000, 91000, 89000, 90500, 90200}, false},
                                                    {"string_copy", 1000, {300000, 310000, 290000}, true},
                                                    {"views<&>", 1000, {}, false}});
  // The phases the page's bars are drawn from: send and wait take 75 μs, deserialization the rest of
  // the median, so that they stack to it.
  for (rb::CaseResult& c : r.cases) {
    c.phases.ops_sampled = 100;
    c.phases.send = 15000;
    c.phases.wait = 60000;
    c.phases.deserialize = c.stats.median - 75000;
  }
  r.environment.timestamp = "2024-05-01T12:00:00Z";
  r.environment.cpu = "AMD EPYC";
  r.environment.warnings = {"Debug build: numbers are not representative"};
  r.config.suite = "get";
  return r;
}

std::size_t count(const std::string& text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the page is self-contained: no script, nothing fetched, the styles inline") {
  const std::string page = rb::render_html(sample_report());
  CHECK(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  CHECK(page.ends_with("</body>\n</html>\n"));
  CHECK(page.find("<meta charset=\"utf-8\">") != std::string::npos);
  CHECK(page.find("<style>") != std::string::npos);
  for (const char* fetches : {"<script", "src=", "href=", "<link", "@import", "url("}) {
    INFO(fetches);
    CHECK(page.find(fetches) == std::string::npos);
  }
}

TEST_CASE("the page has the environment, the warnings, the table with every case and the notes, escaped") {
  const rb::Report report = sample_report();
  const std::string page = rb::render_html(report);
  check_contains(page, {"<h1>ringlab bench: get suite, 2024-05-01T12:00:00Z</h1>", "CPU: AMD EPYC",
                        "WARNING: Debug build: numbers are not representative", "<ul class=\"warnings\">",
                        // The main table: a header, a row per case (the failed one too), a gap row between the sizes.
                        "<th>Method</th>"});
  // Each case in the main table, each ok case again in the phase table.
  CHECK(count(page, "<td>string_copy</td>") == 2 + 2);
  CHECK(count(page, "<td>views&lt;&amp;&gt;</td>") == 2 + 1);
  CHECK(page.find("views<&>") == std::string::npos);  // never unescaped
  check_contains(page, {"<td class=\"r\">FAILED</td>", "<tr class=\"gap\">", "connection reset",  // the notes
                        "<h2>Request phases (median per op)</h2>", "<h2>Legend</h2>"});
}

TEST_CASE("per group of ok cases one box plot and one phase plot, inline SVG") {
  const std::string page = rb::render_html(sample_report());
  // Groups with an ok case: size 10 (two cases), size 1000 (the baseline; views failed).
  CHECK(count(page, "<svg xmlns=\"http://www.w3.org/2000/svg\"") == 4);
  CHECK(count(page, "<svg ") == count(page, "</svg>"));
  CHECK(count(page, "<title>GET weather, 10 records</title>") == 2);
  CHECK(count(page, "<title>GET weather, 1,000 records</title>") == 2);
  // Boxes: the baselines filled, the other white; the outlier of string_copy at 10 (400 μs) a cross.
  CHECK(count(page, "fill=\"#E69F00\" stroke=\"#000\"/>") == 2);
  CHECK(count(page, "fill=\"#FFFFFF\" stroke=\"#000\"/>") == 1);
  CHECK(count(page, "stroke=\"#D55E00\"") == 1);
  CHECK(count(page, "stroke-dasharray=\"4 3\"") == 2);  // each baseline's median across its panel
  // 100 to 400 μs spans less than a decade: a linear axis; the phases are stacked, three per case.
  CHECK(page.find("time per op [μs]</text>") != std::string::npos);
  CHECK(page.find("(log scale)") == std::string::npos);
  CHECK(count(page, "<title>send: ") == 3);
  CHECK(count(page, "<title>wait: ") == 3);
  CHECK(count(page, "<title>deserialize: ") == 3);
}

TEST_CASE("html is a format the command line takes and writes to report.html") {
  const auto formats = rb::parse_formats("md,html");
  REQUIRE(formats.has_value());
  CHECK(formats->back() == rb::Format::html);
  CHECK(rb::format_file_name(rb::Format::html) == "report.html");
}
