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

// Two published Ratios at most this many hundredths apart are a tie in the write-up, whatever their spreads:
// each is printed rounded to two places (+-0.005), and no row but a baseline publishes a RatioSD (or
// ScaledSD) below 0.01, so two hundredths are within the rounding of both figures plus the smallest spread
// a measured row has. Most rows' spreads are 0.01-0.04, but not all (jos's GetAllProjectsQuery at 100 items
// 0.10-0.31, nikouu's GetStringAsync 0.12 at 1,000, net-http-perf's ScaledSD 0.06-0.31): each pair is also
// held to its own published spreads (published_order).
constexpr long kPublishedTieHundredths = 2;

// A published figure in the whole hundredths it is printed in: 0.98 is 98, exactly, where the double
// 1.00 - 0.98 is 0.020000000000000018 and would pass for more than 0.02.
long hundredths(double value) { return std::lround(value * 100); }

// The page's fixed text: what differs between ringlab and every write-up.
constexpr std::string_view kEverywhere = R"(## What differs everywhere

- **The seeds' conditions are the default here.** Every case below runs against ringlab's server in its
  seed mode (`--server-mode seed`): each answer serialized as it is sent, in chunks of a 16 KiB output
  buffer, as the write-ups' ASP.NET Core servers did (System.Text.Json's default buffer), so no client
  learns the body's length before it has read it all and the first records arrive before the last are
  serialized. Rows whose .NET method built a new client per request run with `--client fresh` (the whole
  client, ring or event loop, buffers and connection, built and torn down inside every op; the JSON
  parser kept per process, as .NET keeps its serializer; the report's phase table says what the client's
  set-up, connect and teardown cost); rows that only reconnect say `--connection fresh`.
- **No garbage collector.** .NET pays for the bytes it allocates later, in the GC; under glibc ringlab
  pays at once, mostly in page faults once a buffer passes the mmap threshold. An Alloc Ratio here is
  bytes requested from the allocator per op against the baseline row's, counted on the client's thread
  (a peer's own threads, the C++ REST SDK's pool, are not counted: its rows are marked).
- **Loopback on one machine**, client and server pinned to different CPUs. The write-ups ran client and
  server on one machine too: nikouu's script starts the API and the benchmark side by side, jos's
  instructions run his dummy API and then the benchmark, dotnet-client-libraries-benchmark's API ran in
  local IIS, net-http-perf's run script starts its reflector on 127.0.0.1, and the typed-vs-manual
  article's benchmark calls its endpoint on localhost:9256 (where that endpoint's upstream ran, the article
  does not say). A kept-alive request over loopback is mostly the wake-up of the other CPU.
- **Ratios are paired by round**: every case of a seed runs in the same interleaved rounds, and a row's
  Ratio is the median of its per-round ratios against the seed's first row, with the 95 % interval of
  that median. The write-ups' Ratio is BenchmarkDotNet's mean of ratios.
- **Rows marked "beyond"** do more than the seed's method did (models reused across requests, a parse in
  place): they are shown, and left out of the comparisons of order.
- **How orders are counted.** The write-up separates two of its rows only where their Ratios, in the
  hundredths it prints, differ by more than 2 (1.00 against 0.98 is a tie) and by more than the sum of the
  two rows' published spreads (its RatioSD or ScaledSD; where it prints none, its StdDev over the baseline's
  Mean). Methods that ringlab measures with one case (the same strategy and flags) have one figure here:
  each pair of ringlab cases counts once, and the write-up separates it only where every pair of methods
  across the two cases is separated, the same way.
)";

struct Figure {
  const CaseResult* result = nullptr;  // null: the case is not in the report (or not measured)
  std::optional<double> ratio, low, high, alloc_ratio;
};

bool matches(const CaseResult& c, const SeedRow& row, std::size_t size) {
  if (c.strategy != row.strategy || c.size != size) return false;
  return c.connection == strategies::connection_name(row.connection) && c.client == strategies::client_name(row.client);
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
  if (const std::string flags = row_flags(row); !flags.empty()) cell += fmt::format(" `{}`", flags);
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
      "| seed method | {} | seed Ratio | seed spread | ringlab Ratio | ringlab 95 % | seed Alloc Ratio | "
      "ringlab Alloc Ratio | ringlab Allocated | Page faults/op | Median |\n"
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
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
      out += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.method,
                         row.beyond_seed ? " (beyond)" : "", sizes[s], published(row.published_ratio[s]),
                         published(row.published_ratio_sd[s]), ratio, interval, published(row.published_alloc_ratio[s]),
                         alloc, allocated, faults, median);
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

// One ringlab case at one size and the seed's methods it measures there: rows of the same strategy and
// flags share a case, so ringlab has one figure for all of them and orders the case, not each method.
struct CaseGroup {
  Figure figure;                     // ringlab's, against the seed's first row
  std::vector<const SeedRow*> rows;  // not beyond the seed, each with a published Ratio at this size
};

