// The report written to files: JSON read back whole, CSV with the same values, a new folder per run.
#include "ringlab/bench/report/reporters.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ringlab/bench/core/results.hpp"
#include "ringlab/bench/core/table.hpp"
#include "../support/bench_cases.hpp"
#include "../support/same_fields.hpp"
#include "reporters_fixtures.hpp"

namespace rb = ringlab::bench;
using ringlab::testing::lines_of;
using namespace ringlab::bench::testing;

TEST_CASE("JSON written and read back gives the same report") {
  const rb::Report report = synthetic_report();
  const auto back = rb::parse_report(rb::render_json(report));
  REQUIRE(back.has_value());
  REQUIRE(back->cases.size() == report.cases.size());
  CHECK(back->environment.cpu == "AMD EPYC");
  CHECK(back->environment.tsc_hz == report.environment.tsc_hz);
  CHECK(back->environment.warnings == report.environment.warnings);
  CHECK(back->config.sizes == report.config.sizes);
  CHECK(back->config.options == report.config.options);
  CHECK(back->config.options.at("--client") == "pooled,inflight");
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const rb::CaseResult& a = report.cases[i];
    const rb::CaseResult& b = back->cases[i];
    INFO("case " << i << " " << a.strategy << " " << a.size);
    ringlab::testing::check_same_fields(
        [](const rb::CaseResult& c) {
          return std::tie(c.strategy, c.size, c.status, c.reason, c.samples_ns, c.outliers, c.stats.mean,
                          c.stats.error, c.stats.p95, c.stats.ratio, c.stats.ratio_sd, c.memory.bytes_per_op,
                          c.memory.alloc_ratio, c.io.cqes_per_op, c.phases.connect, c.phases.deserialize,
                          c.counters, c.checksum);
        },
        b, a);
  }
}

TEST_CASE("CSV carries the same values as the JSON, exactly, with empty fields for n/a") {
  const rb::Report report = synthetic_report();
  const auto lines = lines_of(rb::render_csv(report));
  REQUIRE(lines.size() == report.cases.size() + 1);
  const auto header = split(lines[0], ',');
  const auto column = [&header](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return i;
    }
    FAIL("no column " << name);
    return std::size_t{0};
  };
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const auto fields = split(lines[i + 1], ',');
    REQUIRE(fields.size() == header.size());
    const rb::CaseResult& c = report.cases[i];
    INFO("case " << i);
    CHECK(fields[column("strategy")] == c.strategy);
    CHECK(fields[column("status")] == rb::status_name(c.status));
    CHECK(fields[column("reason")] == c.reason);
    CHECK(std::strtod(fields[column("mean_ns")].c_str(), nullptr) == c.stats.mean);
    CHECK(std::strtod(fields[column("p95_ns")].c_str(), nullptr) == c.stats.p95);
    if (c.memory.bytes_per_op) {
      CHECK(std::strtod(fields[column("bytes_per_op")].c_str(), nullptr) == *c.memory.bytes_per_op);
    } else {
      CHECK(fields[column("bytes_per_op")].empty());
    }
    CHECK(fields[column("phase_connect_ns")].empty());
    if (c.stats.ratio) CHECK(std::strtod(fields[column("ratio")].c_str(), nullptr) == *c.stats.ratio);
  }
  CHECK(split(lines[6], ',')[column("counter:cycles")] == "123456");
  CHECK(split(lines[6], ',')[column("counter:instructions")].empty());
}

TEST_CASE("reports are written to a new timestamped folder each time") {
  CHECK(rb::results_folder_name(0) == "1970-01-01_00-00-00");
  CHECK(rb::results_folder_name(1714564800) == "2024-05-01_12-00-00");
  char dir_template[] = "/tmp/ringlab-reporters-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::filesystem::path root = std::filesystem::path(dir_template) / "results";
  const rb::Report report = synthetic_report();
  const auto formats = *rb::parse_formats("md,csv,json");
  const auto first = rb::write_reports(report, root, formats, 1714564800);
  REQUIRE(first.has_value());
  REQUIRE(first->size() == 3);
  CHECK((*first)[0] == root / "2024-05-01_12-00-00" / "report.md");
  const auto second = rb::write_reports(report, root, formats, 1714564800);
  REQUIRE(second.has_value());
  CHECK((*second)[2] == root / "2024-05-01_12-00-00-2" / "report.json");
  const auto read_back = rb::read_report_file((*second)[2]);
  REQUIRE(read_back.has_value());
  CHECK(read_back->cases.size() == report.cases.size());
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("writing into a folder that cannot be created is an error naming it") {
  const auto formats = *rb::parse_formats("json");
  const auto result = rb::write_reports(synthetic_report(), "/proc/ringlab-no-such-place", formats, 0);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().message.find("/proc/ringlab-no-such-place") != std::string::npos);
}

TEST_CASE("the CSV carries the reference flag, the diagnostics and the latency percentiles") {
  rb::Report report = synthetic_report();
  report.cases[0].reference = true;
  report.cases[0].diagnostics.cv = 0.125;
  report.cases[0].latency = rb::Latency{10, 100, 200, 300, 400, 500, {}};
  const auto lines = lines_of(rb::render_csv(report));
  const auto header = split(lines[0], ',');
  const auto fields = split(lines[1], ',');
  REQUIRE(fields.size() == header.size());
  const auto at = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return fields[static_cast<std::size_t>(it - header.begin())];
  };
  CHECK(at("reference") == "true");
  CHECK(at("connection") == "pooled");
  CHECK(at("server_mode") == "cached");
  CHECK(at("cv") == "0.125");
  CHECK(at("latency_p999_ns") == "400");
  CHECK(at("latency_count") == "10");
  CHECK(split(lines[2], ',')[static_cast<std::size_t>(
            std::find(header.begin(), header.end(), "latency_p50_ns") - header.begin())].empty());
}
