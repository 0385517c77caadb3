// The HTML report: one self-contained page (no script, no external file: styles inline, plots as
// inline SVG) with the environment, the warnings, the main and phase tables, the notes, a box plot of
// the samples and a stacked bar of the phases per group, and the legend.
//
// The tables are built from the same columns of cells as the markdown ones (main_table, phase_table in
// columns.hpp), so that the page and report.md cannot disagree. The plots follow tools/plot's conventions: Okabe-Ito colours,
// the baseline filled, outliers as crosses, a logarithmic axis only where the values span a decade
// (and its label says so), one unit per plot from its middle case.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/core/diagnostics.hpp"
#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/core/table.hpp"
#include "ringlab/bench/report/reporters.hpp"
#include "columns.hpp"

namespace ringlab::bench {

namespace {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// A table of the reporters (the columns of finished cells main_table and phase_table build; a row of
// empty cells between groups) as an HTML table, from the same model the markdown is rendered from.
std::string html_table(const std::vector<TableColumn>& columns) {
  if (columns.empty()) return {};
  const std::size_t rows = columns.front().cells.size();
  std::string out = "<table>\n<thead><tr>";
  for (const TableColumn& column : columns) {
    out += fmt::format("<th{}>{}</th>", column.right ? " class=\"r\"" : "", escape(column.header));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < rows; ++r) {
    const bool gap = std::all_of(columns.begin(), columns.end(), [r](const TableColumn& c) { return c.cells[r].empty(); });
    if (gap) {
      out += fmt::format("<tr class=\"gap\"><td colspan=\"{}\"></td></tr>\n", columns.size());
      continue;
    }
    out += "<tr>";
    for (const TableColumn& column : columns) {
      out += fmt::format("<td{}>{}</td>", column.right ? " class=\"r\"" : "", escape(column.cells[r]));
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  return out;
}

bool is_ok(const CaseResult& c) { return c.status == CaseStatus::ok; }

// An axis from lo to hi (in the plot's unit): linear, or logarithmic when hi / lo is 10 or more.
struct Axis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  double x0 = 0;      // pixel of lo
  double width = 1;   // pixels from lo to hi
  [[nodiscard]] double at(double v) const {
    if (log) return x0 + width * (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return x0 + width * (v - lo) / (hi - lo);
  }
  // Round ticks: 1, 2, 5 x 10^k.
  [[nodiscard]] std::vector<double> ticks() const {
    std::vector<double> out;
    if (log) {
      for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e) {
        for (double m : {1.0, 2.0, 5.0}) {
          const double v = m * std::pow(10.0, e);
          if (v >= lo && v <= hi) out.push_back(v);
        }
      }
      return out;
    }
    const double raw = (hi - lo) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = power;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
      if (m * power >= raw) {
        step = m * power;
        break;
      }
    }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
    return out;
  }
};

Axis make_axis(double lo, double hi, double x0, double width, bool allow_log) {
  Axis a;
  a.x0 = x0;
  a.width = width;
  a.log = allow_log && lo > 0 && hi / lo >= 10;
  if (a.log) {
    a.lo = lo / 1.1;
    a.hi = hi * 1.1;
  } else {
    const double pad = std::max((hi - lo) * 0.05, hi * 0.01);
    a.lo = std::max(0.0, lo - pad);
    a.hi = hi + pad;
    if (!(a.hi > a.lo)) a.hi = a.lo + 1;
  }
  return a;
}

std::string tick_text(double v) {
  return v >= 100 || v == std::floor(v) ? format_number(v, 0) : fmt::format("{:g}", v);
}

std::string axis_svg(const Axis& a, double y, std::string_view label) {
  std::string out = fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000\"/>\n",
                                a.x0, y, a.x0 + a.width, y);
  for (double t : a.ticks()) {
    const double x = a.at(t);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#000\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
                       x, y, y + 4, y + 16, escape(tick_text(t)));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}{}</text>\n", a.x0 + a.width / 2, y + 32,
                     escape(label), a.log ? " (log scale)" : "");
  return out;
}

constexpr double kLabelWidth = 190;
constexpr double kPlotWidth = 520;
constexpr double kRow = 20;

std::string case_row_label(const CaseResult& c) {
  return c.strategy + (c.baseline ? " (baseline)" : "") + (c.reference ? " (ref)" : "");
}

