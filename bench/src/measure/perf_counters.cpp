#include "ringlab/bench/measure/perf_counters.hpp"

#include "ringlab/bench/core/error.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

namespace ringlab::bench::perf {

namespace {

struct EventInfo {
  Event event;
  std::string_view name;
  uint32_t type;
  uint64_t config;
};

constexpr std::array<EventInfo, kEventCount> kEvents = {{
    {Event::task_clock, "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {Event::context_switches, "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {Event::cpu_migrations, "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {Event::page_faults, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {Event::cycles, "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {Event::instructions, "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {Event::cache_misses, "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {Event::branch_misses, "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
}};

const EventInfo& info(Event event) noexcept { return kEvents[static_cast<std::size_t>(event)]; }

int read_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int level = -1000;
  if (!(in >> level)) return -1000;
  return level;
}

// "ENOENT: No such file or directory": the symbol first, because a reader of the counters line looks
// for it ("not supported by this machine (ENOENT: ...)"); the words are base/'s, thread-safe.
std::string errno_text(int code) {
  std::string text = base::errno_name(code);
  text += ": ";
  text += base::errno_description(code);
  return text;
}

bool is_permission(int code) { return code == EACCES || code == EPERM; }

}  // namespace

std::string_view event_name(Event event) noexcept { return info(event).name; }

std::optional<Event> parse_event(std::string_view name) noexcept {
  for (const auto& e : kEvents) {
    if (e.name == name) return e.event;
  }
  return std::nullopt;
}

bool is_hardware(Event event) noexcept { return info(event).type == PERF_TYPE_HARDWARE; }

std::optional<double> scaled_delta(const Sample& before, const Sample& after) noexcept {
  // Unsigned differences: a 64-bit counter does not wrap within a run, and modular arithmetic keeps
  // a (theoretical) wrap correct.
  const uint64_t value = after.value - before.value;
  const uint64_t enabled = after.time_enabled - before.time_enabled;
  const uint64_t running = after.time_running - before.time_running;
  if (enabled == 0) return static_cast<double>(value);
  if (running == 0) return std::nullopt;
  if (running >= enabled) return static_cast<double>(value);
  return static_cast<double>(value) * (static_cast<double>(enabled) / static_cast<double>(running));
}

void Accumulator::add(const Sample& before, const Sample& after, uint64_t ops) noexcept {
  ++intervals;
  enabled_ns += after.time_enabled - before.time_enabled;
  running_ns += after.time_running - before.time_running;
  const auto delta = scaled_delta(before, after);
  if (!delta) {
    ++uncounted;
    return;
  }
  total += *delta;
  counted_ops += ops;
}

double Accumulator::running_fraction() const noexcept {
  if (enabled_ns == 0) return uncounted == 0 ? 1.0 : 0.0;
  if (running_ns >= enabled_ns) return 1.0;
  return static_cast<double>(running_ns) / static_cast<double>(enabled_ns);
}

std::optional<double> per_op(double total, uint64_t ops) noexcept {
  if (ops == 0) return std::nullopt;
  return total / static_cast<double>(ops);
}

std::optional<double> ipc(std::optional<double> instructions, std::optional<double> cycles) noexcept {
  if (!instructions || !cycles || *cycles <= 0) return std::nullopt;
  return *instructions / *cycles;
}

int open_event(const EventSpec& spec, int group_fd) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = spec.type;
  attr.config = spec.config;
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // A member added to a group that is already on the PMU would only start counting at the group's
  // next sched-in (observed: siblings reading 0 until a context switch). So a leader starts
  // disabled and open() enables the whole group once it is complete; from then on the counters run
  // and begin()/end() read differences, with no ioctl in the measured path.
  attr.disabled = spec.group_leader ? 1 : 0;
  attr.inherit = 0;
  attr.exclude_kernel = spec.exclude_kernel ? 1 : 0;
  attr.exclude_hv = spec.exclude_kernel ? 1 : 0;
  const long fd = syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any cpu */, group_fd,
                          PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  return static_cast<int>(fd);
}

std::string refusal_reason(int code, int paranoid) {
  if (code == ENOENT || code == EOPNOTSUPP || code == ENODEV) {
    return "not supported by this machine (" + errno_text(code) + ")";
  }
  if (is_permission(code)) {
    return "not permitted with perf_event_paranoid=" + std::to_string(paranoid) +
           " without CAP_PERFMON (" + errno_text(code) + ")";
  }
  return "perf_event_open failed (" + errno_text(code) + ")";
}

PerfCounters PerfCounters::open(Options options) {
  PerfCounters counters;
  counters.paranoid_ = read_paranoid();
  if (!options.opener) options.opener = open_event;

  // Each event once (the first mention counts), so a group never holds more than the four events
  // of its kind and GroupRead's fixed size always fits.
  for (Event event : options.events) {
    const bool listed = std::any_of(counters.status_.begin(), counters.status_.end(),
                                    [event](const EventStatus& s) { return s.event == event; });
    if (listed) continue;
    counters.status_.push_back(EventStatus{event, false, Scope::everything, {}});
    counters.acc_.emplace_back();
  }

  // Two groups: software first, then hardware; members in the order the caller listed them.
  for (const bool hardware : {false, true}) {
    Group group;
    Scope scope = Scope::everything;
    for (std::size_t i = 0; i < counters.status_.size(); ++i) {
      EventStatus& status = counters.status_[i];
      if (is_hardware(status.event) != hardware) continue;
      const EventInfo& e = info(status.event);
      EventSpec spec{status.event, e.type, e.config, scope == Scope::user_only, group.leader_fd < 0};
      int fd = options.opener(spec, group.leader_fd);
      // The leader decides the group's scope: once kernel counting was refused, the members are
      // opened user-only straight away so that one group never mixes scopes.
      if (fd < 0 && is_permission(-fd) && spec.group_leader && scope == Scope::everything) {
        spec.exclude_kernel = true;
        const int retry = options.opener(spec, group.leader_fd);
        if (retry >= 0) {
          scope = Scope::user_only;
          fd = retry;
        }
      }
      if (fd < 0) {
        status.reason = refusal_reason(-fd, counters.paranoid_);
        continue;
      }
      status.open = true;
      status.scope = scope;
      if (group.leader_fd < 0) group.leader_fd = fd;
      group.fds.push_back(fd);
      group.slot.push_back(i);
    }
    if (group.fds.empty()) continue;
    if (::ioctl(group.leader_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0) {
      const std::string reason = errno_message("ioctl PERF_EVENT_IOC_ENABLE", "event group", errno);
      for (std::size_t m = 0; m < group.fds.size(); ++m) {
        EventStatus& status = counters.status_[group.slot[m]];
        status.open = false;
        status.reason = reason;
        ::close(group.fds[m]);
      }
      continue;
    }
    counters.groups_.push_back(std::move(group));
  }
  return counters;
}

PerfCounters::PerfCounters(PerfCounters&& other) noexcept
    : groups_(std::move(other.groups_)),
      status_(std::move(other.status_)),
      acc_(std::move(other.acc_)),
      read_errors_(other.read_errors_),
      paranoid_(other.paranoid_) {
  other.groups_.clear();
}

PerfCounters& PerfCounters::operator=(PerfCounters&& other) noexcept {
  if (this != &other) {
    close_all();
    groups_ = std::move(other.groups_);
    other.groups_.clear();
    status_ = std::move(other.status_);
    acc_ = std::move(other.acc_);
    read_errors_ = other.read_errors_;
    paranoid_ = other.paranoid_;
  }
  return *this;
}

PerfCounters::~PerfCounters() { close_all(); }

void PerfCounters::close_all() noexcept {
  for (auto& group : groups_) {
    for (int fd : group.fds) ::close(fd);
    group.fds.clear();
  }
  groups_.clear();
}

bool PerfCounters::read_group(const Group& group, GroupRead& out) noexcept {
  const ssize_t n = ::read(group.leader_fd, &out, sizeof(out));
  const auto expected = static_cast<ssize_t>(3 * sizeof(uint64_t) + group.fds.size() * sizeof(uint64_t));
  return n == expected && out.nr == group.fds.size();
}

void PerfCounters::begin() noexcept {
  for (auto& group : groups_) {
    group.before_ok = read_group(group, group.before);
    if (!group.before_ok) ++read_errors_;
  }
}

void PerfCounters::end(uint64_t ops) noexcept {
  for (auto& group : groups_) {
    GroupRead after;
    const bool ok = read_group(group, after);
    if (!ok) ++read_errors_;
    for (std::size_t m = 0; m < group.fds.size(); ++m) {
      Accumulator& acc = acc_[group.slot[m]];
      if (!ok || !group.before_ok) {
        acc.add_uncounted();
        continue;
      }
      acc.add(Sample{group.before.values[m], group.before.time_enabled, group.before.time_running},
              Sample{after.values[m], after.time_enabled, after.time_running}, ops);
    }
    group.before_ok = false;
  }
}

void PerfCounters::reset() noexcept {
  for (auto& acc : acc_) acc = Accumulator{};
  for (auto& group : groups_) group.before_ok = false;
  read_errors_ = 0;
}

bool PerfCounters::any_open() const noexcept { return !groups_.empty(); }

Summary PerfCounters::summary() const {
  Summary summary;
  summary.read_errors = read_errors_;
  std::optional<double> cycles;
  std::optional<double> instructions;
  for (std::size_t i = 0; i < status_.size(); ++i) {
    const EventStatus& status = status_[i];
    const Accumulator& acc = acc_[i];
    Value value{status.event, std::nullopt, acc.running_fraction(), acc.uncounted, status.reason};
    if (status.open) {
      value.per_op = per_op(acc.total, acc.counted_ops);
      if (!value.per_op) {
        value.reason = acc.intervals == 0 ? "no measured interval"
                                          : "not counted in any interval (never on the PMU, or reads failed)";
      }
    }
    if (status.event == Event::cycles) cycles = value.per_op;
    if (status.event == Event::instructions) instructions = value.per_op;
    summary.values.push_back(std::move(value));
  }
  summary.ipc = ipc(instructions, cycles);
  return summary;
}

Counters counter_values(const Summary& summary) {
  Counters out;
  for (const Value& value : summary.values) out[std::string(event_name(value.event))] = value.per_op;
  if (summary.ipc) out["ipc"] = summary.ipc;
  return out;
}

std::vector<std::string> status_lines(const PerfCounters& counters) {
  std::vector<std::string> lines;
  for (const EventStatus& status : counters.status()) {
    std::string line(event_name(status.event));
    if (!status.open) {
      line += ": n/a: " + status.reason;
    } else if (status.scope == Scope::user_only) {
      line += ": user space only (perf_event_paranoid=" + std::to_string(counters.paranoid()) + ")";
    } else {
      continue;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace ringlab::bench::perf
