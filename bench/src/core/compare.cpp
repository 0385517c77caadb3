#include "ringlab/bench/core/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <tuple>
#include <type_traits>

#include "member_list.hpp"
#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/core/table.hpp"

namespace ringlab::bench {

namespace {

// strategy, method, payload, size, allocator, in flight, client threads, client
using Key = std::tuple<std::string, std::string, std::string, std::size_t, std::string, std::size_t, std::size_t,
                       std::string>;

Key key_of(const CaseResult& c) {
  return {c.strategy, c.method, c.payload, c.size, c.allocator, std::max<std::size_t>(c.inflight, 1),
          std::max<std::size_t>(c.client_threads, 1), c.client.empty() ? std::string("pooled") : c.client};
}

// NEW's Ratio over OLD's: how far the case moved against its run's baseline.
std::optional<double> ratio_change(const CaseComparison& c) {
  if (!c.old_ratio || !c.new_ratio || !(*c.old_ratio > 0)) return std::nullopt;
  return *c.new_ratio / *c.old_ratio;
}

// "presized GET/weather/1000/system" and " x64", " t2" when the case ran so: how lines name a case.
std::string case_text(const CaseComparison& c) {
  std::string text = fmt::format("{} {}/{}/{}/{}", c.strategy, c.method, c.payload, c.size, c.allocator);
  if (c.inflight > 1) text += fmt::format(" x{}", c.inflight);
  if (c.client_threads > 1) text += fmt::format(" t{}", c.client_threads);
  return text;
}

// The samples the statistics kept, i.e. without the outliers the run removed.
std::vector<double> kept_samples(const CaseResult& c) { return without(c.samples_ns, c.outliers); }

std::optional<double> case_mean(const CaseResult& c, const std::vector<double>& kept) {
  if (c.status != CaseStatus::ok) return std::nullopt;
  if (!kept.empty()) return mean(kept);
  if (c.stats.n > 0) return c.stats.mean;
  return std::nullopt;
}

std::string text_of(const std::string& value) { return value.empty() ? "(empty)" : value; }
std::string text_of(bool value) { return value ? "true" : "false"; }
std::string text_of(int value) { return std::to_string(value); }
std::string text_of(std::size_t value) { return std::to_string(value); }
std::string text_of(double value) { return fmt::format("{:g}", value); }
template <class T>
std::string text_of(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) {
    if (!out.empty()) out += ',';
    if constexpr (std::is_same_v<T, std::string>) {
      out += v;
    } else {
      out += std::to_string(v);
    }
  }
  return out.empty() ? "(none)" : out;
}

// An allocator's description with every path cut to its file name: "glibc 2.36 (libc.so.6), called
// through bench". The folders say where a checkout was built, not what was measured: two builds of
// two commits in two folders of one machine ran the same allocator.
std::string without_folders(std::string_view description) {
  std::string out;
  std::size_t i = 0;
  while (i < description.size()) {
    const bool path_starts =
        description[i] == '/' && (i == 0 || description[i - 1] == ' ' || description[i - 1] == '(');
    if (!path_starts) {
      out += description[i++];
      continue;
    }
    std::size_t end = description.find_first_of(" ),;", i);
    if (end == std::string_view::npos) end = description.size();
    const std::string_view path = description.substr(i, end - i);
    out += path.substr(path.rfind('/') + 1);
    i = end;
  }
  return out;
}

}  // namespace

