// Tests for bench/src/measure/perf_counters.cpp: the pure counter arithmetic first (exact), then the real
// perf_event_open counters of this thread, then refusals injected through the opener seam.
#include "ringlab/bench/measure/perf_counters.hpp"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

using namespace ringlab::bench::perf;

namespace {

Value value_of(const Summary& summary, Event event) {
  for (const auto& v : summary.values) {
    if (v.event == event) return v;
  }
  FAIL("event missing from summary: " << std::string(event_name(event)));
  return summary.values.front();  // unreachable: FAIL throws
}

const EventStatus& status_of(const PerfCounters& counters, Event event) {
  for (const auto& s : counters.status()) {
    if (s.event == event) return s;
  }
  FAIL("event missing from status: " << std::string(event_name(event)));
  return counters.status().front();
}

// Touches one byte per page. Not instrumented: ASan's shadow checks would fault in shadow pages
// and add page faults that are not the ones being counted.
__attribute__((no_sanitize("address"))) void touch_pages(volatile char* base, std::size_t pages,
                                                          std::size_t page_size) {
  for (std::size_t i = 0; i < pages; ++i) base[i * page_size] = static_cast<char>(i);
}

}  // namespace

TEST_CASE("scaled_delta: difference, scaled by enabled/running when multiplexed") {
  struct Row {
    const char* name;
    Sample before;
    Sample after;
    std::optional<double> expected;
  };
  const Row rows[] = {
      {"always on the PMU: plain difference", {100, 1000, 1000}, {350, 3000, 3000}, 250.0},
      {"on the PMU half the interval: doubled", {0, 0, 0}, {500, 2000, 1000}, 1000.0},
      {"on the PMU a quarter of the interval", {10, 100, 50}, {110, 500, 150}, 400.0},
      {"enabled but never running: unknown, not zero", {5, 100, 100}, {5, 900, 100}, std::nullopt},
      {"no time passed at all: the difference as is", {7, 100, 100}, {7, 100, 100}, 0.0},
      {"running a hair above enabled (rounding): not scaled down", {0, 0, 0}, {42, 1000, 1001}, 42.0},
      {"values near the top of the 64-bit range", {UINT64_MAX - 10, 0, 0}, {UINT64_MAX, 10, 10}, 10.0},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    const auto got = scaled_delta(row.before, row.after);
    REQUIRE(got.has_value() == row.expected.has_value());
    if (row.expected) CHECK(*got == doctest::Approx(*row.expected));
  }
}

TEST_CASE("Accumulator sums scaled deltas and leaves uncounted intervals out of the ops") {
  Accumulator acc;
  acc.add({0, 0, 0}, {100, 1000, 1000}, 10);    // 100 over 10 ops
  acc.add({100, 1000, 1000}, {150, 2000, 1500}, 10);  // 50 seen in half the time: 100
  acc.add({150, 2000, 1500}, {150, 3000, 1500}, 10);  // never on the PMU: not counted
  acc.add_uncounted();                                // a failed read
  CHECK(acc.intervals == 4);
  CHECK(acc.uncounted == 2);
  CHECK(acc.counted_ops == 20);
  CHECK(acc.total == doctest::Approx(200.0));
  CHECK(acc.enabled_ns == 3000);
  CHECK(acc.running_ns == 1500);
  CHECK(acc.running_fraction() == doctest::Approx(0.5));
  const auto each = per_op(acc.total, acc.counted_ops);
  REQUIRE(each.has_value());
  CHECK(*each == doctest::Approx(10.0));
}

TEST_CASE("per_op and ipc are n/a rather than a division by zero") {
  CHECK_FALSE(per_op(123.0, 0).has_value());
  CHECK(*per_op(300.0, 3) == doctest::Approx(100.0));
  CHECK(*ipc(2000.0, 1000.0) == doctest::Approx(2.0));
  CHECK_FALSE(ipc(std::nullopt, 1000.0).has_value());
  CHECK_FALSE(ipc(2000.0, std::nullopt).has_value());
  CHECK_FALSE(ipc(2000.0, 0.0).has_value());
}

