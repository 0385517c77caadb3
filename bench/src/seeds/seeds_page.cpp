// docs/seeds.md (seeds.hpp's render_seeds_page): the write-ups' figures beside ringlab's, from the reports of
// one seeds run. Every figure of ringlab on the page is computed here from a report; the write-ups' figures
// are the seed tables' published ones.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/core/table.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "ringlab/bench/seeds/seeds.hpp"

namespace ringlab::bench::seeds {
namespace {

// Two published ratios closer than this are a tie in the write-up: BenchmarkDotNet's RatioSD of the seeds'
// rows is 0.01-0.04, so a difference of 0.02 is inside one row's spread.
constexpr double kPublishedTie = 0.02;

// The page's fixed text: what differs between ringlab and every write-up.
constexpr std::string_view kEverywhere = R"(## What differs everywhere

- **The seeds' conditions are the default here.** Every case below runs against ringlab's server in its
  seed mode (`--server-mode seed`): each answer serialized anew and sent chunked, as the write-ups'
  ASP.NET Core servers did, so no client learns the body's length before it has read it all. Rows whose
  .NET method built a new client per request run with `--client fresh` (the whole client, ring or event
  loop and buffers included, built and torn down inside every op); rows that only reconnect say
  `--connection fresh`.
- **No garbage collector.** .NET pays for the bytes it allocates later, in the GC; under glibc ringlab
  pays at once, mostly in page faults once a buffer passes the mmap threshold. An Alloc Ratio here is
  bytes requested from the allocator per op against the baseline row's, counted on the client's thread
  (a peer's own threads, the C++ REST SDK's pool, are not counted: its rows are marked).
- **Loopback on one machine**, client and server pinned to different CPUs. A kept-alive request over
  loopback is mostly the wake-up of the other CPU, where the write-ups crossed a real network stack.
- **Ratios are paired by round**: every case of a seed runs in the same interleaved rounds, and a row's
  Ratio is the median of its per-round ratios against the seed's first row, with the 95 % interval of
  that median. The write-ups' Ratio is BenchmarkDotNet's mean of ratios.
- **Rows marked "beyond"** do more than the seed's method did (models reused across requests, a parse in
  place): they are shown, and left out of the comparisons of order.
)";

struct Figure {
  const CaseResult* result = nullptr;  // null: the case is not in the report (or not measured)
  std::optional<double> ratio, low, high, alloc_ratio;
};

bool matches(const CaseResult& c, const SeedRow& row, std::size_t size) {
  if (c.strategy != row.strategy || c.size != size) return false;
  const auto conditions = parse_row_flags(row.flags);
  if (!conditions) return false;
  return c.connection == strategies::connection_name(conditions->connection) &&
         c.client == strategies::client_name(conditions->fresh_client ? strategies::Client::fresh
                                                                      : strategies::Client::pooled);
}

const CaseResult* find_case(const Report& report, const SeedRow& row, std::size_t size) {
  for (const CaseResult& c : report.cases) {
    if (matches(c, row, size)) return &c;
  }
  return nullptr;
}

Figure figure_of(const Report& report, const SeedRow& row, const SeedRow& baseline, std::size_t size) {
  Figure f;
  f.result = find_case(report, row, size);
  const CaseResult* base = find_case(report, baseline, size);
  if (f.result == nullptr || f.result->status != CaseStatus::ok || base == nullptr || base->status != CaseStatus::ok)
    return f;
  if (f.result == base) {
    f.ratio = f.low = f.high = 1.0;
  } else {
    const RatioStats r = ratio_paired(f.result->samples_ns, base->samples_ns);
    if (std::isfinite(r.median)) f.ratio = r.median;
    if (std::isfinite(r.median_low) && std::isfinite(r.median_high)) {
      f.low = r.median_low;
      f.high = r.median_high;
    }
  }
  const auto& bytes = f.result->memory.bytes_per_op;
  const auto& base_bytes = base->memory.bytes_per_op;
  if (bytes && base_bytes) {
    if (*base_bytes > 0) f.alloc_ratio = *bytes / *base_bytes;
    else if (*bytes == 0) f.alloc_ratio = 1.0;
  }
  return f;
}

