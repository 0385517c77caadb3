// profile_summary.cpp: tools/profile's profile.json read (and refused when it is not that file), and the
// areas per request it shows with the run's report. The rest of the section a results page gets is
// checked on a page in console_test.cpp.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "ringlab/bench/report/profile_summary.hpp"
#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::bench::testing::check_contains;

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

namespace {

// A case of a run at 64 in flight whose CPU per request is `user_ns + system_ns`.
rb::CaseResult inflight_case(std::string strategy, double user_ns, double system_ns, double syscalls) {
  rb::CaseResult c;
  c.strategy = std::move(strategy);
  c.payload = "weather";
  c.size = 10;
  c.inflight = 64;
  c.cpu.user_ns_per_op = user_ns * 64;
  c.cpu.system_ns_per_op = system_ns * 64;
  c.io.syscalls_per_op = syscalls * 64;
  return c;
}

std::string areas_json(std::string_view name, const std::vector<double>& shares) {
  const char* keys[] = {"network", "io_uring", "epoll", "syscall", "kernel", "user"};
  std::string areas;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    areas += std::string(i > 0 ? ", " : "") + "{\"area\": \"" + keys[i] + "\", \"share\": " + std::to_string(shares[i]) + "}";
  }
  return "{\"case\": \"" + std::string(name) + "\", \"spans\": 4, \"samples\": 1000, \"kernel\": 0.9, \"user\": 0.1, " +
         "\"dsos\": [], \"symbols\": [], \"areas\": [" + areas + "]}";
}

// The run's report of the two profiled cases: views at 6.8 us per request, epoll at 6.6 us.
rb::Report views_and_epoll_report() {
  rb::Report report;
  report.cases.push_back(inflight_case("views", 600, 6200, 0.09));
  report.cases.push_back(inflight_case("epoll", 900, 5700, 2.10));
  return report;
}

rb::ProfileSummary parsed(const std::string& text) {
  auto summary = rb::parse_profile_summary(text);
  REQUIRE_MESSAGE(summary.has_value(), summary.error().message);
  return std::move(*summary);
}

}  // namespace

TEST_CASE("a profile's areas are shown per request and say how low a change of interface alone can go") {
  const std::string text = R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
    "cases": [)" + areas_json("views weather 10 x64", {0.75, 0.10, 0, 0.02, 0.04, 0.09}) + ", " +
                           areas_json("epoll weather 10 x64", {0.72, 0, 0.08, 0.05, 0.02, 0.13}) + "]}";
  const rb::ProfileSummary summary = parsed(text);
  REQUIRE(summary.cases[0].areas.size() == 6);
  CHECK(summary.cases[0].areas[1].name == "io_uring");
  CHECK(summary.cases[0].areas[1].share == doctest::Approx(0.10));

  rb::Report report = views_and_epoll_report();
  const std::string section = rb::render_profile_section(summary, &report);
  INFO(section);
  check_contains(section, {"| Area | views weather 10 x64 | epoll weather 10 x64 |",
                           "| Network stack (TCP/IP, sockets, loopback, wake-ups) | 5.10 μs (75.0 %) | 4.75 μs (72.0 %) |",
                           "| io_uring (submission, completion, waits) | 0.68 μs (10.0 %) | 0.00 μs (0.0 %) |",
                           "| CPU/req | 6.80 μs | 6.60 μs |", "| Syscalls/req | 0.09 | 2.10 |",
                           "- views weather 10 x64 against epoll weather 10 x64: CPU/req 6.80 μs against 6.60 μs (1.03x). The network stack is 5.10 μs "
                           "against 4.75 μs of it (75.0 % and 72.0 % of each)",
                           "views would still spend 5.10 μs per request, 0.77x epoll's CPU/req, and epoll 4.75 μs, 0.70x "
                           "views's"});

  // Without the report: the shares alone, and nothing said of the pair.
  const std::string shares = rb::render_profile_section(summary);
  CHECK(shares.find("| Network stack (TCP/IP, sockets, loopback, wake-ups) | 75.0 % | 72.0 % |") != std::string::npos);
  CHECK(shares.find("What the areas say") == std::string::npos);
  // Cases of different sizes are not a pair.
  report.cases[1].size = 1000;
  CHECK(rb::render_profile_section(summary, &report).find("What the areas say") == std::string::npos);
}

