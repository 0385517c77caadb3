// Tests for bench/src/process/allocators.cpp: parsing and planning (pure), then real child processes: the
// allocator probe under LD_PRELOAD of every installed allocator, and children that misbehave
// (hang, flood, crash, fail, cannot be executed).
#include "ringlab/bench/process/allocators.hpp"
#include "../support/feature_gate.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

using namespace ringlab::bench;
using namespace ringlab::bench::alloc;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The version prefix detect_allocator() reports for each allocator.
std::string_view version_prefix(Allocator allocator) {
  switch (allocator) {
    case Allocator::system: return "glibc ";
    case Allocator::mimalloc: return "mimalloc ";
    case Allocator::jemalloc: return "jemalloc ";
    case Allocator::tcmalloc: return "gperftools ";
  }
  return "";
}

ChildOptions probe_options(Allocator allocator) {
  ChildOptions options;
  options.executable = RINGLAB_ALLOCATOR_PROBE;
  const std::vector<std::string> parent = {"get", "--allocators", "system,mimalloc,jemalloc,tcmalloc"};
  options.arguments = child_arguments(parent, allocator);
  options.timeout = 30s;
  return options;
}

ChildOptions shell(std::string script, std::chrono::milliseconds timeout = 30s) {
  ChildOptions options;
  options.executable = "/bin/sh";
  options.arguments = {"-c", std::move(script)};
  options.timeout = timeout;
  return options;
}

const Job kSystemJob{Allocator::system, {}, std::nullopt};

}  // namespace

TEST_CASE("allocator names round-trip; unknown names are refused") {
  for (Allocator a : kAllAllocators) {
    INFO(std::string(allocator_name(a)));
    CHECK(parse_allocator(allocator_name(a)) == a);
  }
  CHECK_FALSE(parse_allocator("glibc").has_value());
  CHECK_FALSE(parse_allocator("").has_value());
  CHECK_FALSE(parse_allocator("Mimalloc").has_value());
}

TEST_CASE("parse_allocator_list accepts a comma list and names what is wrong with a bad one") {
  struct Row {
    const char* input;
    std::vector<Allocator> expected;
    const char* error_part;  // nullptr: success expected
  };
  const Row rows[] = {
      {"system", {Allocator::system}, nullptr},
      {"system,mimalloc,jemalloc,tcmalloc", {kAllAllocators.begin(), kAllAllocators.end()}, nullptr},
      {"jemalloc, system", {Allocator::jemalloc, Allocator::system}, nullptr},
      {"", {}, "empty list"},
      {"  ", {}, "empty list"},
      {"system,,mimalloc", {}, "empty item"},
      {"system,", {}, "empty item"},
      {"system,hoard", {}, "unknown allocator 'hoard'"},
      {"mimalloc,mimalloc", {}, "'mimalloc' given twice"},
  };
  for (const auto& row : rows) {
    INFO("input: '" << row.input << "'");
    const auto parsed = parse_allocator_list(row.input);
    if (row.error_part == nullptr) {
      REQUIRE(parsed.has_value());
      CHECK(*parsed == row.expected);
    } else {
      REQUIRE_FALSE(parsed.has_value());
      INFO(parsed.error().message);
      CHECK(contains(parsed.error().message, row.error_part));
    }
  }
}

TEST_CASE("child_arguments drops --allocators in both spellings and appends the job options") {
  struct Row {
    std::vector<std::string> parent;
    std::vector<std::string> expected_prefix;
  };
  const Row rows[] = {
      {{"get", "--allocators", "system,mimalloc", "--sizes", "1000"}, {"get", "--sizes", "1000"}},
      {{"get", "--allocators=system,mimalloc", "--counters"}, {"get", "--counters"}},
      {{"--sizes", "10", "get"}, {"--sizes", "10", "get"}},
      {{"get", "--allocators"}, {"get"}},  // a dangling option takes nothing else with it
      // The concurrency axis reaches every job: each measures its allocator under the same T x N.
      {{"get", "--client-threads", "2", "--allocators", "system,jemalloc", "--inflight=4"},
       {"get", "--client-threads", "2", "--inflight=4"}},
      // A parent that is itself a child must not pass its own job options on.
      {{"get", "--job-output-fd", "3", "--job-allocator=jemalloc"}, {"get"}},
  };
  for (const auto& row : rows) {
    std::vector<std::string> expected = row.expected_prefix;
    expected.insert(expected.end(), {"--job-output-fd", "3", "--job-allocator", "tcmalloc"});
    CHECK(child_arguments(row.parent, Allocator::tcmalloc) == expected);
  }
}