// "4.48 KB" (1 KB = 1024 B, as BenchmarkDotNet's Allocated column); "0 B".
std::string format_bytes(double bytes) {
  if (bytes < 1024) return format_number(bytes, 0) + " B";
  return format_number(bytes / 1024, 2) + " KB";
}

// "34.8 μs": the median in the unit that keeps it below 1000 (as the write-ups print theirs).
std::string format_duration_ns(double ns) {
  if (ns < 1e3) return format_number(ns, 0) + " ns";
  if (ns < 1e6) return format_number(ns / 1e3, 1) + " μs";
  if (ns < 1e9) return format_number(ns / 1e6, 2) + " ms";
  return format_number(ns / 1e9, 3) + " s";
}

std::string published(double value) { return std::isnan(value) ? std::string("-") : format_number(value, 2); }

// The allocations of a peer that allocates on threads of its own are the client thread's only.
bool client_thread_only(std::string_view strategy) { return strategy.starts_with("cpprest"); }

std::string strategy_cell(const SeedRow& row) {
  std::string cell = fmt::format("`{}`", row.strategy);
  if (!row.flags.empty()) cell += fmt::format(" `{}`", row.flags);
  return cell;
}

std::string mapping_table(const Seed& seed) {
  std::string out = "| seed method | ringlab strategy and flags | same | different |\n|---|---|---|---|\n";
  for (const SeedRow& row : seed.rows) {
    out += fmt::format("| {}{} | {} | {} | {} |\n", row.method, row.beyond_seed ? " (beyond)" : "", strategy_cell(row),
                       row.same, row.differs);
  }
  return out;
}

std::string figures_table(const Seed& seed, const Report& report) {
  std::string out = fmt::format(
      "| seed method | {} | seed Ratio | ringlab Ratio | ringlab 95 % | seed Alloc Ratio | ringlab Alloc Ratio | "
      "ringlab Allocated | Page faults/op | Median |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
      seed.size_name);
  const std::vector<std::size_t> sizes = sizes_of(seed);
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    for (const SeedRow& row : seed.rows) {
      const Figure f = figure_of(report, row, seed.rows.front(), sizes[s]);
      std::string ratio = "-", interval = "-", alloc = "-", allocated = "-", faults = "-", median = "-";
      if (f.result != nullptr && f.result->status != CaseStatus::ok) {
        ratio = std::string(status_name(f.result->status));
      }
      if (f.ratio) ratio = format_number(*f.ratio, 2);
      if (f.low && f.high && &row != &seed.rows.front()) {
        interval = format_number(*f.low, 2) + "-" + format_number(*f.high, 2);
      }
      const char* mark = client_thread_only(row.strategy) ? " (client thread only)" : "";
      if (f.alloc_ratio) alloc = format_number(*f.alloc_ratio, 2) + mark;
      if (f.result != nullptr && f.result->status == CaseStatus::ok) {
        if (f.result->memory.bytes_per_op) allocated = format_bytes(*f.result->memory.bytes_per_op) + mark;
        faults = format_number(f.result->memory.minor_faults_per_op, 2);
        median = format_duration_ns(f.result->stats.median);
      }
      out += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.method,
                         row.beyond_seed ? " (beyond)" : "", sizes[s], published(row.published_ratio[s]), ratio,
                         interval, published(row.published_alloc_ratio[s]), alloc, allocated, faults, median);
    }
  }
  return out;
}

// Rows read against another row than the first (SeedRow::compared_with): the write-up's figure is the
// quotient of the two published ratios, ringlab's the paired ratio of the two cases of the same run.
std::string against_table(const Seed& seed, const Report& report) {
  std::string out;
  const std::vector<std::size_t> sizes = sizes_of(seed);
  for (const SeedRow& row : seed.rows) {
    if (row.compared_with.empty()) continue;
    const auto other = std::find_if(seed.rows.begin(), seed.rows.end(),
                                    [&](const SeedRow& r) { return r.method == row.compared_with; });
    if (other == seed.rows.end()) continue;
    if (out.empty()) {
      out = fmt::format("\n### Read against another row\n\nThe write-up's figure is the quotient of its two published "
                        "ratios; ringlab's is paired by round in the same run.\n\n| seed method | against | {} | seed | "
                        "ringlab | ringlab 95 % |\n|---|---|--:|--:|--:|--:|\n",
                        seed.size_name);
    }
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const double published_quotient = row.published_ratio[s] / other->published_ratio[s];
      const Figure f = figure_of(report, row, *other, sizes[s]);
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", row.method, other->method, sizes[s],
                         published(published_quotient), f.ratio ? format_number(*f.ratio, 2) : std::string("-"),
                         f.low && f.high ? format_number(*f.low, 2) + "-" + format_number(*f.high, 2) : std::string("-"));
    }
  }
  return out;
}

