// A before/after run's numbers and its report.json (ab.hpp).
#include "ringlab/bench/core/ab.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ringlab/bench/core/statistics.hpp"

namespace ringlab::bench {

using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The normal approximation of a median's standard error is this times sigma / sqrt(n) (sqrt(pi / 2)), and
// sigma is this times the median absolute deviation for normal data.
constexpr double kMedianEfficiency = 1.2533141373155;
constexpr double kMadToSigma = 1.482602218505602;

}  // namespace

bool same_count(const std::optional<double>& a, const std::optional<double>& b) noexcept {
  if (!a || !b) return a.has_value() == b.has_value();
  return std::abs(*a - *b) <= std::max(kCountTolerancePerOp, kCountToleranceShare * std::max(std::abs(*a), std::abs(*b)));
}

namespace {

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json number(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

double read_number(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return kNaN;
  return j.at(key).get<double>();
}
std::optional<double> read_optional(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

json estimate_json(const AbEstimate& e) {
  return json{{"pairs", e.pairs}, {"ratio", number(e.ratio)}, {"low", number(e.low)}, {"high", number(e.high)},
              {"mde", number(e.mde)}};
}
AbEstimate estimate_from(const json& j) {
  AbEstimate e;
  e.pairs = j.value("pairs", std::size_t{0});
  e.ratio = read_number(j, "ratio");
  e.low = read_number(j, "low");
  e.high = read_number(j, "high");
  e.mde = read_number(j, "mde");
  return e;
}

// A Report holding only an environment and a config: how the parent's header and each build's worker
// report are written with report.json's own field tables.
json report_part(const Environment& environment, const Config& config, const char* key) {
  Report header;
  header.environment = environment;
  header.config = config;
  return to_json(header).at(key);
}

// One quantity's verdict: beyond the band with its whole interval, or within the noise (also when too few
// values bound the median at the corrected level).
AbVerdict verdict_of(const AbEstimate& e, double band) {
  if (!std::isfinite(e.low) || !std::isfinite(e.high)) return AbVerdict::within_noise;
  if (e.low > 1 + band) return AbVerdict::slower;
  if (e.high < 1 / (1 + band)) return AbVerdict::faster;
  return AbVerdict::within_noise;
}

}  // namespace

std::string_view verdict_name(AbVerdict verdict) noexcept {
  switch (verdict) {
    case AbVerdict::faster: return "faster";
    case AbVerdict::slower: return "slower";
    case AbVerdict::within_noise: return "within the noise";
    case AbVerdict::mixed: return "mixed";
    case AbVerdict::not_compared: return "not compared";
  }
  return "?";
}

bool AbCase::counts_differ() const noexcept {
  return !same_count(before_allocations, after_allocations) || !same_count(before_bytes, after_bytes) ||
         !same_count(before_syscalls, after_syscalls);
}

double normal_quantile(double p) noexcept {
  if (!(p > 0) || !(p < 1)) return kNaN;
  // Bisection on the CDF, 0.5 erfc(-x / sqrt 2): to 1e-12 in 80 steps over [-40, 40].
  double low = -40;
  double high = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (low + high) / 2;
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return (low + high) / 2;
}

std::vector<double> pair_log_ratios(std::span<const double> before, std::span<const double> after,
                                    const std::vector<bool>& after_first) {
  // The log ratio of each round, kept apart by which build went first.
  std::vector<double> after_went_first;
  std::vector<double> before_went_first;
  const std::size_t n = std::min(before.size(), after.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!(before[i] > 0) || !(after[i] > 0)) continue;
    const double log_ratio = std::log(after[i] / before[i]);
    (i < after_first.size() && after_first[i] ? after_went_first : before_went_first).push_back(log_ratio);
  }
  // A balanced pair of rounds, one with each build first, is one value: the mean of their log ratios, in
  // which the order's effect cancels. Without the order (older callers), every round is one.
  std::vector<double> logs;
  if (!after_went_first.empty() && !before_went_first.empty()) {
    const std::size_t balanced = std::min(after_went_first.size(), before_went_first.size());
    for (std::size_t i = 0; i < balanced; ++i) logs.push_back((after_went_first[i] + before_went_first[i]) / 2);
  } else {
    logs = after_went_first.empty() ? before_went_first : after_went_first;
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

double beyond_band_p(std::span<const double> sorted_logs, double band) {
  const std::size_t n = sorted_logs.size();
  if (n == 0) return 1;
  const double edge = std::log1p(band);
  // The values not above +band (for "slower") and not below -band (for "faster"): the fewer, the
  // stronger the evidence that the median lies beyond the band on that side.
  const auto not_above = static_cast<std::size_t>(
      std::upper_bound(sorted_logs.begin(), sorted_logs.end(), edge) - sorted_logs.begin());
  const auto not_below = static_cast<std::size_t>(
      sorted_logs.end() - std::lower_bound(sorted_logs.begin(), sorted_logs.end(), -edge));
  return std::min(1.0, 2 * binomial_half_at_most(n, std::min(not_above, not_below)));
}

namespace {

AbEstimate estimate_of(std::span<const double> logs, double level, double detect_level, double band, double power) {
  AbEstimate e{logs.size(), kNaN, kNaN, kNaN, kNaN};
  if (logs.empty()) return e;
  const double median = quantile_sorted(logs, 0.5);
  e.ratio = std::exp(median);
  const Interval interval = median_interval(logs, level);
  e.low = std::exp(interval.low);
  e.high = std::exp(interval.high);
  if (logs.size() >= 2) {
    std::vector<double> deviations;
    for (double d : logs) deviations.push_back(std::abs(d - median));
    const double sigma = kMadToSigma * median_of(std::move(deviations));
    const double standard_error = kMedianEfficiency * sigma / std::sqrt(static_cast<double>(logs.size()));
    const double z = normal_quantile(1 - (1 - detect_level) / 2) + normal_quantile(power);
    e.mde = std::exp(std::log1p(band) + z * standard_error) - 1;
  }
  return e;
}

}  // namespace

AbEstimate estimate_change(std::span<const double> before, std::span<const double> after,
                           const std::vector<bool>& after_first, double level, double band, double power,
                           std::optional<double> detect_level) {
  return estimate_of(pair_log_ratios(before, after, after_first), level, detect_level.value_or(level), band, power);
}

void judge(AbReport& report) {
  AbMethod& method = report.method;
  const auto find = [](const Report& side, const std::optional<std::size_t>& index) -> const CaseResult* {
    if (!index || *index >= side.cases.size() || side.cases[*index].status != CaseStatus::ok) return nullptr;
    return &side.cases[*index];
  };
  const auto compared = [](const AbCase& c) {
    return c.reason.empty() && std::min(c.before_ns.size(), c.after_ns.size()) > 0;
  };
  // Each compared case's values and the p-values of all its quantities, for the correction.
  struct Values {
    std::vector<double> time;
    std::vector<double> cpu;
  };
  std::vector<Values> values(report.cases.size());
  std::vector<double> p_values;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const AbCase& c = report.cases[i];
    if (!compared(c)) continue;
    values[i].time = pair_log_ratios(c.before_ns, c.after_ns, c.after_first);
    values[i].cpu = pair_log_ratios(c.before_cpu_ns, c.after_cpu_ns, c.after_first);
    p_values.push_back(beyond_band_p(values[i].time, method.noise_band));
    p_values.push_back(beyond_band_p(values[i].cpu, method.noise_band));
  }
  method.compared = p_values.size() / 2;
  method.per_case = 2;
  method.correction = "Benjamini-Hochberg";
  const double alpha = (1 - method.family_level) / static_cast<double>(std::max<std::size_t>(1, p_values.size()));
  std::sort(p_values.begin(), p_values.end());
  method.discoveries = 0;
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    if (p_values[i] <= static_cast<double>(i + 1) * alpha) method.discoveries = i + 1;
  }
  method.case_level = 1 - static_cast<double>(std::max<std::size_t>(1, method.discoveries)) * alpha;
  method.detect_level = 1 - alpha;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    AbCase& c = report.cases[i];
    const CaseResult* b = find(report.before.report, c.before_index);
    const CaseResult* a = find(report.after.report, c.after_index);
    c.before_allocations = b != nullptr ? b->memory.allocs_per_op : std::nullopt;
    c.before_bytes = b != nullptr ? b->memory.bytes_per_op : std::nullopt;
    c.before_syscalls = b != nullptr ? b->io.syscalls_per_op : std::nullopt;
    c.after_allocations = a != nullptr ? a->memory.allocs_per_op : std::nullopt;
    c.after_bytes = a != nullptr ? a->memory.bytes_per_op : std::nullopt;
    c.after_syscalls = a != nullptr ? a->io.syscalls_per_op : std::nullopt;
    c.over_gate = false;
    if (!compared(c)) {
      c.verdict = AbVerdict::not_compared;
      if (c.reason.empty()) c.reason = "no round measured it on both sides";
      continue;
    }
    c.time = estimate_of(values[i].time, method.case_level, method.detect_level, method.noise_band, method.power);
    c.cpu = estimate_of(values[i].cpu, method.case_level, method.detect_level, method.noise_band, method.power);
    c.time_verdict = verdict_of(c.time, method.noise_band);
    c.cpu_verdict = verdict_of(c.cpu, method.noise_band);
    const bool slower = c.time_verdict == AbVerdict::slower || c.cpu_verdict == AbVerdict::slower;
    const bool faster = c.time_verdict == AbVerdict::faster || c.cpu_verdict == AbVerdict::faster;
    c.verdict = slower && faster ? AbVerdict::mixed
                : slower         ? AbVerdict::slower
                : faster         ? AbVerdict::faster
                                 : AbVerdict::within_noise;
    c.moved.clear();
    if (c.time_verdict == AbVerdict::slower || c.time_verdict == AbVerdict::faster) c.moved = "time";
    if (c.cpu_verdict == AbVerdict::slower || c.cpu_verdict == AbVerdict::faster) {
      c.moved += c.moved.empty() ? "CPU" : ", CPU";
    }
    const auto above = [&method](const AbEstimate& e) {
      return method.fail_over && std::isfinite(e.low) && e.low > 1 + *method.fail_over;
    };
    c.over_gate = above(c.time) || above(c.cpu);
  }
}