TEST_CASE("event names round-trip in perf's spelling, and hardware ones are marked") {
  for (Event event : kAllEvents) {
    INFO(std::string(event_name(event)));
    const auto parsed = parse_event(event_name(event));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == event);
  }
  CHECK(event_name(Event::task_clock) == "task-clock");
  CHECK(event_name(Event::branch_misses) == "branch-misses");
  CHECK_FALSE(parse_event("cycle").has_value());
  CHECK_FALSE(parse_event("").has_value());
  CHECK_FALSE(is_hardware(Event::page_faults));
  CHECK(is_hardware(Event::instructions));
}

TEST_CASE("refusal_reason names the errno and, for permissions, perf_event_paranoid") {
  const std::string unsupported = refusal_reason(ENOENT, 2);
  CHECK(unsupported.find("not supported") != std::string::npos);
  CHECK(unsupported.find("ENOENT") != std::string::npos);
  const std::string denied = refusal_reason(EACCES, 3);
  CHECK(denied.find("perf_event_paranoid=3") != std::string::npos);
  CHECK(denied.find("EACCES") != std::string::npos);
  CHECK(refusal_reason(EMFILE, 2).find("EMFILE") != std::string::npos);
}

// page-faults is a member of the software group, not its leader: this also guards against members
// that join an already running group and stay silent until the next context switch.
TEST_CASE("page-faults counts touches of fresh anonymous pages within 10 %") {
  auto counters = PerfCounters::open();
  const auto& faults = status_of(counters, Event::page_faults);
  INFO("page-faults: " << faults.reason);
  REQUIRE(faults.open);

  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  for (const std::size_t pages : {64u, 512u, 2048u}) {
    INFO("pages touched: " << pages);
    void* memory = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(memory != MAP_FAILED);
    // One fault per page only if the kernel does not back the range with a transparent huge page.
    REQUIRE(madvise(memory, pages * page, MADV_NOHUGEPAGE) == 0);

    counters.reset();
    counters.begin();
    touch_pages(static_cast<volatile char*>(memory), pages, page);
    counters.end(pages);
    munmap(memory, pages * page);

    const Summary summary = counters.summary();
    const Value v = value_of(summary, Event::page_faults);
    REQUIRE(v.per_op.has_value());
    INFO("page faults per touched page: " << *v.per_op);
    CHECK(*v.per_op >= 0.9);
    CHECK(*v.per_op <= 1.1);
    CHECK(summary.read_errors == 0);
  }
}

TEST_CASE("software counters are always open; task-clock advances over a measured interval") {
  auto counters = PerfCounters::open();
  for (Event event : {Event::task_clock, Event::context_switches, Event::cpu_migrations, Event::page_faults}) {
    const auto& status = status_of(counters, event);
    INFO(std::string(event_name(event)) << ": " << status.reason);
    CHECK(status.open);
  }
  counters.begin();
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 200000; ++i) sink = sink + i;
  counters.end(1);
  const Summary summary = counters.summary();
  const Value clock = value_of(summary, Event::task_clock);
  REQUIRE(clock.per_op.has_value());
  CHECK(*clock.per_op > 0.0);
  CHECK(value_of(summary, Event::context_switches).per_op.has_value());
}

TEST_CASE("hardware counters on this machine either count or read n/a with a reason, never an error") {
  auto counters = PerfCounters::open();
  counters.begin();
  counters.end(1);
  const Summary summary = counters.summary();
  bool have_cycles = false;
  bool have_instructions = false;
  for (Event event : {Event::cycles, Event::instructions, Event::cache_misses, Event::branch_misses}) {
    const auto& status = status_of(counters, event);
    const Value v = value_of(summary, event);
    INFO(std::string(event_name(event)) << ": " << status.reason);
    if (status.open) {
      CHECK(status.reason.empty());
    } else {
      CHECK_FALSE(v.per_op.has_value());
      CHECK_FALSE(v.reason.empty());
      CHECK(v.reason == status.reason);
    }
    if (event == Event::cycles) have_cycles = v.per_op.has_value();
    if (event == Event::instructions) have_instructions = v.per_op.has_value();
  }
  CHECK(summary.ipc.has_value() == (have_cycles && have_instructions));
  // Software counting is unaffected by whatever happened to the hardware group.
  CHECK(value_of(summary, Event::task_clock).per_op.has_value());
}