// Whether ringlab orders the methods as the write-up did, size by size: every pair of rows (not beyond the
// seed, both with a published ratio) that the write-up separates by more than kPublishedTie, judged by
// ringlab's intervals.
std::string verdicts(const Seed& seed, const Report& report) {
  std::string out;
  const std::vector<std::size_t> sizes = sizes_of(seed);
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    struct Point {
      const SeedRow* row;
      double seed_ratio;
      Figure f;
    };
    std::vector<Point> points;
    for (const SeedRow& row : seed.rows) {
      if (row.beyond_seed || std::isnan(row.published_ratio[s])) continue;
      Figure f = figure_of(report, row, seed.rows.front(), sizes[s]);
      if (!f.ratio) continue;
      points.push_back({&row, row.published_ratio[s], f});
    }
    if (points.size() < 2) {
      out += fmt::format("- {} {}: too few rows with both figures to compare.\n", sizes[s], seed.size_name);
      continue;
    }
    int same = 0, reversed = 0, noise = 0, seed_ties = 0;
    std::vector<std::string> reversals;
    for (std::size_t i = 0; i < points.size(); ++i) {
      for (std::size_t j = i + 1; j < points.size(); ++j) {
        const Point& a = points[i];
        const Point& b = points[j];
        if (std::abs(a.seed_ratio - b.seed_ratio) <= kPublishedTie) {
          ++seed_ties;
          continue;
        }
        const double a_low = a.f.low.value_or(*a.f.ratio), a_high = a.f.high.value_or(*a.f.ratio);
        const double b_low = b.f.low.value_or(*b.f.ratio), b_high = b.f.high.value_or(*b.f.ratio);
        if (a_high >= b_low && b_high >= a_low) {
          ++noise;
        } else if ((a.seed_ratio < b.seed_ratio) == (*a.f.ratio < *b.f.ratio)) {
          ++same;
        } else {
          ++reversed;
          const Point& seed_faster = a.seed_ratio < b.seed_ratio ? a : b;
          const Point& seed_slower = a.seed_ratio < b.seed_ratio ? b : a;
          reversals.push_back(fmt::format("{} ({} against {} in the write-up, {} against {} here)",
                                          fmt::format("{} before {}", seed_faster.row->method, seed_slower.row->method),
                                          published(seed_faster.seed_ratio), published(seed_slower.seed_ratio),
                                          format_number(*seed_faster.f.ratio, 2), format_number(*seed_slower.f.ratio, 2)));
        }
      }
    }
    const auto fastest_published = std::min_element(points.begin(), points.end(), [](const Point& x, const Point& y) {
      return x.seed_ratio < y.seed_ratio;
    });
    const auto fastest_here = std::min_element(points.begin(), points.end(), [](const Point& x, const Point& y) {
      return *x.f.ratio < *y.f.ratio;
    });
    const int separated = same + reversed + noise;
    std::string verdict = separated == 0                ? "nothing to order: the write-up's rows are within 0.02 of each other"
                          : same == 0 && reversed == 0 ? "no order resolved: every pair is within ringlab's intervals"
                          : reversed == 0              ? "the same order"
                                                       : "a different order";
    out += fmt::format(
        "- {} {}: {}. The write-up's fastest is {} ({}), ringlab's {} ({}{}). Of the {} pair(s) the write-up "
        "separates by more than {}, ringlab orders {} the same way, {} the other way and {} within its 95 % "
        "intervals; {} pair(s) are within {} in the write-up.",
        sizes[s], seed.size_name, verdict, fastest_published->row->method, published(fastest_published->seed_ratio),
        fastest_here->row->method, format_number(*fastest_here->f.ratio, 2),
        fastest_here->f.low && fastest_here->f.high && fastest_here->row != &seed.rows.front()
            ? fmt::format(", 95 % {}-{}", format_number(*fastest_here->f.low, 2), format_number(*fastest_here->f.high, 2))
            : std::string(),
        separated, kPublishedTie, same, reversed, noise, seed_ties, kPublishedTie);
    if (!reversals.empty()) {
      // The first few name the pattern; the figures table has the rest.
      constexpr std::size_t kNamed = 4;
      out += " Reversed: ";
      for (std::size_t k = 0; k < reversals.size() && k < kNamed; ++k) out += (k == 0 ? "" : "; ") + reversals[k];
      if (reversals.size() > kNamed) out += fmt::format("; and {} more", reversals.size() - kNamed);
      out += ".";
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_seeds_page(std::span<const SeedRun> runs, std::string_view page_command) {
  std::string out = "# The seeds: five .NET write-ups beside ringlab\n\n";
  out += "ringlab grew out of five .NET write-ups, each a BenchmarkDotNet table of ways to use an HTTP client. This page "
         "maps every method each one measured onto a ringlab strategy, says what is the same and what differs, and "
         "puts the write-up's published figures beside ringlab's from one run per write-up. It is generated from that "
         "run's reports; no figure on it is written by hand.\n\n";
  const auto first_run = std::find_if(runs.begin(), runs.end(), [](const SeedRun& r) { return r.report != nullptr; });
  if (first_run != runs.end()) {
    const Environment& e = first_run->report->environment;
    out += "| | |\n|---|---|\n";
    out += fmt::format("| Command | `{}` |\n", run_command_text(first_run->report->config));
    out += fmt::format("| Commit | `{}`{} |\n", e.git_commit.empty() ? "unknown" : e.git_commit,
                       e.git_dirty.value_or(false) ? " with uncommitted changes" : "");
    out += fmt::format("| Machine | {}, {} cores, kernel {} |\n", e.cpu, e.cores, e.kernel);
    out += fmt::format("| Compiler | {}, {} build |\n", e.compiler, e.build_type);
    out += fmt::format("| Allocator | {} |\n", allocator_short_name(e.allocator));
    std::string placement = e.client_cpu >= 0 ? fmt::format("client on CPU {}", e.client_cpu) : "client not pinned";
    if (e.server_cpu >= 0) placement += fmt::format(", server on CPU {}", e.server_cpu);
    out += fmt::format("| Placement | {}; loopback |\n", placement);
    const Config& c = first_run->report->config;
    out += fmt::format("| Runs | one interleaved run per write-up, iterations of at least {} ms, {}..{} per case |\n",
                       format_number(c.iteration_time_ms, 0), c.iterations, c.max_iterations);
    out += fmt::format("| Started | {} |\n", e.timestamp);
    out += fmt::format("| Page made by | `{}` |\n\n", page_command);
  }
  out += kEverywhere;
  for (const SeedRun& run : runs) {
    if (run.seed == nullptr) continue;
    const Seed& seed = *run.seed;
    out += fmt::format("\n## {}: `tools/bench seeds --filter {}`\n\n{}\n\n", seed.title, seed.name, seed.about);
    if (!seed.link.empty()) {
      out += fmt::format("Link: `--link {}`{}.\n\n", seed.link,
                         seed.link_leg.empty() ? std::string() : fmt::format(" on the {} leg", seed.link_leg));
    }
    out += "### Mapping\n\n" + mapping_table(seed);
    if (run.report == nullptr) {
      out += fmt::format("\nNot run here: {}.\n", run.not_run.empty() ? "no report" : run.not_run);
      continue;
    }
    out += "\n### Figures\n\nThe seed's Ratio and Alloc Ratio are the write-up's, against its first row; ringlab's "
           "against the same row's strategy in the same run.\n\n";
    out += figures_table(seed, *run.report);
    out += against_table(seed, *run.report);
    out += "\n### Does ringlab order the methods as the write-up did?\n\n" + verdicts(seed, *run.report);
    if (run.report->partial) out += "\nThis seed's run was interrupted: its figures cover the rounds completed.\n";
  }
  return out;
}

}  // namespace ringlab::bench::seeds