TEST_CASE("plan_jobs: system needs no preload; a library not found or gone is missing, with the package") {
  const LibraryPaths libraries{"", "/nonexistent/libjemalloc.so.2", "/bin/sh"};
  const std::vector<Allocator> wanted(kAllAllocators.begin(), kAllAllocators.end());
  const auto jobs = plan_jobs(wanted, libraries);
  REQUIRE(jobs.size() == 4);
  CHECK(jobs[0].allocator == Allocator::system);
  CHECK(jobs[0].preload.empty());
  CHECK_FALSE(jobs[0].missing.has_value());

  REQUIRE(jobs[1].missing.has_value());
  INFO(*jobs[1].missing);
  CHECK(contains(*jobs[1].missing, "not found when ringlab was configured"));
  CHECK(contains(*jobs[1].missing, "libmimalloc-dev"));

  REQUIRE(jobs[2].missing.has_value());
  INFO(*jobs[2].missing);
  CHECK(contains(*jobs[2].missing, "ENOENT"));
  CHECK(contains(*jobs[2].missing, "libjemalloc-dev"));

  CHECK_FALSE(jobs[3].missing.has_value());
  CHECK(jobs[3].preload == "/bin/sh");
}

TEST_CASE("configured libraries: CMake's -NOTFOUND reads as not found") {
  const LibraryPaths paths = configured_libraries();
  for (const std::string* path : {&paths.mimalloc, &paths.jemalloc, &paths.tcmalloc}) {
    INFO(*path);
    CHECK_FALSE(contains(*path, "NOTFOUND"));
  }
}

TEST_CASE("RINGLAB_ALLOCATOR_DIR replaces the configured libraries with that folder's, by soname") {
  ::setenv(kAllocatorDirVariable, "/opt/bundle/lib", 1);
  const LibraryPaths paths = configured_libraries();
  ::setenv(kAllocatorDirVariable, "", 1);  // empty: the configured paths again
  const LibraryPaths configured = configured_libraries();
  ::unsetenv(kAllocatorDirVariable);
  CHECK(paths.mimalloc == "/opt/bundle/lib/libmimalloc.so.2");
  CHECK(paths.jemalloc == "/opt/bundle/lib/libjemalloc.so.2");
  CHECK(paths.tcmalloc == "/opt/bundle/lib/libtcmalloc_minimal.so.4");
  CHECK(configured.mimalloc == configured_libraries().mimalloc);
  CHECK_FALSE(contains(configured.mimalloc, "/opt/bundle"));
  // Not there: reported missing with the errno, never dropped.
  ::setenv(kAllocatorDirVariable, "/nonexistent", 1);
  const auto jobs = plan_jobs(std::vector<Allocator>{Allocator::jemalloc});
  ::unsetenv(kAllocatorDirVariable);
  REQUIRE(jobs.size() == 1);
  REQUIRE(jobs[0].missing.has_value());
  CHECK(contains(*jobs[0].missing, "/nonexistent/libjemalloc.so.2"));
  CHECK(contains(*jobs[0].missing, "ENOENT"));
}

TEST_CASE("launch_options: bench itself under LD_PRELOAD, or a bundle's launcher under RINGLAB_PRELOAD") {
  ::unsetenv("RINGLAB_BIN_DIR");
  const ChildOptions plain = launch_options("/usr/local/bin/bench");
  CHECK(plain.executable == "/usr/local/bin/bench");
  CHECK(plain.preload_variable == "LD_PRELOAD");
  ::setenv("RINGLAB_BIN_DIR", "/opt/ringlab/bin", 1);
  const ChildOptions bundled = launch_options("/opt/ringlab/lib/ld-linux-x86-64.so.2");
  ::unsetenv("RINGLAB_BIN_DIR");
  CHECK(bundled.executable == "/opt/ringlab/bin/bench");
  CHECK(bundled.preload_variable == std::string(kLauncherPreloadVariable));
  // run_job puts the library in that variable, and leaves LD_PRELOAD alone.
  ChildOptions options = shell("printf '%s|%s' \"${LD_PRELOAD-unset}\" \"$RINGLAB_PRELOAD\" >&3");
  options.preload_variable = bundled.preload_variable;
  const Job job{Allocator::mimalloc, "/opt/ringlab/lib/libmimalloc.so.2", std::nullopt};
  const auto out = run_job(job, options);
  REQUIRE_MESSAGE(out.has_value(), (out ? std::string() : out.error().message));
  CHECK(*out == "unset|/opt/ringlab/lib/libmimalloc.so.2");
}

TEST_CASE("detect_allocator in this process names the library that serves malloc") {
  const Detected detected = detect_allocator();
  INFO(detected.describe());
  CHECK_FALSE(detected.library.empty());
#if defined(__SANITIZE_ADDRESS__)
  // ASan's interceptor serves malloc: not an allocator jobs can be compared with.
  CHECK_FALSE(detected.allocator.has_value());
  CHECK(jobs_unsupported_reason().has_value());
#else
  REQUIRE(detected.allocator.has_value());
  CHECK(*detected.allocator == Allocator::system);
  CHECK(detected.version.rfind("glibc ", 0) == 0);
  CHECK(detected.name() == "system");
  CHECK_FALSE(jobs_unsupported_reason().has_value());
#endif
}