TEST_CASE("an unsupported hardware counter is n/a with its errno; the others keep counting") {
  Options options;
  std::vector<Event> asked;
  options.opener = [&asked](const EventSpec& spec, int group_fd) {
    asked.push_back(spec.event);
    if (is_hardware(spec.event)) return -EOPNOTSUPP;
    return open_event(spec, group_fd);
  };
  auto counters = PerfCounters::open(options);
  CHECK(asked.size() == kEventCount);
  CHECK(counters.any_open());
  counters.begin();
  counters.end(4);
  const Summary summary = counters.summary();
  for (const Value& v : summary.values) {
    INFO(std::string(event_name(v.event)) << ": " << v.reason);
    if (is_hardware(v.event)) {
      CHECK_FALSE(v.per_op.has_value());
      CHECK(v.reason.find("EOPNOTSUPP") != std::string::npos);
    } else {
      CHECK(v.per_op.has_value());
    }
  }
  CHECK_FALSE(summary.ipc.has_value());
}

TEST_CASE("a refused group leader hands the lead to the next event of its group") {
  Options options;
  options.events = {Event::task_clock, Event::page_faults, Event::context_switches};
  std::vector<std::pair<Event, bool>> opened;  // event, opened as leader
  options.opener = [&opened](const EventSpec& spec, int group_fd) {
    if (spec.event == Event::task_clock) return -ENOENT;
    opened.emplace_back(spec.event, group_fd < 0);
    return open_event(spec, group_fd);
  };
  auto counters = PerfCounters::open(options);
  REQUIRE(opened.size() == 2);
  CHECK(opened[0] == std::pair{Event::page_faults, true});
  CHECK(opened[1] == std::pair{Event::context_switches, false});
  counters.begin();
  counters.end(1);
  const Summary summary = counters.summary();
  CHECK_FALSE(value_of(summary, Event::task_clock).per_op.has_value());
  CHECK(value_of(summary, Event::page_faults).per_op.has_value());
  CHECK(value_of(summary, Event::context_switches).per_op.has_value());
}

