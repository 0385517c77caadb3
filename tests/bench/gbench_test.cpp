// The gbench report (bench/src/report/gbench.cpp) read as a reader of google-benchmark's JSON reads it.
//
// The schema checked here is the one google-benchmark documents and writes (docs/user_guide.md,
// "Output Formats"; src/json_reporter.cc): a top-level object with "context" and "benchmarks"; every
// benchmark has name (string), run_name, run_type ("iteration" or "aggregate"), repetitions,
// repetition_index (iterations only), threads, iterations (integer), real_time and cpu_time (numbers),
// time_unit ("ns", "us", "ms" or "s"); aggregates add aggregate_name and aggregate_unit; user
// counters are further number-valued keys. Its compare.py (tools/gbench) groups entries by name and
// compares real_time and cpu_time; its U test needs at least two repetitions with the same name.
// tests/bench/binary_check.cpp runs the real compare.py on a real run's output.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ringlab/bench/report/reporters.hpp"
#include "../support/bench_cases.hpp"

namespace rb = ringlab::bench;
using nlohmann::json;

namespace {

// What every case has beyond its samples: the numbers gbench writes as user counters.
rb::CaseResult costs() {
  rb::CaseResult c = ringlab::testing::prototype_case("glibc", 40);
  ringlab::testing::add_copying_costs(c);
  c.phases.ops_sampled = 100;
  c.phases.wait = 20000;
  c.phases.deserialize = 7000;
  return c;
}

rb::Report sample_report() {
  rb::Report r =
      ringlab::testing::measured_report(costs(), {{"string_copy", 10, {21000, 20500, 21500, 20800, 90000}, true},
                                                  {"views", 10, {12000, 12100, 11900, 12050, 11950}, false},
                                                  {"string_copy", 1000, {910000, 905000, 915000}, true},
                                                  {"views", 1000, {}, false}});
  r.environment.timestamp = "2024-05-01T12:00:00Z";
  r.environment.cores = 2;
  r.environment.tsc_hz = 2.4e9;
  r.environment.governor = "n/a";
  r.environment.build_type = "Release";
  r.environment.load_average_start = rb::LoadAverage{0.5, 0.25, 0.125};
  return r;
}

bool is_integer(const json& v) { return v.is_number_integer() || v.is_number_unsigned(); }

// Every entry as google-benchmark's JSON reporter writes one; returns what is wrong, empty when nothing.
std::string schema_problem(const json& b) {
  for (const char* key : {"name", "run_name", "run_type", "time_unit"}) {
    if (!b.contains(key) || !b[key].is_string()) return std::string(key) + " is not a string";
  }
  for (const char* key : {"family_index", "per_family_instance_index", "repetitions", "threads", "iterations"}) {
    if (!b.contains(key) || !is_integer(b[key])) return std::string(key) + " is not an integer";
  }
  for (const char* key : {"real_time", "cpu_time"}) {
    if (!b.contains(key) || !b[key].is_number()) return std::string(key) + " is not a number";
  }
  const std::set<std::string> units{"ns", "us", "ms", "s"};
  if (!units.contains(b["time_unit"].get<std::string>())) return "unknown time_unit";
  const std::string run_type = b["run_type"];
  if (run_type == "iteration") {
    if (!b.contains("repetition_index") || !is_integer(b["repetition_index"])) return "no repetition_index";
  } else if (run_type == "aggregate") {
    if (!b.contains("aggregate_name") || !b["aggregate_name"].is_string()) return "no aggregate_name";
    if (b["name"] != b["run_name"].get<std::string>() + "_" + b["aggregate_name"].get<std::string>()) {
      return "an aggregate's name is not run_name + \"_\" + aggregate_name";
    }
  } else {
    return "run_type " + run_type;
  }
  if (b.contains("error_occurred") && (!b["error_occurred"].is_boolean() || !b["error_message"].is_string())) {
    return "error_occurred without a message";
  }
  // Anything else is a user counter: a number.
  const std::set<std::string> fixed{"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                                    "repetitions", "repetition_index", "threads", "iterations", "real_time",
                                    "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "error_occurred",
                                    "error_message"};
  for (const auto& [key, value] : b.items()) {
    if (!fixed.contains(key) && !value.is_number()) return "counter " + key + " is not a number";
  }
  return {};
}

std::vector<json> named(const json& benchmarks, const std::string& name) {
  std::vector<json> out;
  for (const json& b : benchmarks) {
    if (b["name"] == name) out.push_back(b);
  }
  return out;
}

}  // namespace

TEST_CASE("gbench is google-benchmark's JSON: context and benchmarks, every entry with its keys and types") {
  const json doc = json::parse(rb::render_gbench(sample_report()));
  REQUIRE(doc.is_object());
  REQUIRE(doc.contains("context"));
  REQUIRE(doc.contains("benchmarks"));
  const json& context = doc["context"];
  CHECK(context["date"] == "2024-05-01T12:00:00Z");
  CHECK(context["num_cpus"] == 2);
  CHECK(context["mhz_per_cpu"] == 2400);
  CHECK(context["cpu_scaling_enabled"] == false);
  CHECK(context["library_build_type"] == "release");
  CHECK(context["load_avg"] == json::array({0.5, 0.25, 0.125}));
  CHECK(context["caches"].is_array());
  REQUIRE(doc["benchmarks"].is_array());
  CHECK_FALSE(doc["benchmarks"].empty());
  for (const json& b : doc["benchmarks"]) {
    INFO(b.dump());
    CHECK(schema_problem(b) == "");
  }
}