std::vector<const AbCase*> over_gate(const AbReport& report) {
  std::vector<const AbCase*> over;
  for (const AbCase& c : report.cases) {
    if (c.over_gate) over.push_back(&c);
  }
  return over;
}

namespace {

// One build: its binary, where its code under test came from when not its own commit, its worker's report.
json build_json(const AbBuild& build) {
  json out{{"bench", build.bench}, {"report", to_json(build.report)}};
  if (!build.code.empty()) out["code"] = build.code;
  return out;
}

}  // namespace

json to_json(const AbReport& report) {
  json cases = json::array();
  for (const AbCase& c : report.cases) {
    std::vector<int> first;
    for (bool b : c.after_first) first.push_back(b ? 1 : 0);
    cases.push_back(json{{"name", c.name},
                         {"strategy", c.strategy},
                         {"size", c.size},
                         {"before_index", c.before_index ? json(*c.before_index) : json(nullptr)},
                         {"after_index", c.after_index ? json(*c.after_index) : json(nullptr)},
                         {"before_ns", c.before_ns},
                         {"after_ns", c.after_ns},
                         {"before_cpu_ns", c.before_cpu_ns},
                         {"after_cpu_ns", c.after_cpu_ns},
                         {"after_first", first},
                         {"time", estimate_json(c.time)},
                         {"cpu", estimate_json(c.cpu)},
                         {"verdict", std::string(verdict_name(c.verdict))},
                         {"time_verdict", std::string(verdict_name(c.time_verdict))},
                         {"cpu_verdict", std::string(verdict_name(c.cpu_verdict))},
                         {"moved", c.moved},
                         {"over_gate", c.over_gate},
                         {"reason", c.reason},
                         {"before_allocations", number(c.before_allocations)},
                         {"after_allocations", number(c.after_allocations)},
                         {"before_bytes", number(c.before_bytes)},
                         {"after_bytes", number(c.after_bytes)},
                         {"before_syscalls", number(c.before_syscalls)},
                         {"after_syscalls", number(c.after_syscalls)}});
  }
  const AbMethod& m = report.method;
  return json{{"schema_version", report.schema_version},
              {"kind", std::string(kAbKind)},
              {"partial", report.partial},
              {"environment", report_part(report.environment, report.config, "environment")},
              {"config", report_part(report.environment, report.config, "config")},
              {"side", report.side},
              {"slowdown", report.slowdown},
              {"rounds", report.rounds},
              {"before", build_json(report.before)},
              {"after", build_json(report.after)},
              {"method", json{{"compared", m.compared},
                              {"family_level", m.family_level},
                              {"case_level", m.case_level},
                              {"detect_level", m.detect_level},
                              {"discoveries", m.discoveries},
                              {"noise_band", m.noise_band},
                              {"power", m.power},
                              {"fail_over", number(m.fail_over)},
                              {"correction", m.correction}}},
              {"cases", std::move(cases)}};
}