TEST_CASE("each installed allocator's child job reports that allocator; system reports glibc") {
  for (const Job& job : plan_jobs(kAllAllocators)) {
    const std::string name(allocator_name(job.allocator));
    INFO("allocator job " << name);
    if (job.missing) {
      MESSAGE("not installed here, reported as missing: " << *job.missing);
      CHECK_FALSE(job.missing->empty());
      const auto refused = run_job(job, probe_options(job.allocator));
      REQUIRE_FALSE(refused.has_value());
      CHECK(contains(refused.error().message, "missing"));
      continue;
    }
    const auto output = run_job(job, probe_options(job.allocator));
    REQUIRE_MESSAGE(output.has_value(), (output ? std::string() : output.error().message));
    const auto report = job_report(job, *output);
    REQUIRE_MESSAGE(report.has_value(), (report ? std::string() : report.error().message));
    INFO("child says: " << report->environment.allocator);
    CHECK(report->environment.allocator.rfind(version_prefix(job.allocator), 0) == 0);
    // The probe's memory diagnoser defines malloc in front of the allocator and is named as such.
    CHECK(contains(report->environment.allocator, "called through "));
    CHECK(contains(report->environment.allocator, "allocator_probe"));
    if (job.allocator != Allocator::system) CHECK(contains(report->environment.allocator, job.preload));
    REQUIRE(report->cases.size() == 1);
    CHECK(report->cases[0].allocator == name);
  }
}

TEST_CASE("an allocator library loaded later, whose symbols resolve, is not taken for the one serving malloc" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  const auto jobs = plan_jobs(std::vector<Allocator>{Allocator::mimalloc});
  if (!ringlab::testing::feature_available("mimalloc", !jobs[0].missing, jobs[0].missing.value_or(""))) return;
  ChildOptions options = probe_options(Allocator::system);
  const std::vector<std::string> parent = {"--also-load", jobs[0].preload};
  options.arguments = child_arguments(parent, Allocator::system);
  const auto output = run_job(kSystemJob, options);
  REQUIRE_MESSAGE(output.has_value(), (output ? std::string() : output.error().message));
  const auto report = job_report(kSystemJob, *output);
  REQUIRE_MESSAGE(report.has_value(), (report ? std::string() : report.error().message));
  INFO(report->environment.allocator);
  CHECK(report->environment.allocator.rfind("glibc ", 0) == 0);
}

TEST_CASE("a child that does not run on its job's allocator fails the job, saying what it runs on") {
  // A preload the dynamic loader ignores (no such file; it warns on stderr) leaves the child on glibc.
  const Job job{Allocator::jemalloc, "/nonexistent/libjemalloc.so.2", std::nullopt};
  const auto result = run_job(job, probe_options(Allocator::jemalloc));
  REQUIRE_FALSE(result.has_value());
  INFO(result.error().message);
  CHECK(contains(result.error().message, "exited with status 1"));
  CHECK(contains(result.error().message, "runs on glibc"));
  CHECK(contains(result.error().message, "did not take"));
}

TEST_CASE("job_report refuses a report whose cases ran on another allocator, or that is not a report") {
  Report report;
  CaseResult c;
  c.strategy = "presized";
  c.payload = "weather";
  c.size = 10;
  c.allocator = "system";
  report.cases.push_back(c);
  const std::string text = to_json(report).dump();

  CHECK(job_report(kSystemJob, text).has_value());
  const Job mimalloc{Allocator::mimalloc, "/usr/lib/libmimalloc.so.2", std::nullopt};
  const auto wrong = job_report(mimalloc, text);
  REQUIRE_FALSE(wrong.has_value());
  INFO(wrong.error().message);
  CHECK(contains(wrong.error().message, "ran on 'system'"));

  const auto garbage = job_report(kSystemJob, "{\"not\": \"a report\"");
  REQUIRE_FALSE(garbage.has_value());
  CHECK(contains(garbage.error().message, "allocator job system: report"));
  CHECK_FALSE(job_report(kSystemJob, "").has_value());
}

