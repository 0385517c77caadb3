#pragma once
// PerfCounters: perf_event_open(2) counters read around each measured iteration (`bench --counters`).
//
// What is counted: the calling thread only (pid 0, cpu -1, inherit off), i.e. the bench thread that
// runs the measured iterations. The server child, io_uring's kernel workers (io-wq, SQPOLL) and any
// other thread are not counted. Kernel work done in the thread's own syscalls and page faults is
// counted, unless perf_event_paranoid forces user-space-only counting; then the counter's `scope`
// says so and the header should show it.
//
// Groups: the software events (task-clock, context-switches, cpu-migrations, page-faults) form one
// group, the hardware events (cycles, instructions, cache-misses, branch-misses) another, so the
// hardware ones are on the PMU together and IPC divides numbers from the same intervals. An event
// the kernel refuses is left out of its group and reads n/a with the reason (errno text); it never
// takes the others down. If a group leader is refused, the next event of the group leads.
//
// Reading, not toggling: the counters run from open() on; begin() and end() each read every group
// once (one read(2) per group, no allocation) and end() adds the difference, scaled by
// time_enabled / time_running when the kernel multiplexed the PMU. So an interval includes roughly
// one read(2) worth of task-clock (about a microsecond); compare per-op values between strategies,
// not against zero. An interval in which a group never got onto the PMU is not counted at all (its
// ops are left out of the per-op division) rather than guessed.
//
// Arithmetic (scaled_delta, Accumulator, per_op, ipc) is pure and lives apart from the syscalls so
// that it can be tested exactly: a counter that is quietly 5 % off looks just like a correct one.
//
// Errors: open() never fails as a whole; each event carries its own status and reason. begin()/end()
// are noexcept; a failed read leaves that interval uncounted and is counted in `read_errors`.
//
// Ownership: PerfCounters owns its file descriptors (move-only, closed on destruction). Summary and
// status values are copies and live as long as the caller keeps them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench::perf {

enum class Event : uint8_t {
  task_clock,        // software, ns on the CPU
  context_switches,  // software
  cpu_migrations,    // software
  page_faults,       // software, minor and major
  cycles,            // hardware
  instructions,      // hardware
  cache_misses,      // hardware (last-level cache, as the PMU defines it)
  branch_misses,     // hardware
};
inline constexpr std::size_t kEventCount = 8;
inline constexpr std::array<Event, kEventCount> kAllEvents = {
    Event::task_clock, Event::context_switches, Event::cpu_migrations, Event::page_faults,
    Event::cycles,     Event::instructions,     Event::cache_misses,   Event::branch_misses};

// perf's own spelling: "task-clock", "context-switches", "cycles", ...
[[nodiscard]] std::string_view event_name(Event event) noexcept;
[[nodiscard]] std::optional<Event> parse_event(std::string_view name) noexcept;
[[nodiscard]] bool is_hardware(Event event) noexcept;

// ---- Pure arithmetic -------------------------------------------------------------------------------

// One reading of one counter with PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING.
struct Sample {
  uint64_t value = 0;
  uint64_t time_enabled = 0;  // ns the event was enabled
  uint64_t time_running = 0;  // ns it was actually on the PMU (< enabled when multiplexed)
};

// The counter's increase between two readings, scaled up by enabled/running for the time the event
// was multiplexed out. nullopt when it never ran during the interval although it was enabled (the
// value is unknown, not zero). An interval with no enabled time at all reads 0.
[[nodiscard]] std::optional<double> scaled_delta(const Sample& before, const Sample& after) noexcept;

// Sums the scaled deltas of one counter over the measured iterations.
struct Accumulator {
  double total = 0;             // sum of scaled deltas over counted intervals
  uint64_t counted_ops = 0;     // ops of the intervals that were counted
  uint64_t intervals = 0;       // intervals seen
  uint64_t uncounted = 0;       // intervals in which the counter never ran
  uint64_t enabled_ns = 0;      // summed over all intervals
  uint64_t running_ns = 0;

  void add(const Sample& before, const Sample& after, uint64_t ops) noexcept;
  void add_uncounted() noexcept { ++intervals, ++uncounted; }
  // Share of the enabled time the counter was on the PMU (1.0 = never multiplexed).
  [[nodiscard]] double running_fraction() const noexcept;
};

// total / ops; nullopt when no op was counted.
[[nodiscard]] std::optional<double> per_op(double total, uint64_t ops) noexcept;
// instructions per cycle; nullopt unless both exist and cycles > 0.
[[nodiscard]] std::optional<double> ipc(std::optional<double> instructions, std::optional<double> cycles) noexcept;

