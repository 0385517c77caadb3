// Tests for bench/src/core/compare.cpp: pairing and verdicts on synthetic reports, the --fail-over
// regression check, and the subcommand on real files (Welch's test itself: welch_test.cpp).
#include "ringlab/bench/core/compare.hpp"

#include "ringlab/bench/app/cli.hpp"  // compare_main
#include "ringlab/bench/core/statistics.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using namespace ringlab::bench;

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::size_t count(const std::string& text, std::string_view part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// 30 samples around `mean` with a deterministic spread of about +-2 %; `seed` changes the pattern,
// so two calls with the same mean and different seeds are like two runs of an unchanged program.
std::vector<double> samples(double mean, unsigned seed) {
  std::vector<double> out;
  uint32_t state = 2463534242u + seed * 7919u;
  for (int i = 0; i < 30; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const double u = static_cast<double>(state % 10001) / 10000.0;  // [0, 1]
    out.push_back(mean * (0.98 + 0.04 * u));
  }
  return out;
}

CaseResult make_case(std::string strategy, std::size_t size, std::string allocator, std::vector<double> s) {
  CaseResult c;
  c.strategy = std::move(strategy);
  c.method = "GET";
  c.payload = "weather";
  c.size = size;
  c.allocator = std::move(allocator);
  c.samples_ns = std::move(s);
  c.stats.n = c.samples_ns.size();
  c.stats.mean = mean(c.samples_ns);
  return c;
}

// The same four cases twice; in NEW, presized/1000/system is 30 % slower and nothing else changed.
struct Pair {
  Report old_report;
  Report new_report;
  Pair() {
    const struct {
      const char* strategy;
      std::size_t size;
      const char* allocator;
      double mean;
    } cases[] = {{"string_copy", 10, "system", 20000},
                 {"presized", 10, "system", 15000},
                 {"presized", 1000, "system", 900000},
                 {"presized", 1000, "mimalloc", 850000}};
    unsigned seed = 1;
    for (const auto& c : cases) {
      old_report.cases.push_back(make_case(c.strategy, c.size, c.allocator, samples(c.mean, seed++)));
      const bool slowed = std::string(c.strategy) == "presized" && c.size == 1000 && std::string(c.allocator) == "system";
      new_report.cases.push_back(make_case(c.strategy, c.size, c.allocator, samples(c.mean * (slowed ? 1.3 : 1.0), seed++)));
    }
    old_report.environment.timestamp = "2024-05-01T12:00:00Z";
    new_report.environment.timestamp = "2024-05-02T12:00:00Z";
  }
};

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char name[] = "/tmp/ringlab-compare-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path / name;
    std::ofstream(file) << text;
    return file.string();
  }
};

struct Run {
  int status;
  std::string out;
  std::string err;
};
Run run(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int status = compare_main(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("compare flags exactly the case that was slowed, and not the others") {
  const Pair pair;
  const auto comparisons = compare_reports(pair.old_report, pair.new_report);
  REQUIRE(comparisons.size() == 4);
  for (const auto& c : comparisons) {
    INFO(c.strategy << " " << c.size << " " << c.allocator << ": p = " << (c.test ? c.test->p : -1.0)
                    << ", ratio " << c.ratio.value_or(0));
    const bool slowed = c.strategy == "presized" && c.size == 1000 && c.allocator == "system";
    REQUIRE(c.ratio.has_value());
    REQUIRE(c.test.has_value());
    if (slowed) {
      CHECK(c.verdict == Verdict::slower);
      CHECK(*c.ratio == doctest::Approx(1.3).epsilon(0.02));
    } else {
      CHECK(c.verdict == Verdict::same);
      CHECK(*c.ratio == doctest::Approx(1.0).epsilon(0.02));
    }
  }
}

TEST_CASE("a case that got faster is faster, not a regression") {
  Pair pair;
  pair.new_report.cases[0] = make_case("string_copy", 10, "system", samples(10000, 99));
  const auto comparisons = compare_reports(pair.old_report, pair.new_report);
  CHECK(comparisons[0].verdict == Verdict::faster);
  const auto failed = regressions(comparisons, 10);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].strategy == "presized");
  CHECK(failed[0].size == 1000);
}