std::vector<Difference> comparability_differences(const Report& old_report, const Report& new_report) {
  std::vector<Difference> out;
  // `field` reads one setting of a report; its key is its report.json path ("config.sizes").
  const auto check = [&](std::string key, auto field) {
    const auto& a = field(old_report);
    const auto& b = field(new_report);
    if (a != b) out.push_back({std::move(key), text_of(a), text_of(b)});
  };
#define RINGLAB_COMPARABILITY_KEY(check, part, member) \
  check(#part "." #member, [](const Report& report) -> const auto& { return report.part.member; })
  RINGLAB_FOR_EACH_MEMBER(RINGLAB_COMPARABILITY_KEY, check, config, iteration_time_ms, sizes, connection, server_mode,
                          inflight, client, client_threads, ring_buffers, ring_buffer_bytes, allocators, interleave,
                          cpu, server_cpu);
  RINGLAB_FOR_EACH_MEMBER(RINGLAB_COMPARABILITY_KEY, check, environment, cpu, kernel);
  check("environment.allocator", [](const Report& report) { return without_folders(report.environment.allocator); });
  RINGLAB_FOR_EACH_MEMBER(RINGLAB_COMPARABILITY_KEY, check, environment, client_cpu, server_cpu);
#undef RINGLAB_COMPARABILITY_KEY
  return out;
}

std::optional<WelchTest> welch_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  const double ma = mean(a);
  const double mb = mean(b);
  const double sa = stddev(a);
  const double sb = stddev(b);
  const double va = sa * sa / static_cast<double>(a.size());
  const double vb = sb * sb / static_cast<double>(b.size());
  const double se2 = va + vb;
  if (!(se2 > 0)) {
    // No spread at all: the means are either the same number or different beyond any doubt.
    const bool equal = ma == mb;
    return WelchTest{equal ? 0.0 : std::copysign(INFINITY, ma - mb),
                     static_cast<double>(a.size() + b.size() - 2), equal ? 1.0 : 0.0};
  }
  const double t = (ma - mb) / std::sqrt(se2);
  const double df = se2 * se2 / (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  // Two-sided: 2 P(T > |t|), from the lower tail to keep precision for large |t|.
  const double p = std::clamp(2.0 * student_t_cdf(-std::fabs(t), df), 0.0, 1.0);
  return WelchTest{t, df, p};
}

std::string_view verdict_name(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::same: return "same";
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::broken: return "broken";
    case Verdict::not_comparable: return "n/a";
    case Verdict::only_old: return "only in OLD";
    case Verdict::only_new: return "only in NEW";
  }
  return "n/a";
}

std::vector<CaseComparison> compare_reports(const Report& old_report, const Report& new_report,
                                            const CompareOptions& options) {
  std::map<Key, const CaseResult*> new_cases;
  for (const CaseResult& c : new_report.cases) new_cases.emplace(key_of(c), &c);
  std::map<Key, bool> seen;

  std::vector<CaseComparison> out;
  auto start = [](const CaseResult& c) {
    CaseComparison cmp;
    cmp.strategy = c.strategy;
    cmp.method = c.method;
    cmp.payload = c.payload;
    cmp.size = c.size;
    cmp.allocator = c.allocator;
    cmp.inflight = std::max<std::size_t>(c.inflight, 1);
    cmp.client_threads = std::max<std::size_t>(c.client_threads, 1);
    cmp.baseline = c.baseline;
    return cmp;
  };

  for (const CaseResult& old_case : old_report.cases) {
    const Key key = key_of(old_case);
    if (seen.contains(key)) continue;  // a duplicate in OLD: the first one counts
    seen[key] = true;
    CaseComparison cmp = start(old_case);
    const std::vector<double> old_kept = kept_samples(old_case);
    cmp.old_mean = case_mean(old_case, old_kept);

    const auto found = new_cases.find(key);
    if (found == new_cases.end()) {
      cmp.verdict = Verdict::only_old;
      out.push_back(std::move(cmp));
      continue;
    }
    const CaseResult& new_case = *found->second;
    const std::vector<double> new_kept = kept_samples(new_case);
    cmp.new_mean = case_mean(new_case, new_kept);

    if (old_case.status != CaseStatus::ok) {
      cmp.verdict = Verdict::not_comparable;
      cmp.note = std::string(status_name(old_case.status)) + " in OLD" +
                 (old_case.reason.empty() ? "" : ": " + old_case.reason);
    } else if (new_case.status != CaseStatus::ok) {
      cmp.verdict = Verdict::broken;
      cmp.note = std::string(status_name(new_case.status)) + " in NEW" +
                 (new_case.reason.empty() ? "" : ": " + new_case.reason);
    } else {
      if (cmp.old_mean && cmp.new_mean && *cmp.old_mean > 0) cmp.ratio = *cmp.new_mean / *cmp.old_mean;
      cmp.old_ratio = old_case.stats.ratio;
      cmp.new_ratio = new_case.stats.ratio;
      cmp.test = welch_test(new_kept, old_kept);
      if (!cmp.test) {
        cmp.verdict = Verdict::not_comparable;
        cmp.note = "fewer than two kept samples on one side (OLD " + std::to_string(old_kept.size()) + ", NEW " +
                   std::to_string(new_kept.size()) + ")";
      } else if (cmp.test->p >= options.alpha) {
        cmp.verdict = Verdict::same;
      } else {
        cmp.verdict = cmp.test->t > 0 ? Verdict::slower : Verdict::faster;
      }
    }
    out.push_back(std::move(cmp));
  }

  for (const CaseResult& new_case : new_report.cases) {
    const Key key = key_of(new_case);
    if (seen.contains(key)) continue;
    seen[key] = true;
    CaseComparison cmp = start(new_case);
    cmp.new_mean = case_mean(new_case, kept_samples(new_case));
    cmp.verdict = Verdict::only_new;
    out.push_back(std::move(cmp));
  }
  return out;
}