// The cases of one size that have a ringlab Ratio, in the order their first method is listed.
std::vector<CaseGroup> case_groups(const Seed& seed, const Report& report, std::size_t s, std::size_t size) {
  std::vector<CaseGroup> groups;
  for (const SeedRow& row : seed.rows) {
    if (row.beyond_seed || std::isnan(row.published_ratio[s])) continue;
    Figure f = figure_of(report, row, seed.rows.front(), size);
    if (!f.ratio) continue;
    const auto same_case = std::find_if(groups.begin(), groups.end(),
                                        [&](const CaseGroup& g) { return g.figure.result == f.result; });
    if (same_case != groups.end()) {
      same_case->rows.push_back(&row);
    } else {
      groups.push_back({f, {&row}});
    }
  }
  return groups;
}

// The write-up's order of two cases: every pair of their methods must be separated, and the same way; one
// pair it cannot separate, or two pairs that disagree, leave the two cases a tie in the write-up.
PublishedOrder published_case_order(const CaseGroup& a, const CaseGroup& b, std::size_t s) {
  std::optional<PublishedOrder> order;
  for (const SeedRow* x : a.rows) {
    for (const SeedRow* y : b.rows) {
      const PublishedOrder o = published_order(x->published_ratio[s], x->published_ratio_sd[s],
                                               y->published_ratio[s], y->published_ratio_sd[s]);
      if (o == PublishedOrder::tie || (order && *order != o)) return PublishedOrder::tie;
      order = o;
    }
  }
  return order.value_or(PublishedOrder::tie);
}

// "GetStreamAsync", or "GetStreamAsync and 3 more" for a case that measures four methods.
std::string group_label(const CaseGroup& g) {
  const std::string first(g.rows.front()->method);
  return g.rows.size() == 1 ? first : fmt::format("{} and {} more", first, g.rows.size() - 1);
}

// The write-up's Ratios of a case's methods: "0.70", or "0.70-0.71".
std::string published_range(const CaseGroup& g, std::size_t s) {
  const auto [low, high] = std::minmax_element(g.rows.begin(), g.rows.end(), [&](const SeedRow* x, const SeedRow* y) {
    return x->published_ratio[s] < y->published_ratio[s];
  });
  const std::string lo = published((*low)->published_ratio[s]), hi = published((*high)->published_ratio[s]);
  return lo == hi ? lo : lo + "-" + hi;
}

// The pairs of cases of one size, counted once each: those the write-up cannot separate, and of those it
// separates, how ringlab's 95 % intervals order them.
struct PairCount {
  int same = 0, reversed = 0, noise = 0, seed_ties = 0;
  std::size_t shared = 0;  // pairs of methods measured by one case: ringlab cannot order them
  std::vector<std::string> reversals;
};

PairCount count_pairs(const std::vector<CaseGroup>& groups, std::size_t s) {
  PairCount n;
  for (const CaseGroup& g : groups) n.shared += g.rows.size() * (g.rows.size() - 1) / 2;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = i + 1; j < groups.size(); ++j) {
      const PublishedOrder order = published_case_order(groups[i], groups[j], s);
      if (order == PublishedOrder::tie) {
        ++n.seed_ties;
        continue;
      }
      const CaseGroup& faster = order == PublishedOrder::first_faster ? groups[i] : groups[j];
      const CaseGroup& slower = order == PublishedOrder::first_faster ? groups[j] : groups[i];
      const Figure& f = faster.figure;
      const Figure& g = slower.figure;
      const bool overlap = f.high.value_or(*f.ratio) >= g.low.value_or(*g.ratio) &&
                           g.high.value_or(*g.ratio) >= f.low.value_or(*f.ratio);
      if (overlap) {
        ++n.noise;
      } else if (*f.ratio < *g.ratio) {
        ++n.same;
      } else {
        ++n.reversed;
        n.reversals.push_back(fmt::format("{} before {} ({} against {} in the write-up, {} against {} here)",
                                          group_label(faster), group_label(slower), published_range(faster, s),
                                          published_range(slower, s), format_number(*f.ratio, 2),
                                          format_number(*g.ratio, 2)));
      }
    }
  }
  return n;
}