TEST_CASE("--fail-over counts a significant slowdown only beyond its percentage") {
  const Pair pair;
  const auto comparisons = compare_reports(pair.old_report, pair.new_report);
  CHECK(regressions(comparisons, 10).size() == 1);
  CHECK(regressions(comparisons, 29).size() == 1);
  CHECK(regressions(comparisons, 31).empty());
  CHECK(regressions(comparisons, 50).empty());
}

TEST_CASE("a large ratio that is not significant is not a regression") {
  Report old_report;
  Report new_report;
  // Wild spread: a 20 % higher mean is well within the noise.
  old_report.cases.push_back(make_case("views", 10, "system", {100, 300, 50, 400, 120, 280}));
  new_report.cases.push_back(make_case("views", 10, "system", {110, 380, 60, 470, 150, 340}));
  const auto comparisons = compare_reports(old_report, new_report);
  REQUIRE(comparisons.size() == 1);
  CHECK(*comparisons[0].ratio > 1.15);
  CHECK(comparisons[0].verdict == Verdict::same);
  CHECK(regressions(comparisons, 5).empty());
}

TEST_CASE("pairing: cases in one file only are listed; failures are broken or not comparable") {
  Pair pair;
  pair.old_report.cases.push_back(make_case("retired", 10, "system", samples(1000, 50)));
  pair.new_report.cases.push_back(make_case("novel", 10, "system", samples(1000, 51)));
  pair.new_report.cases[0].status = CaseStatus::failed;
  pair.new_report.cases[0].reason = "truncated 127.0.0.1:8080";
  pair.old_report.cases[1].status = CaseStatus::skipped;
  pair.old_report.cases[1].reason = "IORING_OP_SEND_ZC not supported";

  const auto comparisons = compare_reports(pair.old_report, pair.new_report);
  REQUIRE(comparisons.size() == 6);
  CHECK(comparisons[0].verdict == Verdict::broken);
  CHECK(comparisons[0].note == "failed in NEW: truncated 127.0.0.1:8080");
  CHECK_FALSE(comparisons[0].new_mean.has_value());
  CHECK(comparisons[1].verdict == Verdict::not_comparable);
  CHECK(contains(comparisons[1].note, "skipped in OLD"));
  CHECK(comparisons[4].strategy == "retired");
  CHECK(comparisons[4].verdict == Verdict::only_old);
  CHECK(comparisons[5].strategy == "novel");
  CHECK(comparisons[5].verdict == Verdict::only_new);

  // A broken case fails the regression check whatever the percentage; the others do not.
  const auto failed = regressions(comparisons, 1000);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].strategy == "string_copy");
}

TEST_CASE("the allocator is part of a case's identity") {
  Report old_report;
  Report new_report;
  old_report.cases.push_back(make_case("arena", 10, "system", samples(1000, 1)));
  new_report.cases.push_back(make_case("arena", 10, "jemalloc", samples(1000, 2)));
  const auto comparisons = compare_reports(old_report, new_report);
  REQUIRE(comparisons.size() == 2);
  CHECK(comparisons[0].verdict == Verdict::only_old);
  CHECK(comparisons[1].verdict == Verdict::only_new);
}

TEST_CASE("samples the run discarded as outliers do not enter the means or the test") {
  Report old_report;
  Report new_report;
  auto old_samples = samples(1000, 3);
  auto new_samples = samples(1000, 4);
  new_samples.push_back(1e9);  // a preempted iteration the statistics left out
  old_report.cases.push_back(make_case("views", 10, "system", old_samples));
  new_report.cases.push_back(make_case("views", 10, "system", new_samples));
  new_report.cases[0].outliers = {new_samples.size() - 1};
  const auto comparisons = compare_reports(old_report, new_report);
  REQUIRE(comparisons[0].new_mean.has_value());
  CHECK(*comparisons[0].new_mean < 1100);
  CHECK(comparisons[0].verdict == Verdict::same);
}