// Per case a box of its kept samples (quartiles, median, whiskers from min to max), its outliers as
// crosses; the baseline's box filled and its median drawn across.
std::string box_svg(const std::vector<const CaseResult*>& group, std::string_view title) {
  std::vector<double> all;
  std::vector<double> medians;
  for (const CaseResult* c : group) {
    all.insert(all.end(), c->samples_ns.begin(), c->samples_ns.end());
    medians.push_back(c->stats.median);
  }
  if (all.empty()) return {};
  std::sort(medians.begin(), medians.end());
  const std::vector<double> middle{medians[medians.size() / 2]};
  const Unit unit = time_unit_for(middle);
  const auto [lo_it, hi_it] = std::minmax_element(all.begin(), all.end());
  const Axis axis = make_axis(*lo_it / unit.scale, *hi_it / unit.scale, kLabelWidth, kPlotWidth, true);
  const double height = 30 + kRow * static_cast<double>(group.size()) + 44;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n<title>{2}</title>\n"
      "<text x=\"{3:.1f}\" y=\"16\" text-anchor=\"middle\" font-size=\"13\">{2}</text>\n",
      kLabelWidth + kPlotWidth + 20, height, escape(title), kLabelWidth + kPlotWidth / 2);
  const double axis_y = 30 + kRow * static_cast<double>(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    const CaseResult& c = *group[i];
    const double y = 30 + kRow * static_cast<double>(i) + kRow / 2;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 6, y + 4,
                       escape(case_row_label(c)));
    std::vector<double> kept = without(c.samples_ns, c.outliers);
    std::sort(kept.begin(), kept.end());
    if (!kept.empty()) {
      const auto x = [&](double ns) { return axis.at(ns / unit.scale); };
      const double q1 = x(quantile_sorted(kept, 0.25));
      const double q2 = x(quantile_sorted(kept, 0.5));
      const double q3 = x(quantile_sorted(kept, 0.75));
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#000\"/>\n",
                         x(kept.front()), y, x(kept.back()), y);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#000\"/>\n", q1,
          y - 6, std::max(1.0, q3 - q1), 12.0, c.baseline ? "#E69F00" : (c.reference ? "#DDDDDD" : "#FFFFFF"));
      out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#000\" "
                         "stroke-width=\"2\"/>\n",
                         q2, y - 6, y + 6);
    }
    for (std::size_t index : c.outliers) {
      if (index >= c.samples_ns.size()) continue;
      const double ox = axis.at(c.samples_ns[index] / unit.scale);
      out += fmt::format("<path d=\"M{:.1f} {:.1f}l6 6m0 -6l-6 6\" stroke=\"#D55E00\"/>\n", ox - 3, y - 3);
    }
  }
  for (const CaseResult* c : group) {
    if (!c->baseline) continue;
    const double x = axis.at(c->stats.median / unit.scale);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"26\" x2=\"{0:.1f}\" y2=\"{1:.1f}\" stroke=\"#E69F00\" "
                       "stroke-dasharray=\"4 3\"/>\n",
                       x, axis_y);
  }
  out += axis_svg(axis, axis_y, fmt::format("time per op [{}]", unit.name));
  out += "</svg>\n";
  return out;
}

struct PhaseColour {
  std::string_view name;
  std::optional<double> Phases::*member;
  std::string_view colour;
};
constexpr PhaseColour kPhases[] = {
    {"connect", &Phases::connect, "#999999"}, {"send", &Phases::send, "#E69F00"},
    {"wait", &Phases::wait, "#56B4E9"},       {"head", &Phases::head, "#009E73"},
    {"body", &Phases::body, "#F0E442"},       {"deserialize", &Phases::deserialize, "#0072B2"},
    {"other", &Phases::other, "#CC79A7"},
};

double phase_total(const CaseResult& c) {
  double total = 0;
  for (const PhaseColour& p : kPhases) total += (c.phases.*p.member).value_or(0.0);
  return total;
}

// Per case the median of each phase, stacked in the order they happen; a linear axis (lengths add).
std::string phases_svg(const std::vector<const CaseResult*>& group, std::string_view title) {
  std::vector<double> totals;
  for (const CaseResult* c : group) totals.push_back(phase_total(*c));
  std::vector<double> sorted = totals;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty() || !(sorted.back() > 0)) return {};
  const std::vector<double> middle{sorted[sorted.size() / 2] > 0 ? sorted[sorted.size() / 2] : sorted.back()};
  const Unit unit = time_unit_for(middle);
  Axis axis = make_axis(0, sorted.back() / unit.scale, kLabelWidth, kPlotWidth, false);
  axis.lo = 0;
  const double axis_y = 30 + kRow * static_cast<double>(group.size());
  const double height = axis_y + 44 + 22;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n<title>{2}</title>\n"
      "<text x=\"{3:.1f}\" y=\"16\" text-anchor=\"middle\" font-size=\"13\">{2}</text>\n",
      kLabelWidth + kPlotWidth + 20, height, escape(title), kLabelWidth + kPlotWidth / 2);
  for (std::size_t i = 0; i < group.size(); ++i) {
    const CaseResult& c = *group[i];
    const double y = 30 + kRow * static_cast<double>(i) + kRow / 2;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 6, y + 4,
                       escape(case_row_label(c)));
    double left = 0;
    for (const PhaseColour& p : kPhases) {
      const double v = (c.phases.*p.member).value_or(0.0) / unit.scale;
      if (!(v > 0)) continue;
      const double x = axis.at(left);
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"13\" fill=\"{}\" stroke=\"#000\" "
                         "stroke-width=\"0.3\"><title>{}: {} {}</title></rect>\n",
                         x, y - 6.5, axis.at(left + v) - x, p.colour, p.name, format_number(v, 1), unit.name);
      left += v;
    }
  }
  out += axis_svg(axis, axis_y, fmt::format("median time per op of each phase, stacked [{}]", unit.name));
  double x = kLabelWidth;
  for (const PhaseColour& p : kPhases) {
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\" stroke=\"#000\" "
                       "stroke-width=\"0.3\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                       x, height - 16, p.colour, x + 14, height - 7, p.name);
    x += 74;
  }
  out += "</svg>\n";
  return out;
}