TEST_CASE("perf_event_paranoid refusing kernel counting falls back to user-space counting") {
  Options options;
  options.events = {Event::task_clock, Event::page_faults};
  int refusals = 0;
  options.opener = [&refusals](const EventSpec& spec, int group_fd) {
    if (!spec.exclude_kernel) {
      ++refusals;
      return -EACCES;  // what paranoid >= 2 answers an unprivileged process asking for kernel events
    }
    return open_event(spec, group_fd);
  };
  auto counters = PerfCounters::open(options);
  // Only the leader asks for kernel counting; the member is opened user-only straight away.
  CHECK(refusals == 1);
  for (const auto& status : counters.status()) {
    INFO(std::string(event_name(status.event)));
    CHECK(status.open);
    CHECK(status.scope == Scope::user_only);
  }
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* memory = mmap(nullptr, 256 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(memory != MAP_FAILED);
  REQUIRE(madvise(memory, 256 * page, MADV_NOHUGEPAGE) == 0);
  counters.begin();
  touch_pages(static_cast<volatile char*>(memory), 256, page);
  counters.end(256);
  munmap(memory, 256 * page);
  // Faults taken in user mode are still counted with exclude_kernel.
  const auto faults = value_of(counters.summary(), Event::page_faults).per_op;
  REQUIRE(faults.has_value());
  CHECK(*faults >= 0.9);
  CHECK(*faults <= 1.1);
}

TEST_CASE("perf_event_paranoid refusing everything makes every counter n/a, naming the level") {
  Options options;
  options.opener = [](const EventSpec&, int) { return -EACCES; };
  auto counters = PerfCounters::open(options);
  CHECK_FALSE(counters.any_open());
  counters.begin();
  counters.end(1);
  for (const Value& v : counters.summary().values) {
    INFO(std::string(event_name(v.event)) << ": " << v.reason);
    CHECK_FALSE(v.per_op.has_value());
    CHECK(v.reason.find("perf_event_paranoid=") != std::string::npos);
  }
}

TEST_CASE("paranoid() reports the level the kernel has") {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int level = 0;
  REQUIRE(static_cast<bool>(in >> level));
  CHECK(PerfCounters::open().paranoid() == level);
}

TEST_CASE("reset forgets the totals; a summary without intervals is n/a, not zero") {
  auto counters = PerfCounters::open();
  counters.begin();
  counters.end(10);
  REQUIRE(value_of(counters.summary(), Event::task_clock).per_op.has_value());
  counters.reset();
  const Value clock = value_of(counters.summary(), Event::task_clock);
  CHECK_FALSE(clock.per_op.has_value());
  CHECK(clock.reason == "no measured interval");
}

TEST_CASE("end() without begin() counts nothing instead of a difference against garbage") {
  auto counters = PerfCounters::open();
  counters.end(5);
  const Value clock = value_of(counters.summary(), Event::task_clock);
  CHECK_FALSE(clock.per_op.has_value());
  CHECK(clock.uncounted_intervals == 1);
}

TEST_CASE("moving PerfCounters moves the descriptors with it") {
  auto first = PerfCounters::open();
  REQUIRE(first.any_open());
  PerfCounters second = std::move(first);
  CHECK(second.any_open());
  CHECK_FALSE(first.any_open());  // NOLINT(bugprone-use-after-move): the moved-from state is defined
  second.begin();
  second.end(1);
  CHECK(value_of(second.summary(), Event::task_clock).per_op.has_value());
}

TEST_CASE("counter_values maps n/a events to null, never to 0, and adds ipc only when it exists") {
  Summary summary;
  summary.values = {Value{Event::task_clock, 1500.0, 1.0, 0, {}},
                    Value{Event::page_faults, 0.0, 1.0, 0, {}},
                    Value{Event::cycles, std::nullopt, 1.0, 0, "not supported by this machine (ENOENT)"}};
  ringlab::bench::Counters values = counter_values(summary);
  REQUIRE(values.size() == 3);
  CHECK(values.at("task-clock") == 1500.0);
  CHECK(values.at("page-faults") == 0.0);  // a measured zero stays a zero
  CHECK_FALSE(values.at("cycles").has_value());
  CHECK(values.count("ipc") == 0);

  summary.ipc = 1.25;
  values = counter_values(summary);
  CHECK(values.at("ipc") == 1.25);
}

TEST_CASE("status_lines names each n/a event with its reason and each user-only event") {
  Options options;
  options.events = {Event::task_clock, Event::page_faults, Event::cycles};
  options.opener = [](const EventSpec& spec, int group_fd) {
    if (is_hardware(spec.event)) return -ENOENT;
    if (!spec.exclude_kernel) return -EACCES;
    return open_event(spec, group_fd);
  };
  const auto counters = PerfCounters::open(options);
  const auto lines = status_lines(counters);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("task-clock: user space only (perf_event_paranoid=", 0) == 0);
  CHECK(lines[1].rfind("page-faults: user space only", 0) == 0);
  CHECK(lines[2].rfind("cycles: n/a: not supported by this machine (ENOENT", 0) == 0);

  Options software;
  software.events = {Event::task_clock};
  CHECK(status_lines(PerfCounters::open(software)).empty());
}

TEST_CASE("an event listed twice is opened and reported once") {
  Options options;
  options.events = {Event::page_faults, Event::task_clock, Event::page_faults, Event::task_clock,
                    Event::context_switches, Event::cpu_migrations, Event::page_faults};
  int opened = 0;
  options.opener = [&opened](const EventSpec& spec, int group_fd) {
    ++opened;
    return open_event(spec, group_fd);
  };
  auto counters = PerfCounters::open(options);
  CHECK(opened == 4);
  REQUIRE(counters.status().size() == 4);
  CHECK(counters.status()[0].event == Event::page_faults);
  CHECK(counters.status()[1].event == Event::task_clock);
  counters.begin();
  counters.end(1);
  const Summary summary = counters.summary();
  REQUIRE(summary.values.size() == 4);
  for (const Value& v : summary.values) {
    INFO(std::string(event_name(v.event)) << ": " << v.reason);
    CHECK(v.per_op.has_value());
  }
}