TEST_CASE("bench compare on two result files: table, verdicts and exit status") {
  const Pair pair;
  const TempDir dir;
  const std::string old_file = dir.write("old.json", to_json(pair.old_report).dump());
  const std::string new_file = dir.write("new.json", to_json(pair.new_report).dump());

  const Run plain = run({old_file, new_file});
  INFO(plain.out << plain.err);
  CHECK(plain.status == 0);
  CHECK(count(plain.out, "| slower ") == 1);
  CHECK(count(plain.out, "| same ") == 3);
  CHECK(contains(plain.out, "2024-05-01T12:00:00Z"));
  CHECK(contains(plain.out, "New/Old"));

  const Run strict = run({old_file, new_file, "--fail-over", "10"});
  INFO(strict.out);
  CHECK(strict.status == 1);
  CHECK(contains(strict.out, "1 case(s) failed"));
  CHECK(contains(strict.out, "presized GET/weather/1000/system"));

  const Run lenient = run({"--fail-over=50", old_file, new_file});
  CHECK(lenient.status == 0);
  CHECK(contains(lenient.out, "passed"));

  // Same file twice: nothing differs.
  const Run same = run({old_file, old_file, "--fail-over", "0"});
  CHECK(same.status == 0);
  CHECK(count(same.out, "| same ") == 4);
}

TEST_CASE("bench compare refuses bad arguments and unreadable files with status 2") {
  const Pair pair;
  const TempDir dir;
  const std::string good = dir.write("good.json", to_json(pair.old_report).dump());
  const std::string broken = dir.write("broken.json", "{\"schema_version\": 1, \"cases\": [");
  struct Row {
    std::vector<std::string> args;
    const char* error_part;
  };
  const Row rows[] = {
      {{}, "files is required"},
      {{good}, "At least 2 required but received 1"},
      {{good, good, good}, "At Most 2 required but received 3"},
      {{good, good, "--fail-over"}, "--fail-over: 1 required"},
      {{good, good, "--fail-over", "ten"}, "'ten': expected a percentage"},
      {{good, good, "--fail-over=-5"}, "'-5': expected a percentage"},
      {{good, good, "--alpha", "1.5"}, "'1.5': expected a number in (0, 1)"},
      {{good, good, "--ratio-tolerance", "-1"}, "'-1': expected a percentage"},
      {{good, good, "--verbose"}, "not expected: --verbose"},
      {{good, (dir.path / "missing.json").string()}, "NEW:"},
      {{broken, good}, "OLD:"},
  };
  for (const auto& row : rows) {
    const Run r = run(row.args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, row.error_part));
  }
  const Run help = run({"--help"});
  CHECK(help.status == 0);
  CHECK(contains(help.out, "Usage: bench compare [OPTIONS] files"));
  CHECK(contains(help.out, "--fail-over PCT"));
  CHECK(contains(help.out, "--ratio-tolerance PCT"));
}

TEST_CASE("runs made with other in-flight counts are not comparable") {
  Pair pair;
  pair.new_report.config.inflight = {1, 64};
  const auto differences = comparability_differences(pair.old_report, pair.new_report);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].key == "config.inflight");
}

TEST_CASE("runs with a client per case and a client per request are not comparable: bench compare refuses them") {
  Pair pair;
  pair.new_report.config.client = "fresh";
  for (CaseResult& c : pair.new_report.cases) c.client = "fresh";
  const auto differences = comparability_differences(pair.old_report, pair.new_report);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].key == "config.client");
  const TempDir dir;
  const Run refused = run({dir.write("old.json", to_json(pair.old_report).dump()),
                           dir.write("new.json", to_json(pair.new_report).dump())});
  INFO(refused.err);
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(contains(refused.err, "config.client: pooled (OLD) vs fresh (NEW)"));
}

TEST_CASE("runs made with other client thread counts or another provided-buffer ring are not comparable") {
  struct Row {
    std::size_t Config::*setting;
    std::size_t value;
    const char* key;
    const char* old_value;
  };
  const Row rows[] = {{&Config::client_threads, 2, "config.client_threads", "1"},
                      {&Config::ring_buffers, 16, "config.ring_buffers", "0"},
                      {&Config::ring_buffer_bytes, 262144, "config.ring_buffer_bytes", "0"}};
  for (const Row& row : rows) {
    CAPTURE(row.key);
    Pair pair;
    pair.new_report.config.*row.setting = row.value;
    const auto differences = comparability_differences(pair.old_report, pair.new_report);
    REQUIRE(differences.size() == 1);
    CHECK(differences[0].key == row.key);
    CHECK(differences[0].old_value == row.old_value);
    CHECK(differences[0].new_value == std::to_string(row.value));
  }
}