TEST_CASE("run_job returns what the child wrote on fd 3, with LD_PRELOAD set to the job's library only") {
  SUBCASE("system: LD_PRELOAD removed") {
    ::setenv("LD_PRELOAD", "", 1);  // an inherited (empty) value must not reach the child
    const auto out = run_job(kSystemJob, shell("printf '%s' \"${LD_PRELOAD-unset}\" >&3"));
    ::unsetenv("LD_PRELOAD");
    REQUIRE_MESSAGE(out.has_value(), (out ? std::string() : out.error().message));
    CHECK(*out == "unset");
  }
  SUBCASE("another allocator: LD_PRELOAD is its library") {
    // A path that does not exist: the loader ignores it (with a warning on stderr) and the shell
    // only echoes the variable.
    const Job job{Allocator::tcmalloc, "/nonexistent/libtcmalloc_minimal.so.4", std::nullopt};
    const auto out = run_job(job, shell("printf '%s' \"$LD_PRELOAD\" >&3"));
    REQUIRE_MESSAGE(out.has_value(), (out ? std::string() : out.error().message));
    CHECK(*out == "/nonexistent/libtcmalloc_minimal.so.4");
  }
  SUBCASE("large output arrives whole") {
    const auto out = run_job(kSystemJob, shell("head -c 1000000 /dev/zero >&3"));
    REQUIRE_MESSAGE(out.has_value(), (out ? std::string() : out.error().message));
    CHECK(out->size() == 1000000);
  }
}

TEST_CASE("run_job: children that misbehave give errors that say how, and are never left running") {
  struct Row {
    const char* name;
    ChildOptions options;
    const char* error_part;
  };
  ChildOptions missing_exe;
  missing_exe.executable = "/nonexistent/bench";
  ChildOptions flood = shell("head -c 200000 /dev/zero >&3; sleep 30");
  flood.max_output_bytes = 1000;
  const Row rows[] = {
      {"hangs: killed at the timeout", shell("sleep 30", 300ms), "no result within 300 ms; killed"},
      {"hangs after writing: killed at the timeout", shell("printf x >&3; sleep 30", 300ms), "no result within"},
      {"floods fd 3: killed at the output limit", flood, "wrote more than 1000 bytes"},
      {"exits non-zero: status and its words", shell("printf 'boom' >&3; exit 4"), "exited with status 4; it wrote \"boom\""},
      {"dies of a signal", shell("kill -SEGV $$"), "killed by signal 11 (SIGSEGV)"},
      {"cannot be executed", missing_exe, "exec /nonexistent/bench"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const auto result = run_job(kSystemJob, row.options);
    REQUIRE_FALSE(result.has_value());
    INFO(result.error().message);
    CHECK(contains(result.error().message, row.error_part));
    CHECK(contains(result.error().message, "allocator job system"));
  }
  // Every child was reaped: none is left for this process to wait for.
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

TEST_CASE("run_job stops reading when the child exits, even if a grandchild keeps fd 3 open") {
  // The background sleep inherits fd 3 and outlives the shell by a second; waiting for end of file
  // would wait for it too.
  const auto out = run_job(kSystemJob, shell("printf done >&3; sleep 1 & exit 0"));
  REQUIRE_MESSAGE(out.has_value(), (out ? std::string() : out.error().message));
  CHECK(*out == "done");
}

TEST_CASE("a missing job is refused before anything is started") {
  const Job job{Allocator::mimalloc, {}, std::string("mimalloc: shared library not found")};
  const auto result = run_job(job, shell("exit 0"));
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().message == "allocator job mimalloc: missing: mimalloc: shared library not found");
}

TEST_CASE("ratio_to_system divides by the same strategy, payload and size under system") {
  Report report;
  auto add = [&report](std::string strategy, std::size_t size, std::string allocator, double mean,
                       CaseStatus status = CaseStatus::ok) {
    CaseResult c;
    c.strategy = std::move(strategy);
    c.payload = "weather";
    c.size = size;
    c.allocator = std::move(allocator);
    c.stats.mean = mean;
    c.status = status;
    report.cases.push_back(c);
    return report.cases.size() - 1;
  };
  add("presized", 10, "system", 200);
  add("presized", 1000, "system", 1000);
  add("string_copy", 10, "system", 400);
  const auto mi = add("presized", 10, "mimalloc", 150);
  const auto je = add("presized", 1000, "jemalloc", 1100);
  const auto sys = add("arena", 10, "system", 100);
  const auto orphan = add("views", 10, "mimalloc", 90);
  const auto failed_base = add("views", 10, "system", 0, CaseStatus::failed);
  (void)failed_base;
  const auto failed = add("string_copy", 10, "tcmalloc", 300, CaseStatus::failed);

  CHECK(*ratio_to_system(report, report.cases[mi]) == doctest::Approx(0.75));
  CHECK(*ratio_to_system(report, report.cases[je]) == doctest::Approx(1.1));
  CHECK(*ratio_to_system(report, report.cases[sys]) == doctest::Approx(1.0));
  CHECK_FALSE(ratio_to_system(report, report.cases[orphan]).has_value());  // its system case failed
  CHECK_FALSE(ratio_to_system(report, report.cases[failed]).has_value());
}
