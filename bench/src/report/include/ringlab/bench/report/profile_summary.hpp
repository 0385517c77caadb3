#pragma once
// A profile summary: where the CPU of each profiled case went, as tools/profile writes it next to the
// run's report (RUN/profile.json), read here for the results page's "Where the CPU goes" section.
//
// tools/profile records the run with perf, gives each sample to the case whose timed segment holds it
// (bench writes the segments' times to perf-spans.tsv) and writes the shares it counted; nothing here is computed
// again, the page shows the file's figures. The file (docs/measuring.md, "A profile on a results page"):
//   {"format": "ringlab profile summary 1", "event": "cpu-clock", "samples_outside_spans": 0,
//    "cases": [{"case": "epoll weather 10 x64", "spans": 30, "samples": 1234, "kernel": 0.61, "user": 0.39,
//               "dsos": [{"dso": "kernel", "share": 0.61}, ...],
//               "symbols": [{"symbol": "tcp_sendmsg", "dso": "kernel", "share": 0.05}, ...],
//               "areas": [{"area": "network", "share": 0.52}, ...],
//               "items": [{"area": "io_uring", "item": "io_submit_sqes", "share": 0.016}, ...]}]}
// Shares are fractions of the case's samples, 0..1. A DSO is a file's name without its folder
// ("kernel" for the kernel), so no machine path reaches the page. "areas" (absent in the files of
// tools/profile before it decided them; then the page shows no areas) gives every sample to one of
// kProfileAreas by its call chain: the network stack wherever a frame is, else io_uring's or
// epoll's machinery, else system call entry and exit, else the rest of the kernel, or user space
// (tools/profile's AREAS says the rules). "items" (absent in older files) splits the samples of the
// interfaces' own areas (io_uring, epoll, syscall) by the innermost frame of that area in each call
// chain, the top ones of each area, most samples first: what an interface's machinery is made of.
//
// Errors: values naming the file and what is wrong ("RUN/profile.json: cases[1].samples: not a
// number"); a folder without profile.json is no error (read_profile_summary gives nullopt). Plain
// values; no threads.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

struct ProfileShare {
  std::string name;  // a DSO, or a symbol
  std::string dso;   // a symbol's DSO; empty for a DSO's own row
  double share = 0;  // of the case's samples, 0..1
};

struct CaseProfile {
  std::string case_name;  // bench's case name: "epoll weather 10 x64"
  std::size_t spans = 0;  // its timed segments (one or two per measured iteration)
  uint64_t samples = 0;
  double kernel = 0;  // share of the samples in the kernel
  double user = 0;    // and in user space
  std::vector<ProfileShare> dsos;     // most samples first
  std::vector<ProfileShare> symbols;  // the top symbols, most samples first
  std::vector<ProfileShare> areas;    // kProfileAreas' keys in that order; empty when the file has none
  std::vector<ProfileShare> items;    // name: the item's frame, dso: its area (kInterfaceAreas); may be empty
};

// The areas of a profile, in the file's order: the key profile.json writes and the page's name of it.
struct ProfileArea {
  std::string_view key;
  std::string_view name;
};
inline constexpr ProfileArea kProfileAreas[] = {
    {"network", "Network stack (TCP/IP, sockets, loopback, wake-ups)"},
    {"io_uring", "io_uring (submission, completion, waits)"},
    {"epoll", "epoll (waits, readiness checks)"},
    {"syscall", "System call entry and exit"},
    {"kernel", "Rest of the kernel (faults, timers, scheduler)"},
    {"user", "User space"},
};

// The areas whose samples a profile also counts item by item: the interfaces' own machinery.
inline constexpr std::string_view kInterfaceAreas[] = {"io_uring", "epoll", "syscall"};

struct ProfileSummary {
  std::string event;  // perf's sampling event: "cpu-clock" or "cycles"
  // Samples taken while perf was on but in no timed segment: bench's verified ops and bookkeeping
  // between segments (with interleaved rounds perf stays on from the first case's first measured
  // iteration to the last case's last).
  uint64_t samples_outside_spans = 0;
  std::vector<CaseProfile> cases;
};

inline constexpr std::string_view kProfileSummaryFile = "profile.json";
inline constexpr std::string_view kProfileSummaryFormat = "ringlab profile summary 1";

[[nodiscard]] Result<ProfileSummary> parse_profile_summary(std::string_view text);
// FOLDER/profile.json, or nullopt when the folder has none.
[[nodiscard]] Result<std::optional<ProfileSummary>> read_profile_summary(const std::filesystem::path& folder);

// The results page's section: per case the kernel and user shares, the DSOs and the top symbols, with
// the event, the sample count and what the profile covers (the client's measuring thread only).
// With `report` (the run's; nullptr: shares only) and areas in the file, a table of the areas per
// request (an area's share x the case's CPU/req, the report case of the same name) and, for every two
// profiled cases of the same payload, size, in-flight and threads, what the areas say of their
// difference: how much of each one's CPU/req the network stack is, and the ratio of CPU/req that
// would be left if one did nothing but its network work; with items in the file, a table of each
// case's interface items per request, beside each other.
[[nodiscard]] std::string render_profile_section(const ProfileSummary& profile, const Report* report = nullptr);

}  // namespace ringlab::bench