TEST_CASE("compare refuses runs whose settings or machines differ, naming every key, unless --force") {
  Pair pair;
  pair.new_report.config.iteration_time_ms = 50;
  pair.new_report.config.interleave = true;
  pair.new_report.config.sizes = {10, 1000};
  pair.new_report.environment.kernel = "6.18.1";
  pair.old_report.environment.kernel = "6.1.0";
  const auto differences = comparability_differences(pair.old_report, pair.new_report);
  std::vector<std::string> keys;
  for (const Difference& d : differences) keys.push_back(d.key);
  CHECK(keys == std::vector<std::string>{"config.iteration_time_ms", "config.sizes", "config.interleave",
                                         "environment.kernel"});
  CHECK(comparability_differences(pair.old_report, pair.old_report).empty());

  const TempDir dir;
  const std::string old_file = dir.write("old.json", to_json(pair.old_report).dump());
  const std::string new_file = dir.write("new.json", to_json(pair.new_report).dump());
  const Run refused = run({old_file, new_file});
  INFO(refused.err);
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(contains(refused.err, "not comparable"));
  CHECK(contains(refused.err, "config.iteration_time_ms: 100 (OLD) vs 50 (NEW)"));
  CHECK(contains(refused.err, "config.sizes: (none) (OLD) vs 10,1000 (NEW)"));
  CHECK(contains(refused.err, "config.interleave: false (OLD) vs true (NEW)"));
  CHECK(contains(refused.err, "environment.kernel: 6.1.0 (OLD) vs 6.18.1 (NEW)"));
  CHECK(contains(refused.err, "--force"));

  const Run forced = run({old_file, new_file, "--force"});
  INFO(forced.out);
  CHECK(forced.status == 0);
  const auto differences_at = forced.out.find("Compared with --force although the runs differ:");
  REQUIRE(differences_at != std::string::npos);
  CHECK(differences_at < forced.out.find("New/Old"));  // above the comparison
  CHECK(contains(forced.out, "environment.kernel: 6.1.0 (OLD) vs 6.18.1 (NEW)"));
  CHECK(count(forced.out, "| slower ") == 1);
}

TEST_CASE("a different CPU model or placement is a different machine") {
  Pair pair;
  pair.new_report.environment.cpu = "Other CPU";
  pair.new_report.environment.client_cpu = 1;
  pair.new_report.config.allocators = {"mimalloc"};
  std::vector<std::string> keys;
  for (const Difference& d : comparability_differences(pair.old_report, pair.new_report)) keys.push_back(d.key);
  CHECK(keys == std::vector<std::string>{"config.allocators", "environment.cpu", "environment.client_cpu"});
}

TEST_CASE("two builds in two folders ran the same allocator; another allocator or version is another run") {
  Pair pair;
  pair.old_report.environment.allocator =
      "glibc 2.36 (/lib/x86_64-linux-gnu/libc.so.6), called through /home/a/before/build/bench";
  pair.new_report.environment.allocator =
      "glibc 2.36 (/usr/lib/x86_64-linux-gnu/libc.so.6), called through /srv/after/build/bench";
  CHECK(comparability_differences(pair.old_report, pair.new_report).empty());

  pair.new_report.environment.allocator = "glibc 2.37 (/lib/x86_64-linux-gnu/libc.so.6), called through /srv/b/bench";
  auto differences = comparability_differences(pair.old_report, pair.new_report);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].key == "environment.allocator");
  CHECK(differences[0].old_value == "glibc 2.36 (libc.so.6), called through bench");
  CHECK(differences[0].new_value == "glibc 2.37 (libc.so.6), called through bench");

  // Another interposer is another run, wherever it lies; so is one job's allocator among several.
  pair.new_report.environment.allocator =
      "glibc 2.36 (/lib/libc.so.6), called through /x/bench, called through /x/libheap.so";
  CHECK(comparability_differences(pair.old_report, pair.new_report).size() == 1);
  pair.old_report.environment.allocator =
      "one per job: system = glibc 2.36 (/lib/libc.so.6); mimalloc = mimalloc 2.0.9 (/a/libmimalloc.so.2)";
  pair.new_report.environment.allocator =
      "one per job: system = glibc 2.36 (/lib/libc.so.6); mimalloc = mimalloc 2.1.2 (/b/libmimalloc.so.2)";
  CHECK(comparability_differences(pair.old_report, pair.new_report).size() == 1);
}