TEST_CASE("a profile's areas that are not tools/profile's are refused, naming what is wrong") {
  const std::string head = R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
    "cases": [{"case": "x", "spans": 1, "samples": 3, "kernel": 1, "user": 0, "dsos": [], "symbols": [], "areas": )";
  const std::vector<std::pair<std::string, std::string>> rows = {
      {R"([{"area": "user", "share": 1}])", "cases[0].areas[0].area: \"user\", expected \"network\""},
      {R"([{"area": "network", "share": 1}])", "cases[0].areas: 1 areas, expected 6"},
      {R"([{"area": "network", "share": 2}])", "cases[0].areas[0].share: a share above 1"},
      {R"({"network": 1})", "cases[0].areas: not an array"},
  };
  for (const auto& [areas, message] : rows) {
    CAPTURE(areas);
    auto parsed = rb::parse_profile_summary(head + areas + "}]}");
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().message == message);
  }
}

TEST_CASE("a profile's interface items are shown per request, each case's beside the others'") {
  const auto with_items = [](std::string_view name, const std::vector<double>& shares, std::string_view items) {
    std::string c = areas_json(name, shares);
    c.pop_back();  // the closing brace: the items go in before it
    return c + ", \"items\": [" + std::string(items) + "]}";
  };
  const std::string text =
      R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0, "cases": [)" +
      with_items("views weather 10 x64", {0.75, 0.10, 0, 0.02, 0.04, 0.09},
                 R"({"area": "io_uring", "item": "io_submit_sqes", "share": 0.05},
                    {"area": "io_uring", "item": "io_arm_apoll", "share": 0.03},
                    {"area": "syscall", "item": "entry_SYSCALL_64", "share": 0.02})") +
      ", " +
      with_items("epoll weather 10 x64", {0.72, 0, 0.08, 0.05, 0.02, 0.13},
                 R"({"area": "epoll", "item": "ep_poll", "share": 0.06},
                    {"area": "syscall", "item": "entry_SYSCALL_64", "share": 0.05})") +
      "]}";
  const rb::ProfileSummary summary = parsed(text);
  REQUIRE(summary.cases[0].items.size() == 3);
  CHECK(summary.cases[0].items[1].name == "io_arm_apoll");
  CHECK(summary.cases[0].items[1].dso == "io_uring");
  CHECK(summary.cases[0].items[1].share == doctest::Approx(0.03));

  const rb::Report report = views_and_epoll_report();
  const std::string section = rb::render_profile_section(summary, &report);
  INFO(section);
  // Rows by area (io_uring, epoll, syscall), then in the order the cases list them; a case without the
  // item leaves its cell blank.
  check_contains(section, {"### The interfaces' machinery, item by item",
                           "| Area | Item | views weather 10 x64 | epoll weather 10 x64 |\n|---|---|---:|---:|\n"
                           "| io_uring | `io_submit_sqes` | 0.34 μs (5.0 %) | |\n"
                           "| io_uring | `io_arm_apoll` | 0.20 μs (3.0 %) | |\n"
                           "| epoll | `ep_poll` | | 0.40 μs (6.0 %) |\n"
                           "| syscall | `entry_SYSCALL_64` | 0.14 μs (2.0 %) | 0.33 μs (5.0 %) |\n"});
  // Without the report: the shares alone.
  CHECK(rb::render_profile_section(summary).find("| epoll | `ep_poll` | | 6.0 % |") != std::string::npos);

  // A file without items (tools/profile's before it counted them) shows no such table.
  const std::string plain = R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
    "cases": [)" + areas_json("views weather 10 x64", {0.75, 0.10, 0, 0.02, 0.04, 0.09}) + "]}";
  const rb::ProfileSummary old = parsed(plain);
  CHECK(old.cases[0].items.empty());
  CHECK(rb::render_profile_section(old, &report).find("item by item") == std::string::npos);

  // An item of an area that is not an interface's is refused.
  const std::string bad = R"({"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
    "cases": [)" + with_items("views weather 10 x64", {0.75, 0.10, 0, 0.02, 0.04, 0.09},
                              R"({"area": "network", "item": "tcp_ack", "share": 0.05})") + "]}";
  auto refused = rb::parse_profile_summary(bad);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "cases[0].items[0].area: \"network\", expected io_uring, epoll or syscall");
}