// ---- The counters ------------------------------------------------------------------------------------

// What open() asks the kernel for, one event at a time (the test seam's argument).
struct EventSpec {
  Event event = Event::task_clock;
  uint32_t type = 0;      // PERF_TYPE_SOFTWARE or PERF_TYPE_HARDWARE
  uint64_t config = 0;    // PERF_COUNT_SW_* or PERF_COUNT_HW_*
  bool exclude_kernel = false;
  bool group_leader = false;
};

// Opens one event in the group led by group_fd (-1: as a leader). Returns an fd or -errno.
using Opener = std::function<int(const EventSpec& spec, int group_fd)>;

// The default opener: perf_event_open(2) for the calling thread, started enabled, close-on-exec.
[[nodiscard]] int open_event(const EventSpec& spec, int group_fd);

enum class Scope {
  everything,  // user and kernel work of the thread
  user_only,   // perf_event_paranoid (or missing capability) forbade kernel counting
};

struct Options {
  std::vector<Event> events{kAllEvents.begin(), kAllEvents.end()};  // repeated events are opened once
  Opener opener = open_event;  // tests inject refusals here
};

struct EventStatus {
  Event event = Event::task_clock;
  bool open = false;
  Scope scope = Scope::everything;
  std::string reason;  // why it is n/a ("not supported by this machine (ENOENT: No such file ...)")
};

struct Value {
  Event event = Event::task_clock;
  std::optional<double> per_op;  // n/a when the event is not open or no interval was counted
  double running_fraction = 1.0;  // < 1 when multiplexed
  uint64_t uncounted_intervals = 0;
  std::string reason;             // set when per_op is n/a
};

struct Summary {
  std::vector<Value> values;  // in Options::events order
  std::optional<double> ipc;  // instructions / cycles when both exist
  uint64_t read_errors = 0;
};

class PerfCounters {
 public:
  [[nodiscard]] static PerfCounters open(Options options = {});

  PerfCounters(PerfCounters&& other) noexcept;
  PerfCounters& operator=(PerfCounters&& other) noexcept;
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;
  ~PerfCounters();

  // Around one measured iteration of `ops` operations: begin(); ...; end(ops). No allocation.
  void begin() noexcept;
  void end(uint64_t ops) noexcept;
  // Forgets the accumulated totals (between cases); the events stay open.
  void reset() noexcept;

  [[nodiscard]] Summary summary() const;
  [[nodiscard]] std::span<const EventStatus> status() const noexcept { return status_; }
  [[nodiscard]] bool any_open() const noexcept;
  // The perf_event_paranoid level read at open() (-1000 when unreadable), for the header.
  [[nodiscard]] int paranoid() const noexcept { return paranoid_; }

 private:
  PerfCounters() = default;

  // A group's read(2) layout with PERF_FORMAT_GROUP: nr, time_enabled, time_running, values[nr].
  static constexpr std::size_t kMaxMembers = 4;  // the events of one kind; open() drops repeats
  struct GroupRead {
    uint64_t nr = 0;
    uint64_t time_enabled = 0;
    uint64_t time_running = 0;
    std::array<uint64_t, kMaxMembers> values{};
  };
  struct Group {
    int leader_fd = -1;
    std::vector<int> fds;           // leader first; all owned
    std::vector<std::size_t> slot;  // index into status_/acc_ per member, in read order
    GroupRead before{};
    bool before_ok = false;
  };
  static bool read_group(const Group& group, GroupRead& out) noexcept;
  void close_all() noexcept;

  std::vector<Group> groups_;
  std::vector<EventStatus> status_;
  std::vector<Accumulator> acc_;
  uint64_t read_errors_ = 0;
  int paranoid_ = -1000;
};

// ---- For the runner and the reporters ----------------------------------------------------------------

// The per-op values keyed by event name, plus "ipc" (instructions per cycle) when both exist: what a
// CaseResult's `counters` holds. An event that is n/a maps to null, never to 0.
[[nodiscard]] Counters counter_values(const Summary& summary);

// One line per event that is n/a or restricted, for the report header: "cycles: n/a: not supported by
// this machine (ENOENT: No such file or directory)", "task-clock: user space only
// (perf_event_paranoid=2)". Empty when every event counts everything.
[[nodiscard]] std::vector<std::string> status_lines(const PerfCounters& counters);

// "n/a" reason for an errno returned by perf_event_open, e.g. "not supported by this machine (ENOENT:
// No such file or directory)"; `paranoid` is mentioned for EACCES/EPERM.
[[nodiscard]] std::string refusal_reason(int code, int paranoid);

}  // namespace ringlab::bench::perf