TEST_CASE("a run of several in-flight counts pairs each count with its own, and says so") {
  Report old_report;
  Report new_report;
  for (std::size_t n : {1u, 64u}) {
    CaseResult c = make_case("views", 10, "system", samples(n == 1 ? 30000 : 400000, static_cast<unsigned>(n)));
    c.inflight = n;
    old_report.cases.push_back(c);
    c.samples_ns = samples(n == 1 ? 30000 : 520000, static_cast<unsigned>(n) + 7);  // x64 is 30 % slower
    c.stats.mean = mean(c.samples_ns);
    new_report.cases.push_back(c);
  }
  const auto comparisons = compare_reports(old_report, new_report);
  REQUIRE(comparisons.size() == 2);
  CHECK(comparisons[0].inflight == 1);
  CHECK(comparisons[0].verdict == Verdict::same);
  CHECK(comparisons[1].inflight == 64);
  CHECK(comparisons[1].verdict == Verdict::slower);
  const std::string table = format_comparison(comparisons, {});
  INFO(table);
  CHECK(contains(table, "| In flight |"));
  CHECK_FALSE(contains(table, "| Threads |"));
  const auto failed = regressions(comparisons, 10);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].inflight == 64);
}

TEST_CASE("ratios against each run's baseline: shown from both runs, counted within the tolerance") {
  // The whole machine is 20 % slower in NEW; views' ratio moved 1 %, presized's 5 %.
  Report old_report;
  Report new_report;
  const struct {
    const char* strategy;
    double mean;
    double old_ratio;
    double new_ratio;
  } rows[] = {{"string_copy", 100000, 1.0, 1.0}, {"views", 80000, 0.80, 0.808}, {"presized", 90000, 0.90, 0.945}};
  unsigned seed = 1;
  for (const auto& row : rows) {
    const bool baseline = std::string_view(row.strategy) == "string_copy";
    CaseResult c = make_case(row.strategy, 1000, "system", samples(row.mean, seed++));
    c.baseline = baseline;
    c.stats.ratio = row.old_ratio;
    old_report.cases.push_back(c);
    c = make_case(row.strategy, 1000, "system", samples(row.mean * 1.2, seed++));
    c.baseline = baseline;
    c.stats.ratio = row.new_ratio;
    new_report.cases.push_back(c);
  }
  const auto comparisons = compare_reports(old_report, new_report);
  REQUIRE(comparisons.size() == 3);
  CHECK(comparisons[1].old_ratio == doctest::Approx(0.80));
  CHECK(comparisons[1].new_ratio == doctest::Approx(0.808));
  CHECK(comparisons[1].verdict == Verdict::slower);  // the means moved with the machine

  CompareOptions options;
  const std::string table = format_comparison(comparisons, options);
  INFO(table);
  CHECK(contains(table, "| Ratio Old | Ratio New | Ratio New/Old |"));
  CHECK(contains(table, "|     0.800 |     0.808 |         1.010 |"));
  // The baseline's own ratio (1 in both) is not counted.
  CHECK(contains(table, "1 of 2 moved by at most 3 %; the largest move: presized GET/weather/1000/system 1.050."));
  options.ratio_tolerance = 5.5;
  CHECK(contains(format_comparison(comparisons, options), "2 of 2 moved by at most 5.5 %"));

  // Without ratios in one run: no ratio columns and no count.
  for (CaseResult& c : new_report.cases) c.stats.ratio.reset();
  const std::string plain = format_comparison(compare_reports(old_report, new_report), {});
  CHECK_FALSE(contains(plain, "Ratio Old"));
  CHECK_FALSE(contains(plain, "moved by at most"));
}