bool is_ab_report(const json& j) { return j.is_object() && j.value("kind", std::string()) == kAbKind; }

Result<AbReport> ab_report_from_json(const json& j) {
  if (!is_ab_report(j)) return fail("not a before/after report (no \"kind\": \"ab\")");
  AbReport report;
  try {
    report.schema_version = j.at("schema_version").get<int>();
    if (report.schema_version > kAbSchemaVersion) {
      return fail("before/after report schema_version " + std::to_string(report.schema_version) +
                  " is newer than this bench reads (" + std::to_string(kAbSchemaVersion) + ")");
    }
    report.partial = j.value("partial", false);
    json header{{"schema_version", kReportSchemaVersion}, {"environment", j.at("environment")},
                {"config", j.at("config")}, {"cases", json::array()}};
    auto parsed = report_from_json(header);
    if (!parsed) return std::unexpected(parsed.error().wrap("header"));
    report.environment = std::move(parsed->environment);
    report.config = std::move(parsed->config);
    report.side = j.value("side", std::string("client"));
    report.slowdown = j.value("slowdown", std::string());
    report.rounds = j.value("rounds", std::size_t{0});
    for (auto [key, build] : {std::pair{"before", &report.before}, std::pair{"after", &report.after}}) {
      build->bench = j.at(key).value("bench", std::string());
      build->code = j.at(key).value("code", std::string());
      auto side = report_from_json(j.at(key).at("report"));
      if (!side) return std::unexpected(side.error().wrap(key));
      build->report = std::move(*side);
    }
    const json& m = j.at("method");
    report.method.compared = m.value("compared", std::size_t{0});
    report.method.per_case = m.value("per_case", std::size_t{2});
    report.method.family_level = m.value("family_level", 0.95);
    report.method.case_level = m.value("case_level", 0.95);
    report.method.detect_level = m.value("detect_level", report.method.case_level);
    report.method.discoveries = m.value("discoveries", std::size_t{0});
    report.method.noise_band = m.value("noise_band", 0.01);
    report.method.power = m.value("power", 0.9);
    report.method.fail_over = read_optional(m, "fail_over");
    report.method.correction = m.value("correction", std::string("Bonferroni"));
    for (const json& c : j.at("cases")) {
      AbCase out;
      out.name = c.at("name").get<std::string>();
      out.strategy = c.value("strategy", std::string());
      out.size = c.value("size", std::size_t{0});
      if (c.contains("before_index") && !c.at("before_index").is_null()) out.before_index = c.at("before_index").get<std::size_t>();
      if (c.contains("after_index") && !c.at("after_index").is_null()) out.after_index = c.at("after_index").get<std::size_t>();
      out.before_ns = c.at("before_ns").get<std::vector<double>>();
      out.after_ns = c.at("after_ns").get<std::vector<double>>();
      out.before_cpu_ns = c.value("before_cpu_ns", std::vector<double>{});
      out.after_cpu_ns = c.value("after_cpu_ns", std::vector<double>{});
      for (int first : c.value("after_first", std::vector<int>{})) out.after_first.push_back(first != 0);
      out.time = estimate_from(c.at("time"));
      out.cpu = estimate_from(c.at("cpu"));
      const auto read_verdict = [&c](const char* key) {
        const std::string text = c.value(key, std::string("not compared"));
        for (AbVerdict v : {AbVerdict::faster, AbVerdict::slower, AbVerdict::within_noise, AbVerdict::mixed,
                            AbVerdict::not_compared}) {
          if (text == verdict_name(v)) return v;
        }
        return AbVerdict::not_compared;
      };
      out.verdict = read_verdict("verdict");
      out.time_verdict = read_verdict("time_verdict");
      out.cpu_verdict = read_verdict("cpu_verdict");
      out.moved = c.value("moved", std::string());
      out.over_gate = c.value("over_gate", false);
      out.reason = c.value("reason", std::string());
      out.before_allocations = read_optional(c, "before_allocations");
      out.after_allocations = read_optional(c, "after_allocations");
      out.before_bytes = read_optional(c, "before_bytes");
      out.after_bytes = read_optional(c, "after_bytes");
      out.before_syscalls = read_optional(c, "before_syscalls");
      out.after_syscalls = read_optional(c, "after_syscalls");
      report.cases.push_back(std::move(out));
    }
  } catch (const json::exception& e) {
    return fail(std::string("before/after report: ") + e.what());
  }
  return report;
}

Result<std::optional<AbReport>> read_if_ab_report_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return fail("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return fail(path.string() + ": not JSON");
  if (!is_ab_report(j)) return std::optional<AbReport>{};
  auto report = ab_report_from_json(j);
  if (!report) return std::unexpected(report.error().wrap(path.string()));
  return std::optional<AbReport>(std::move(*report));
}

Result<AbReport> read_ab_report_file(const std::filesystem::path& path) {
  auto report = read_if_ab_report_file(path);
  if (!report) return std::unexpected(std::move(report.error()));
  if (!*report) return fail(path.string() + ": not a before/after report (no \"kind\": \"ab\")");
  return std::move(**report);
}

}  // namespace ringlab::bench