// One size's sentence: the verdict, the fastest of each side, the counts and the first reversals.
std::string verdict_line(const Seed& seed, std::size_t size, std::size_t s, const std::vector<CaseGroup>& groups) {
  const PairCount n = count_pairs(groups, s);
  const SeedRow* fastest_published = nullptr;
  for (const CaseGroup& g : groups) {
    for (const SeedRow* row : g.rows) {
      if (fastest_published == nullptr || row->published_ratio[s] < fastest_published->published_ratio[s])
        fastest_published = row;
    }
  }
  const auto fastest_here = std::min_element(groups.begin(), groups.end(), [](const CaseGroup& x, const CaseGroup& y) {
    return *x.figure.ratio < *y.figure.ratio;
  });
  const Figure& fh = fastest_here->figure;
  const int separated = n.same + n.reversed + n.noise;
  std::string verdict = "a different order";
  if (separated == 0) {
    verdict = "nothing to order: the write-up separates no two of ringlab's cases";
  } else if (n.same == 0 && n.reversed == 0) {
    verdict = "no order resolved: every pair is within ringlab's intervals";
  } else if (n.reversed == 0) {
    verdict = "the same order";
  }
  std::string out = fmt::format(
      "- {} {}: {}. The write-up's fastest is {} ({}), ringlab's {} ({}{}). Of the {} pair(s) of ringlab cases the "
      "write-up separates, ringlab orders {} the same way, {} the other way and {} within its 95 % intervals; the "
      "write-up does not separate {} pair(s) of cases",
      size, seed.size_name, verdict, fastest_published->method, published(fastest_published->published_ratio[s]),
      group_label(*fastest_here), format_number(*fh.ratio, 2),
      fh.low && fh.high && fastest_here->rows.front() != &seed.rows.front()
          ? fmt::format(", 95 % {}-{}", format_number(*fh.low, 2), format_number(*fh.high, 2))
          : std::string(),
      separated, n.same, n.reversed, n.noise, n.seed_ties);
  if (n.shared > 0) out += fmt::format("; {} pair(s) of its methods share one ringlab case", n.shared);
  out += ".";
  if (!n.reversals.empty()) {
    // The first few name the pattern; the figures table has the rest.
    constexpr std::size_t kNamed = 4;
    out += " Reversed: ";
    for (std::size_t k = 0; k < n.reversals.size() && k < kNamed; ++k) out += (k == 0 ? "" : "; ") + n.reversals[k];
    if (n.reversals.size() > kNamed) out += fmt::format("; and {} more", n.reversals.size() - kNamed);
    out += ".";
  }
  return out + "\n";
}

// Whether ringlab orders the methods as the write-up did, size by size: every pair of ringlab cases (their
// methods not beyond the seed, each with a published ratio) that the write-up separates (published_order),
// judged by ringlab's intervals.
std::string verdicts(const Seed& seed, const Report& report) {
  std::string out;
  const std::vector<std::size_t> sizes = sizes_of(seed);
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const std::vector<CaseGroup> groups = case_groups(seed, report, s, sizes[s]);
    std::size_t methods = 0;
    for (const CaseGroup& g : groups) methods += g.rows.size();
    if (methods < 2) {
      out += fmt::format("- {} {}: too few rows with both figures to compare.\n", sizes[s], seed.size_name);
    } else if (groups.size() < 2) {
      out += fmt::format("- {} {}: every method with both figures is one ringlab case: nothing to order.\n", sizes[s],
                         seed.size_name);
    } else {
      out += verdict_line(seed, sizes[s], s, groups);
    }
  }
  return out;
}

}  // namespace

PublishedOrder published_order(double ratio_a, double spread_a, double ratio_b, double spread_b) {
  if (std::isnan(ratio_a) || std::isnan(ratio_b)) return PublishedOrder::tie;
  const long gap = hundredths(ratio_a) - hundredths(ratio_b);
  // A spread the write-up does not publish adds nothing: the tie of two hundredths still holds.
  const long spreads =
      (std::isnan(spread_a) ? 0 : hundredths(spread_a)) + (std::isnan(spread_b) ? 0 : hundredths(spread_b));
  if (std::abs(gap) <= std::max(kPublishedTieHundredths, spreads)) return PublishedOrder::tie;
  return gap < 0 ? PublishedOrder::first_faster : PublishedOrder::second_faster;
}

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
      out += fmt::format("Link: `--link {}` on the {} leg.\n\n", seed.link,
                         link_leg_name(seed.link_leg));
    }
    out += "### Mapping\n\n" + mapping_table(seed);
    if (run.report == nullptr) {
      out += fmt::format("\nNot run here: {}.\n", run.not_run.empty() ? "no report" : run.not_run);
      continue;
    }
    out += "\n### Figures\n\nThe seed's Ratio, its spread and Alloc Ratio are the write-up's, against its first row; "
           "ringlab's against the same row's strategy in the same run.\n\n";
    out += figures_table(seed, *run.report);
    out += against_table(seed, *run.report);
    out += "\n### Does ringlab order the methods as the write-up did?\n\n" + verdicts(seed, *run.report);
    if (run.report->partial) out += "\nThis seed's run was interrupted: its figures cover the rounds completed.\n";
  }
  return out;
}

}  // namespace ringlab::bench::seeds