std::vector<CaseComparison> regressions(std::span<const CaseComparison> comparisons, double percent) {
  std::vector<CaseComparison> out;
  for (const CaseComparison& c : comparisons) {
    const bool slower_beyond = c.verdict == Verdict::slower && c.ratio && (*c.ratio - 1.0) * 100.0 > percent;
    if (slower_beyond || c.verdict == Verdict::broken) out.push_back(c);
  }
  return out;
}

std::string format_comparison(std::span<const CaseComparison> comparisons, const CompareOptions& options) {
  std::vector<double> means;
  for (const auto& c : comparisons) {
    if (c.old_mean) means.push_back(*c.old_mean);
    if (c.new_mean) means.push_back(*c.new_mean);
  }
  const Unit unit = means.empty() ? Unit{"ns", 1} : time_unit_for(means);
  std::vector<double> scaled;
  for (double m : means) scaled.push_back(m / unit.scale);
  const int decimals = scaled.empty() ? 1 : decimals_for(scaled);
  const auto any = [&comparisons](auto predicate) {
    return std::any_of(comparisons.begin(), comparisons.end(), predicate);
  };
  const bool inflight = any([](const CaseComparison& c) { return c.inflight > 1; });
  const bool threads = any([](const CaseComparison& c) { return c.client_threads > 1; });
  const bool ratios = any([](const CaseComparison& c) { return c.old_ratio && c.new_ratio; });

  const auto ratio_text = [](const std::optional<double>& r) { return r ? format_number(*r, 3) : std::string("-"); };
  std::vector<TableColumn> columns{{"Strategy", false, {}}, {"Method", false, {}}, {"Payload", false, {}},
                                   {"Size", true, {}}};
  if (inflight) columns.push_back({"In flight", true, {}});
  if (threads) columns.push_back({"Threads", true, {}});
  columns.push_back({"Allocator", false, {}});
  columns.push_back({fmt::format("Old [{}]", unit.name), true, {}});
  columns.push_back({fmt::format("New [{}]", unit.name), true, {}});
  columns.push_back({"New/Old", true, {}});
  columns.push_back({"p", true, {}});
  columns.push_back({"Verdict", false, {}});
  if (ratios) {
    columns.push_back({"Ratio Old", true, {}});
    columns.push_back({"Ratio New", true, {}});
    columns.push_back({"Ratio New/Old", true, {}});
  }
  const auto number = [&](const std::optional<double>& v) {
    return v ? format_number(*v / unit.scale, decimals) : std::string("-");
  };
  std::size_t ratios_compared = 0;
  std::size_t ratios_within = 0;
  const CaseComparison* largest = nullptr;
  for (const auto& c : comparisons) {
    std::vector<std::string> cells{c.strategy, c.method, c.payload, std::to_string(c.size)};
    if (inflight) cells.push_back(std::to_string(c.inflight));
    if (threads) cells.push_back(std::to_string(c.client_threads));
    cells.push_back(c.allocator.empty() ? "-" : c.allocator);
    cells.push_back(number(c.old_mean));
    cells.push_back(number(c.new_mean));
    cells.push_back(c.ratio ? format_number(*c.ratio, 3) : "-");
    cells.push_back(c.test ? fmt::format("{:.2g}", c.test->p) : "-");
    cells.push_back(std::string(verdict_name(c.verdict)));
    if (ratios) {
      cells.push_back(ratio_text(c.old_ratio));
      cells.push_back(ratio_text(c.new_ratio));
      const std::optional<double> moved = ratio_change(c);
      cells.push_back(ratio_text(moved));
      if (moved && !c.baseline) {
        ++ratios_compared;
        if (std::fabs(*moved - 1) * 100 <= options.ratio_tolerance) ++ratios_within;
        if (largest == nullptr || std::fabs(*moved - 1) > std::fabs(*ratio_change(*largest) - 1)) largest = &c;
      }
    }
    for (std::size_t i = 0; i < columns.size(); ++i) columns[i].cells.push_back(cells[i]);
  }
  std::string out = render_table_columns(columns);
  out += fmt::format("\nWelch's two-sided t-test on the kept samples; significant when p < {:g} ({:g} % level).\n",
                     options.alpha, (1.0 - options.alpha) * 100.0);
  if (ratios_compared > 0) {
    out += fmt::format(
        "Ratios against each run's own baseline (paired by round, so a drift of the whole machine between the runs "
        "cancels): {} of {} moved by at most {:g} %; the largest move: {} {}.\n",
        ratios_within, ratios_compared, options.ratio_tolerance, case_text(*largest),
        format_number(*ratio_change(*largest), 3));
  }
  for (const auto& c : comparisons) {
    if (!c.note.empty()) out += fmt::format("{}: {}\n", case_text(c), c.note);
  }
  return out;
}