TEST_CASE("each measured iteration is one repetition in order; the aggregates are ringlab's statistics") {
  const rb::Report report = sample_report();
  const json doc = json::parse(rb::render_gbench(report));
  const rb::CaseResult& baseline = report.cases[0];
  const std::vector<json> reps = named(doc["benchmarks"], "string_copy/GET/weather/10");
  REQUIRE(reps.size() == baseline.samples_ns.size());  // the outlier (90000) is a repetition too
  for (std::size_t i = 0; i < reps.size(); ++i) {
    INFO("repetition " << i);
    CHECK(reps[i]["run_type"] == "iteration");
    CHECK(reps[i]["repetition_index"] == i);
    CHECK(reps[i]["repetitions"] == baseline.samples_ns.size());
    CHECK(reps[i]["iterations"] == 40);
    CHECK(reps[i]["real_time"].get<double>() == baseline.samples_ns[i]);
    // No task-clock counted: cpu_time is real_time, and the context says so.
    CHECK(reps[i]["cpu_time"].get<double>() == baseline.samples_ns[i]);
    CHECK(reps[i]["bytes_per_op"] == 5806.0);
    CHECK(reps[i]["phase_wait_ns"] == 20000.0);
    CHECK_FALSE(reps[i].contains("phase_connect_ns"));  // not measured: left out, not 0
  }
  CHECK(doc["context"]["ringlab_cpu_time"].get<std::string>().find("equal to real_time") != std::string::npos);
  const std::map<std::string, double> expected{{"mean", baseline.stats.mean},
                                               {"median", baseline.stats.median},
                                               {"stddev", baseline.stats.stddev},
                                               {"cv", baseline.stats.stddev / baseline.stats.mean}};
  for (const auto& [aggregate, value] : expected) {
    INFO(aggregate);
    const std::vector<json> entries = named(doc["benchmarks"], "string_copy/GET/weather/10_" + aggregate);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0]["run_type"] == "aggregate");
    CHECK(entries[0]["aggregate_name"] == aggregate);
    CHECK(entries[0]["aggregate_unit"] == (aggregate == "cv" ? "percentage" : "time"));
    CHECK(entries[0]["real_time"].get<double>() == doctest::Approx(value));
  }
  CHECK(baseline.stats.outliers == 1);  // the mean aggregate leaves the outlier out, as the table does
  const std::vector<json> views_mean = named(doc["benchmarks"], "views/GET/weather/10_mean");
  REQUIRE(views_mean.size() == 1);
  CHECK(views_mean[0]["ratio"].get<double>() == doctest::Approx(*report.cases[1].stats.ratio));
}

TEST_CASE("families are strategies, instances their cases; a failed case carries error_occurred") {
  const json doc = json::parse(rb::render_gbench(sample_report()));
  std::map<std::string, std::set<std::pair<long, long>>> indices;  // run_name -> (family, instance)
  for (const json& b : doc["benchmarks"]) {
    indices[b["run_name"]].insert({b["family_index"].get<long>(), b["per_family_instance_index"].get<long>()});
  }
  CHECK(indices["string_copy/GET/weather/10"] == std::set<std::pair<long, long>>{{0, 0}});
  CHECK(indices["views/GET/weather/10"] == std::set<std::pair<long, long>>{{1, 0}});
  CHECK(indices["string_copy/GET/weather/1000"] == std::set<std::pair<long, long>>{{0, 1}});
  const std::vector<json> failed = named(doc["benchmarks"], "views/GET/weather/1000");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]["error_occurred"] == true);
  CHECK(failed[0]["error_message"] == "failed: connection reset");
  CHECK(named(doc["benchmarks"], "views/GET/weather/1000_mean").empty());
}

TEST_CASE("task-clock, when counted, is the cpu_time; allocator jobs name the allocator") {
  rb::Report report = sample_report();
  report.cases.resize(2);
  report.cases[0].counters["task-clock"] = 15000.0;
  report.cases[0].counters["cycles"] = std::nullopt;  // not supported here: left out
  report.cases[1].allocator = "mimalloc";
  const json doc = json::parse(rb::render_gbench(report));
  const std::vector<json> reps = named(doc["benchmarks"], "string_copy/GET/weather/10/allocator:glibc");
  REQUIRE_FALSE(reps.empty());
  CHECK(reps[0]["cpu_time"] == 15000.0);
  CHECK(reps[0]["task-clock"] == 15000.0);
  CHECK_FALSE(reps[0].contains("cycles"));
  CHECK_FALSE(named(doc["benchmarks"], "views/GET/weather/10/allocator:mimalloc_mean").empty());
  CHECK(doc["context"]["ringlab_cpu_time"].get<std::string>().find("task-clock") != std::string::npos);
}

TEST_CASE("gbench is a format the command line takes and writes to report.gbench.json") {
  const auto formats = rb::parse_formats("json,gbench");
  REQUIRE(formats.has_value());
  CHECK(formats->back() == rb::Format::gbench);
  CHECK(rb::format_name(rb::Format::gbench) == "gbench");
  CHECK(rb::format_file_name(rb::Format::gbench) == "report.gbench.json");
  CHECK(rb::format_file_name(rb::Format::md) == "report.md");
}