std::string group_title(const CaseResult& c, bool allocators) {
  std::string title = fmt::format("{} {}, {} records", c.method, c.payload, format_number(static_cast<double>(c.size), 0));
  if (c.inflight > 1) title += fmt::format(", {} in flight", c.inflight);
  if (c.client_threads > 1) title += fmt::format(", {} client threads", c.client_threads);
  if (allocators) title += ", " + c.allocator;
  return title;
}

constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; margin: 1.5em; color: #111; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
pre { background: #f4f4f4; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.15em 0.6em; white-space: nowrap; text-align: left; }
th { background: #eee; } .r { text-align: right; font-variant-numeric: tabular-nums; }
tr.gap td { border: none; height: 0.8em; }
ul.warnings li { margin: 0.1em 0; }
figure { margin: 1em 0; }
)css";

}  // namespace

std::string render_html(const Report& report) {
  const Environment& e = report.environment;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>ringlab bench: {} suite, {}</title>\n", escape(report.config.suite), escape(e.timestamp));
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>ringlab bench: {} suite, {}{}</h1>\n", escape(report.config.suite), escape(e.timestamp),
                     report.partial ? " (partial: interrupted)" : "");
  std::string environment = render_environment(report);
  // Without the markdown fence of the console's block.
  if (environment.starts_with("```ini\n")) environment.erase(0, 7);
  if (environment.ends_with("```\n")) environment.erase(environment.size() - 4);
  out += "<h2>Environment</h2>\n<pre>" + escape(environment) + "</pre>\n";

  const std::vector<std::string> warnings = diagnostic_warnings(report);
  if (!warnings.empty()) {
    out += "<h2>Warnings (numbers to read with care)</h2>\n<ul class=\"warnings\">\n";
    for (const std::string& w : warnings) out += "<li>" + escape(w) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<h2>Results</h2>\n" + html_table(main_table(report, columns::kFull));
  if (const std::vector<TableColumn> phases = phase_table(report); !phases.empty()) {
    out += "<h2>Request phases (median per op)</h2>\n" + html_table(phases);
  }
  if (const std::string notes = render_notes(report); !notes.empty()) {
    out += "<h2>Notes</h2>\n<pre>" + escape(notes) + "</pre>\n";
  }

  // One plot of each kind per method, payload, size (and allocator), in the order the cases ran.
  bool allocators = false;
  for (const CaseResult& c : report.cases) {
    allocators = allocators || c.allocator != report.cases.front().allocator;
  }
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const CaseResult*>> groups;
  for (const CaseResult& c : report.cases) {
    if (!is_ok(c) || c.samples_ns.empty()) continue;
    const std::string key = case_key(c);
    if (!groups.contains(key)) keys.push_back(key);
    groups[key].push_back(&c);
  }
  if (!keys.empty()) {
    out += "<h2>Samples</h2>\n<p>Per case a box of the per-op time of every measured iteration (box: quartiles, "
           "thick line: median, whiskers: smallest to largest kept sample); crosses: outliers the statistics left "
           "out; the baseline's box is filled and its median dashed across.</p>\n";
    for (const std::string& key : keys) {
      out += "<figure>\n" + box_svg(groups[key], group_title(*groups[key].front(), allocators)) + "</figure>\n";
    }
    std::string phase_plots;
    for (const std::string& key : keys) {
      std::vector<const CaseResult*> with_phases;
      for (const CaseResult* c : groups[key]) {
        if (phase_total(*c) > 0) with_phases.push_back(c);
      }
      if (with_phases.empty()) continue;
      phase_plots += "<figure>\n" + phases_svg(with_phases, group_title(*with_phases.front(), allocators)) +
                     "</figure>\n";
    }
    if (!phase_plots.empty()) {
      out += "<h2>Phases</h2>\n<p>Median time of each phase of one request, stacked in the order they happen. "
             "Medians: with a slow tail they add up to less than the mean.</p>\n" +
             phase_plots;
    }
  }
  out += "<h2>Legend</h2>\n<pre>" + escape(render_legend()) + "</pre>\n</body>\n</html>\n";
  return out;
}

}  // namespace ringlab::bench