int run_compare(const CompareCommand& command, std::ostream& out, std::ostream& err) {
  const std::vector<std::string>& files = command.files;
  const std::optional<double>& fail_over = command.fail_over;
  const bool force = command.force;
  const CompareOptions& options = command.options;
  if (files.size() != 2) {
    err << "bench compare: expected two report files, got " << files.size() << "\n";
    return 2;
  }
  auto old_report = read_report_file(files[0]);
  if (!old_report) {
    err << "bench compare: OLD: " << old_report.error().message << "\n";
    return 2;
  }
  auto new_report = read_report_file(files[1]);
  if (!new_report) {
    err << "bench compare: NEW: " << new_report.error().message << "\n";
    return 2;
  }

  const auto differences = comparability_differences(*old_report, *new_report);
  const auto list = [&differences](std::ostream& to) {
    for (const Difference& d : differences) {
      to << "  " << d.key << ": " << d.old_value << " (OLD) vs " << d.new_value << " (NEW)\n";
    }
  };
  if (!differences.empty() && !force) {
    err << "bench compare: the runs differ in what they measured or where; their numbers are not comparable\n";
    list(err);
    err << "(--force compares them anyway)\n";
    return 2;
  }
  out << "OLD: " << files[0] << " (" << old_report->environment.timestamp << ")\n";
  out << "NEW: " << files[1] << " (" << new_report->environment.timestamp << ")\n\n";
  if (!differences.empty()) {
    out << "Compared with --force although the runs differ:\n";
    list(out);
    out << "\n";
  }
  const auto comparisons = compare_reports(*old_report, *new_report, options);
  out << format_comparison(comparisons, options);

  if (!fail_over) return 0;
  const auto failed = regressions(comparisons, *fail_over);
  if (failed.empty()) {
    out << fmt::format("\nRegression check (--fail-over {:g} %): passed.\n", *fail_over);
    return 0;
  }
  out << fmt::format("\nRegression check (--fail-over {:g} %): {} case(s) failed:\n", *fail_over, failed.size());
  for (const auto& c : failed) {
    out << fmt::format("  {}: {}\n", case_text(c),
                       c.verdict == Verdict::broken ? c.note
                                                    : fmt::format("{:.1f} % slower (p = {:.2g})", (*c.ratio - 1) * 100, c.test->p));
  }
  return 1;
}

}  // namespace ringlab::bench
