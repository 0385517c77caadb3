#include "ringlab/bench/core/findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "ringlab/bench/core/diagnostics.hpp"
#include "ringlab/bench/core/statistics.hpp"

namespace ringlab::bench {

namespace {

bool is_ok(const CaseResult& c) { return c.status == CaseStatus::ok; }

std::string percent(double fraction) { return fmt::format("{:.0f} %", fraction * 100); }

// "3 cases: a, b, c" or "12 cases" when naming them would bury the line.
constexpr std::size_t kNamedAtMost = 4;

std::string count_of(std::size_t n, std::size_t total) { return fmt::format("{} of {} cases", n, total); }

// A time with three significant digits in the unit the value reads best in.
std::string time_text(double ns) {
  const double values[] = {ns};
  const Unit unit = time_unit_for(values);
  const double scaled = ns / unit.scale;
  const int decimals = scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2;
  return fmt::format("{:.{}f} {}", scaled, decimals, unit.name);
}

std::string bytes_text(double bytes) {
  if (bytes == 0) return "0 B";
  const double values[] = {bytes};
  const Unit unit = size_unit_for(values);
  const double scaled = bytes / unit.scale;
  return fmt::format("{:.{}f} {}", scaled, unit.scale == 1 ? 0 : scaled >= 100 ? 0 : 1, unit.name);
}

std::string count_text(double v) {
  if (std::fabs(v - std::round(v)) < 0.05 || std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

// "0.75x string_copy's time (95 % interval 0.74-0.76)"
std::string ratio_text(const CaseResult& c, const CaseResult& baseline) {
  std::string text = fmt::format("{:.2f}x {}'s time", *c.stats.ratio, row_name(baseline));
  if (c.stats.ratio_low && c.stats.ratio_high) {
    text += fmt::format(" (95 % interval {:.2f}-{:.2f})", *c.stats.ratio_low, *c.stats.ratio_high);
  }
  return text;
}

bool within_noise(const CaseResult& c) {
  return c.stats.ratio_low && c.stats.ratio_high && *c.stats.ratio_low <= 1.0 && *c.stats.ratio_high >= 1.0;
}

// "10 records" (GET) or "size 10" for a suite whose size is something else (requests per op, one body).
std::string group_title(const CaseResult& c, bool several_payloads, bool several_allocators) {
  std::string title = c.method == "GET" ? fmt::format("{} records", c.size) : fmt::format("{} size {}", c.method, c.size);
  if (several_payloads) title = c.payload + " " + title;
  if (c.inflight > 1) title += fmt::format(", {} in flight", c.inflight);
  if (c.client_threads > 1) title += fmt::format(", {} client threads", c.client_threads);
  if (several_allocators) title += fmt::format(" ({})", c.allocator);
  return title;
}

struct Group {
  std::vector<const CaseResult*> cases;  // ok cases, in the report's order
  const CaseResult* baseline = nullptr;
};

std::vector<Group> groups_of(const Report& report) {
  std::vector<std::string> keys;
  std::vector<Group> groups;
  for (const CaseResult& c : report.cases) {
    if (!is_ok(c)) continue;
    const std::string key = case_key(c);
    auto at = std::find(keys.begin(), keys.end(), key);
    if (at == keys.end()) {
      keys.push_back(key);
      groups.emplace_back();
      at = keys.end() - 1;
    }
    Group& g = groups[static_cast<std::size_t>(at - keys.begin())];
    g.cases.push_back(&c);
    // The first baseline, as compute_ratios takes it: a run of two clients has one under each.
    if (c.baseline && g.baseline == nullptr) g.baseline = &c;
  }
  return groups;
}

const CaseResult* find_named(const Group& g, std::string_view name) {
  for (const CaseResult* c : g.cases) {
    if (c->strategy == name) return c;
  }
  return nullptr;
}

std::string allocation_line(const Group& g) {
  const CaseResult& base = *g.baseline;
  if (!base.memory.bytes_per_op || !base.memory.allocs_per_op) return {};
  const CaseResult* least = nullptr;
  std::vector<std::string> none;  // the contenders that allocate nothing at all
  for (const CaseResult* c : g.cases) {
    if (c->reference || c == &base || !c->memory.bytes_per_op || !c->memory.allocs_per_op) continue;
    if (*c->memory.bytes_per_op == 0) none.push_back(row_name(*c));
    if (least == nullptr || *c->memory.bytes_per_op < *least->memory.bytes_per_op) least = c;
  }
  if (least == nullptr) return {};
  if (!none.empty() && *base.memory.bytes_per_op > 0) {
    std::string names;
    for (std::size_t i = 0; i < none.size(); ++i) names += (i > 0 ? ", " : "") + none[i];
    return fmt::format("allocations: {} allocate{} nothing per op, against {}'s {} in {} allocs/op", names,
                       none.size() == 1 ? "s" : "", row_name(base), bytes_text(*base.memory.bytes_per_op),
                       count_text(*base.memory.allocs_per_op));
  }
  const double saved = *base.memory.bytes_per_op - *least->memory.bytes_per_op;
  if (!(saved > 0)) {
    return fmt::format("allocations: no strategy allocates less than {} ({} in {} allocs/op)", row_name(base),
                       bytes_text(*base.memory.bytes_per_op), count_text(*base.memory.allocs_per_op));
  }
  return fmt::format("allocations: {} saves the most, {} in {} allocs/op against {}'s {} in {}", row_name(*least),
                     bytes_text(*least->memory.bytes_per_op), count_text(*least->memory.allocs_per_op), row_name(base),
                     bytes_text(*base.memory.bytes_per_op), count_text(*base.memory.allocs_per_op));
}

// A run with requests in flight (--inflight): the client CPU per request of ringlab's best io_uring
// strategy (the least CPU/req among the group's own-stack rows) against the epoll peer's, with the
// system calls per request of both: the question the axis asks. Empty without an epoll case or CPU times.
std::string cpu_line(const Group& g) {
  const CaseResult* epoll = find_named(g, "epoll");
  const auto cpu_per_request = [](const CaseResult& c) {
    return (c.cpu.user_ns_per_op + c.cpu.system_ns_per_op) / requests_per_op(c);
  };
  if (epoll == nullptr || !(cpu_per_request(*epoll) > 0)) return {};
  const CaseResult* best = nullptr;
  for (const CaseResult* c : g.cases) {
    if (c == epoll || c->reference || c->peer || !(cpu_per_request(*c) > 0)) continue;
    if (best == nullptr || cpu_per_request(*c) < cpu_per_request(*best)) best = c;
  }
  if (best == nullptr) return {};
  const auto syscalls = [](const CaseResult& c) {
    if (!c.io.syscalls_per_op) return std::string("n/a");
    return fmt::format("{:.2f}", *c.io.syscalls_per_op / requests_per_op(c));
  };
  return fmt::format("client CPU per request: {} {} ({} syscalls/req) against epoll's {} ({} syscalls/req): {:.2f}x",
                     row_name(*best), time_text(cpu_per_request(*best)), syscalls(*best),
                     time_text(cpu_per_request(*epoll)), syscalls(*epoll),
                     cpu_per_request(*best) / cpu_per_request(*epoll));
}

// How far each row is from what its mechanism could do at best: its median against floor_transfer plus
// its own parse floor (CaseResult::parse_floor: json/'s reader's, rapidjson's or nlohmann's), both
// measured in the same rounds. Rows beyond kFloorsLimit are named with the time beyond the floors' sum,
// the part a profile of the row has to explain. One request at a time only: the floors run one op of
// one request, a round of N in flight is not comparable. Empty when no row could be compared.
constexpr double kFloorsLimit = 1.2;

std::string floors_line(const Group& g) {
  const CaseResult* transfer = find_named(g, "floor_transfer");
  if (transfer == nullptr || !(transfer->stats.median > 0)) return {};
  std::vector<std::string> far;
  std::size_t compared = 0;
  for (const CaseResult* c : g.cases) {
    if (c->reference || c->parse_floor.empty() || c->inflight > 1 || c->client_threads > 1) continue;
    const CaseResult* parse = find_named(g, c->parse_floor);
    if (parse == nullptr || !(parse->stats.median > 0) || !(c->stats.median > 0)) continue;
    ++compared;
    const double floors = transfer->stats.median + parse->stats.median;
    if (c->stats.median <= kFloorsLimit * floors) continue;
    far.push_back(fmt::format("{} {:.2f}x (+{} over {} of {})", row_name(*c), c->stats.median / floors,
                              time_text(c->stats.median - floors), time_text(parse->stats.median), c->parse_floor));
  }
  if (compared == 0) return {};
  if (far.empty()) {
    return fmt::format(
        "floors: each of the {} rows with a parse floor within {:.1f}x floor_transfer ({}) + its own parse floor",
        compared, kFloorsLimit, time_text(transfer->stats.median));
  }
  std::string line = fmt::format("floors: beyond {:.1f}x floor_transfer ({}) + their own parse floor: ", kFloorsLimit,
                                 time_text(transfer->stats.median));
  for (std::size_t i = 0; i < far.size(); ++i) line += (i > 0 ? ", " : "") + far[i];
  return line;
}

}  // namespace

std::vector<std::string> summarize_warnings(const Report& report) {
  std::vector<std::string> out;
  std::size_t ok_cases = 0;
  std::size_t missed = 0;
  std::size_t above_mean = 0;
  std::vector<std::string> too_few;
  double cv_low = INFINITY;
  double cv_high = 0;
  for (const CaseResult& c : report.cases) {
    if (!is_ok(c)) continue;
    ++ok_cases;
    const Diagnostics& d = c.diagnostics;
    if (d.error_above_mean) {
      ++above_mean;
    } else if (d.target_error_missed) {
      ++missed;
    }
    if ((d.error_above_mean || d.target_error_missed) && d.cv) {
      cv_low = std::min(cv_low, *d.cv);
      cv_high = std::max(cv_high, *d.cv);
    }
    if (d.too_few_iterations) too_few.push_back(case_label(c));
  }
  if (missed + above_mean > 0) {
    std::string line = fmt::format("Error above the {:.1f} % target in {}", report.config.target_error * 100,
                                   count_of(missed + above_mean, ok_cases));
    if (above_mean > 0) line += fmt::format(" ({} with Error > Mean)", above_mean);
    if (std::isfinite(cv_low)) {
      line += std::round(cv_low * 100) == std::round(cv_high * 100)
                  ? fmt::format(" (CV {})", percent(cv_low))
                  : fmt::format(" (CV {:.0f}-{:.0f} %)", cv_low * 100, cv_high * 100);
    }
    line += report.config.interleave
                ? ": this machine is noisy; ratios are paired by round and stay usable"
                : ": this machine is noisy, and without interleaving (--no-interleave) the ratios are not paired";
    out.push_back(std::move(line));
  }
  if (!too_few.empty()) {
    std::string line = fmt::format("fewer than {} iterations kept in {}", kMinKeptIterations,
                                   count_of(too_few.size(), ok_cases));
    if (too_few.size() <= kNamedAtMost) {
      line += ": ";
      for (std::size_t i = 0; i < too_few.size(); ++i) line += (i > 0 ? ", " : "") + too_few[i];
    }
    out.push_back(std::move(line));
  }
  // Named one by one, each a case to look at rather than a property of the machine; in one line per
  // kind, since on a noisy machine most cases can be bimodal.
  std::vector<std::string> bimodal;
  std::vector<std::string> unstable;
  for (const CaseResult& c : report.cases) {
    if (!is_ok(c)) continue;
    if (c.diagnostics.bimodal && c.diagnostics.m_value) {
      bimodal.push_back(fmt::format("{} ({:.2f})", case_label(c), *c.diagnostics.m_value));
    }
    if (c.baseline && c.diagnostics.baseline_unstable && c.diagnostics.cv) {
      unstable.push_back(fmt::format("{} (CV {})", case_label(c), percent(*c.diagnostics.cv)));
    }
  }
  const auto listed = [](const std::vector<std::string>& names) {
    std::string text;
    for (std::size_t i = 0; i < names.size(); ++i) text += (i > 0 ? ", " : "") + names[i];
    return text;
  };
  if (!bimodal.empty()) {
    out.push_back(fmt::format("the distribution seems bimodal (m-value > {}) in {}: {}", kBimodalMValue,
                              count_of(bimodal.size(), ok_cases), listed(bimodal)));
  }
  if (!unstable.empty()) {
    out.push_back(fmt::format("unstable baseline{} (CV > {}), every ratio against {} moves from run to run: {}",
                              unstable.size() == 1 ? "" : "s", percent(kUnstableBaselineCv),
                              unstable.size() == 1 ? "it" : "them", listed(unstable)));
  }
  return out;
}

std::vector<std::string> run_findings(const Report& report) {
  std::set<std::string> payloads;
  std::set<std::string> allocators;
  for (const CaseResult& c : report.cases) {
    payloads.insert(c.payload);
    allocators.insert(c.allocator);
  }
  const bool several_payloads = payloads.size() > 1;
  const bool any_inflight =
      std::any_of(report.cases.begin(), report.cases.end(),
                  [](const CaseResult& c) { return c.inflight > 1 || c.client_threads > 1; });
  const bool several_allocators = allocators.size() > 1;
  // The allocator a ratio against the copying baseline holds for, by the name the header gives it
  // ("glibc 2.36" rather than the job name "system"), without the library's path.
  const auto allocator_text = [&report, several_allocators](const CaseResult& c) {
    std::string name = c.allocator;
    if (!several_allocators && !report.environment.allocator.empty()) {
      name = allocator_short_name(report.environment.allocator);
    }
    return name.empty() ? std::string("an unnamed allocator") : name;
  };
  std::vector<std::string> out;
  std::vector<std::string> noise;
  for (const Group& g : groups_of(report)) {
    const CaseResult& first = *g.cases.front();
    const std::string title = group_title(first, several_payloads, several_allocators);
    if (g.baseline == nullptr) {
      out.push_back(fmt::format("{}: no baseline measured, so no ratios", title));
      continue;
    }
    const CaseResult* fastest = nullptr;
    for (const CaseResult* c : g.cases) {
      if (c->reference || !c->stats.ratio) continue;
      if (fastest == nullptr || *c->stats.ratio < *fastest->stats.ratio) fastest = c;
    }
    if (fastest == nullptr) continue;
    std::string line = fmt::format("{}: fastest {}", title, row_name(*fastest));
    if (fastest == g.baseline) {
      line += fmt::format(" (the baseline), median {}", time_text(fastest->stats.median));
    } else {
      line += fmt::format(" at {}", ratio_text(*fastest, *g.baseline));
      if (within_noise(*fastest)) line += ", within the noise";
    }
    const CaseResult* transfer = find_named(g, "floor_transfer");
    const CaseResult* parse = find_named(g, "floor_parse");
    if (transfer != nullptr && parse != nullptr && transfer->stats.median > 0 && parse->stats.median > 0) {
      const double sum = transfer->stats.median + parse->stats.median;
      const double larger = std::max(transfer->stats.median, parse->stats.median);
      line += fmt::format("; {:.2f}x the floors' sum ({} transfer + {} parse), {:.2f}x the larger floor",
                          fastest->stats.median / sum, time_text(transfer->stats.median),
                          time_text(parse->stats.median), fastest->stats.median / larger);
    }
    out.push_back(std::move(line));
    if (std::string allocation = allocation_line(g); !allocation.empty()) {
      std::string text = "  " + allocation;
      // A headline ratio against the copying baseline names its allocator and its page faults.
      text += fmt::format("; {} under {}: {} page faults/op", row_name(*g.baseline), allocator_text(*g.baseline),
                          count_text(g.baseline->memory.minor_faults_per_op));
      out.push_back(std::move(text));
    }
    if (any_inflight) {
      if (std::string cpu = cpu_line(g); !cpu.empty()) out.push_back("  " + cpu);
    }
    if (std::string floors = floors_line(g); !floors.empty()) out.push_back("  " + floors);
    for (const CaseResult* c : g.cases) {
      if (!c->reference && c != g.baseline && within_noise(*c)) {
        noise.push_back(fmt::format("{} at {} ({:.2f})", row_name(*c), title, *c->stats.ratio));
      }
    }
  }
  if (!noise.empty()) {
    std::string line = "within the noise (the Ratio's 95 % interval includes 1.0): ";
    for (std::size_t i = 0; i < noise.size(); ++i) line += (i > 0 ? ", " : "") + noise[i];
    out.push_back(std::move(line));
  } else if (!out.empty()) {
    bool any_interval = false;
    for (const CaseResult& c : report.cases) any_interval = any_interval || c.stats.ratio_low.has_value();
    out.push_back(any_interval ? "every Ratio's 95 % interval excludes 1.0: each difference from the baseline is "
                                 "larger than the noise"
                               : "no Ratio has an interval (fewer than 6 paired rounds, or --no-interleave): the "
                                 "noise cannot be told from the differences");
  }
  return out;
}

}  // namespace ringlab::bench
