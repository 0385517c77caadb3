// profile.json (tools/profile) read and shown: profile_summary.hpp says the file and the section.
#include "ringlab/bench/report/profile_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "columns.hpp"
#include "ringlab/bench/core/table.hpp"

namespace ringlab::bench {

namespace {

using nlohmann::json;

// Reads one member of `object`, naming where it is ("cases[1].samples") when it is missing or of
// another type.
class Reader {
 public:
  std::string string(const json& object, std::string_view key, const std::string& where) {
    const json* value = member(object, key, where);
    if (value == nullptr) return {};
    if (!value->is_string()) return failed(where, key, "not a string"), std::string();
    return value->get<std::string>();
  }
  double number(const json& object, std::string_view key, const std::string& where) {
    const json* value = member(object, key, where);
    if (value == nullptr) return 0;
    if (!value->is_number() || value->get<double>() < 0) return failed(where, key, "not a number of at least 0"), 0;
    return value->get<double>();
  }
  double share(const json& object, std::string_view key, const std::string& where) {
    const double value = number(object, key, where);
    if (value > 1.0 + 1e-9) failed(where, key, "a share above 1");
    return value;
  }
  const json& array(const json& object, std::string_view key, const std::string& where) {
    static const json empty = json::array();
    const json* value = member(object, key, where);
    if (value == nullptr) return empty;
    if (!value->is_array()) return failed(where, key, "not an array"), empty;
    return *value;
  }
  const std::optional<std::string>& error() const { return error_; }

 private:
  const json* member(const json& object, std::string_view key, const std::string& where) {
    if (!object.is_object()) return failed(where, "", "not an object"), nullptr;
    const auto it = object.find(key);
    if (it == object.end()) return failed(where, key, "missing"), nullptr;
    return &*it;
  }
  void failed(const std::string& where, std::string_view key, std::string_view what) {
    if (error_) return;  // the first error is the one to fix
    const std::string path = key.empty() ? where : where.empty() ? std::string(key) : where + "." + std::string(key);
    error_ = fmt::format("{}: {}", path.empty() ? "the top" : path, what);
  }

  std::optional<std::string> error_;
};

std::string percent(double share) { return format_number(share * 100, 1) + " %"; }

// A table cell: '|' would end the cell, a backtick the code span.
std::string cell_code(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch != '`') {
      out += ch;
    }
  }
  return "`" + out + "`";
}

// A column's number for a case (columns.cpp's, so the page and the tables agree).
std::optional<double> column_number(std::string_view key, const Report& report, const CaseResult& c) {
  for (const columns::Column& column : columns::all()) {
    if (column.key == key && column.number != nullptr) return column.number(report, c);
  }
  return std::nullopt;
}

// The report's case a profile's case is: the spans name it as the tables do, without the allocator.
const CaseResult* report_case(const Report& report, std::string_view name) {
  for (const CaseResult& c : report.cases) {
    const std::string label = case_label(c);
    if (label == name || (label.starts_with(name) && label.substr(name.size()).starts_with(" ("))) return &c;
  }
  return nullptr;
}

std::string microseconds(double ns) { return format_number(ns / 1000, ns < 10'000 ? 2 : 1) + " μs"; }

double area_share(const CaseProfile& c, std::string_view key) {
  for (const ProfileShare& a : c.areas) {
    if (a.name == key) return a.share;
  }
  return 0;
}

struct ProfiledCase {
  const CaseProfile* profile;
  const CaseResult* result;             // nullptr: not in the report
  std::optional<double> cpu_per_request;  // ns
};

// The interfaces' items of every profiled case that has them: one row per area and item, a column per
// case, each cell the item's share x the case's CPU/req (the share alone without it).
std::string render_items(const std::vector<ProfiledCase>& cases) {
  std::vector<std::pair<std::string_view, std::string_view>> rows;  // (area, item), in the cases' order
  for (const std::string_view area : kInterfaceAreas) {
    for (const ProfiledCase& c : cases) {
      for (const ProfileShare& item : c.profile->items) {
        if (item.dso != area) continue;
        const std::pair<std::string_view, std::string_view> row{area, item.name};
        if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
      }
    }
  }
  if (rows.empty()) return {};
  std::string out =
      "\n### The interfaces' machinery, item by item\n\n"
      "The samples of io_uring's, epoll's and system call entry and exit's areas, each by the innermost frame of "
      "its area in its call chain (tools/profile): the sampled frame when it is the area's, else the nearest "
      "caller that is. Per request as above; a blank cell: not among that case's top items.\n\n| Area | Item |";
  for (const ProfiledCase& c : cases) out += fmt::format(" {} |", c.profile->case_name);
  out += "\n|---|---|";
  for (std::size_t i = 0; i < cases.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& [area, name] : rows) {
    out += fmt::format("| {} | {} |", area, cell_code(name));
    for (const ProfiledCase& c : cases) {
      const auto it = std::find_if(c.profile->items.begin(), c.profile->items.end(),
                                   [&](const ProfileShare& item) { return item.dso == area && item.name == name; });
      if (it == c.profile->items.end()) {
        out += " |";
      } else if (c.cpu_per_request) {
        out += fmt::format(" {} ({}) |", microseconds(it->share * *c.cpu_per_request), percent(it->share));
      } else {
        out += fmt::format(" {} |", percent(it->share));
      }
    }
    out += "\n";
  }
  return out;
}

// The areas per request of every profiled case with areas, and what they say of each pair of cases
// that measured the same thing (payload, size, in flight, threads).
std::string render_areas(const ProfileSummary& profile, const Report* report) {
  std::vector<ProfiledCase> cases;
  for (const CaseProfile& c : profile.cases) {
    if (c.areas.empty() || c.samples == 0) continue;
    const CaseResult* result = report != nullptr ? report_case(*report, c.case_name) : nullptr;
    cases.push_back({&c, result,
                     result != nullptr ? column_number("cpu_ns_per_request", *report, *result) : std::nullopt});
  }
  if (cases.empty()) return {};
  std::string out =
      "\n### By area\n\n"
      "Each sample goes to one area by its call chain (tools/profile): the network stack when any frame is TCP/IP, "
      "the socket layer, the loopback device, the receive softirq or a socket's wake-up of its waiter (whichever "
      "interface started the work; a readiness check such as tcp_poll is the interface's, not the stack's), else "
      "io_uring when a frame is io_uring's, else epoll, else system call entry and exit, else the rest of the kernel; "
      "user space is every sample taken there. Per request: the area's share of the case's samples x its CPU/req "
      "(with --client-threads the measuring thread's shares stand for all the client threads' CPU).\n\n";
  out += "| Area |";
  for (const ProfiledCase& c : cases) out += fmt::format(" {} |", c.profile->case_name);
  out += "\n|---|";
  for (std::size_t i = 0; i < cases.size(); ++i) out += "---:|";
  out += "\n";
  for (const ProfileArea& area : kProfileAreas) {
    out += fmt::format("| {} |", area.name);
    for (const ProfiledCase& c : cases) {
      const double share = area_share(*c.profile, area.key);
      out += c.cpu_per_request ? fmt::format(" {} ({}) |", microseconds(share * *c.cpu_per_request), percent(share))
                               : fmt::format(" {} |", percent(share));
    }
    out += "\n";
  }
  out += "| CPU/req |";
  for (const ProfiledCase& c : cases) {
    out += fmt::format(" {} |", c.cpu_per_request ? microseconds(*c.cpu_per_request) : "n/a");
  }
  out += "\n| Syscalls/req |";
  for (const ProfiledCase& c : cases) {
    const std::optional<double> calls =
        c.result != nullptr ? column_number("syscalls_per_request", *report, *c.result) : std::nullopt;
    out += fmt::format(" {} |", calls ? format_number(*calls, 2) : "n/a");
  }
  out += "\n";

  std::string pairs;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (std::size_t j = i + 1; j < cases.size(); ++j) {
      const ProfiledCase& a = cases[i];
      const ProfiledCase& b = cases[j];
      if (!a.cpu_per_request || !b.cpu_per_request || *b.cpu_per_request <= 0) continue;
      const CaseResult& ra = *a.result;
      const CaseResult& rb = *b.result;
      if (ra.payload != rb.payload || ra.size != rb.size || ra.inflight != rb.inflight ||
          ra.client_threads != rb.client_threads) {
        continue;
      }
      const double cpu_a = *a.cpu_per_request;
      const double cpu_b = *b.cpu_per_request;
      const double net_a = area_share(*a.profile, "network") * cpu_a;
      const double net_b = area_share(*b.profile, "network") * cpu_b;
      const double user_a = area_share(*a.profile, "user") * cpu_a;
      const double user_b = area_share(*b.profile, "user") * cpu_b;
      const double rest_a = cpu_a - net_a - user_a;
      const double rest_b = cpu_b - net_b - user_b;
      pairs += fmt::format(
          "- {} against {}: CPU/req {} against {} ({}x). The network stack is {} against {} of it ({} and {} "
          "of each); the other kernel areas together (the interface's machinery, system call entry and exit, "
          "faults and timers) {} against {}; user space {} against {}. Doing nothing but its network work, {a} "
          "would still spend {} per request, {}x {b}'s CPU/req, and {b} {}, {}x {a}'s: the lowest ratios a change "
          "of interface alone reaches while the stack's work per request stays as it is.\n",
          a.profile->case_name, b.profile->case_name, microseconds(cpu_a), microseconds(cpu_b),
          format_number(cpu_a / cpu_b, 2), microseconds(net_a),
          microseconds(net_b), percent(net_a / cpu_a), percent(net_b / cpu_b), microseconds(rest_a),
          microseconds(rest_b), microseconds(user_a), microseconds(user_b), microseconds(net_a),
          format_number(net_a / cpu_b, 2), microseconds(net_b), format_number(cpu_a > 0 ? net_b / cpu_a : 0, 2),
          fmt::arg("a", ra.strategy), fmt::arg("b", rb.strategy));
    }
  }
  if (!pairs.empty()) out += "\nWhat the areas say:\n\n" + pairs;
  return out + render_items(cases);
}

}  // namespace

Result<ProfileSummary> parse_profile_summary(std::string_view text) {
  const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("not valid JSON");
  Reader read;
  ProfileSummary summary;
  const std::string format = read.string(j, "format", "");
  if (!read.error() && format != kProfileSummaryFormat) {
    return fail(fmt::format("format: \"{}\", expected \"{}\"", format, kProfileSummaryFormat));
  }
  summary.event = read.string(j, "event", "");
  summary.samples_outside_spans = static_cast<uint64_t>(read.number(j, "samples_outside_spans", ""));
  const json& cases = read.array(j, "cases", "");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string where = fmt::format("cases[{}]", i);
    const json& c = cases[i];
    CaseProfile profile;
    profile.case_name = read.string(c, "case", where);
    profile.spans = static_cast<std::size_t>(read.number(c, "spans", where));
    profile.samples = static_cast<uint64_t>(read.number(c, "samples", where));
    profile.kernel = read.share(c, "kernel", where);
    profile.user = read.share(c, "user", where);
    const json& dsos = read.array(c, "dsos", where);
    for (std::size_t d = 0; d < dsos.size(); ++d) {
      const std::string at = fmt::format("{}.dsos[{}]", where, d);
      profile.dsos.push_back({read.string(dsos[d], "dso", at), "", read.share(dsos[d], "share", at)});
    }
    const json& symbols = read.array(c, "symbols", where);
    for (std::size_t s = 0; s < symbols.size(); ++s) {
      const std::string at = fmt::format("{}.symbols[{}]", where, s);
      const json& symbol = symbols[s];
      std::string name = read.string(symbol, "symbol", at);
      std::string dso = read.string(symbol, "dso", at);
      profile.symbols.push_back({std::move(name), std::move(dso), read.share(symbol, "share", at)});
    }
    // Optional: tools/profile's files from before it decided areas have none.
    if (c.is_object() && c.contains("areas")) {
      const json& areas = read.array(c, "areas", where);
      for (std::size_t a = 0; a < areas.size(); ++a) {
        const std::string at = fmt::format("{}.areas[{}]", where, a);
        std::string area = read.string(areas[a], "area", at);
        const double share = read.share(areas[a], "share", at);
        if (read.error()) break;
        constexpr std::size_t kAreas = std::size(kProfileAreas);
        if (a >= kAreas || area != kProfileAreas[a].key) {
          const std::string_view expected = a < kAreas ? kProfileAreas[a].key : std::string_view("no more areas");
          return fail(fmt::format("{}.area: \"{}\", expected \"{}\"", at, area, expected));
        }
        profile.areas.push_back({std::move(area), "", share});
      }
      if (!read.error() && profile.areas.size() != std::size(kProfileAreas)) {
        return fail(
            fmt::format("{}.areas: {} areas, expected {}", where, profile.areas.size(), std::size(kProfileAreas)));
      }
    }
    // Optional too: files from before tools/profile counted items have none.
    if (c.is_object() && c.contains("items")) {
      const json& items = read.array(c, "items", where);
      for (std::size_t k = 0; k < items.size() && !read.error(); ++k) {
        const std::string at = fmt::format("{}.items[{}]", where, k);
        std::string area = read.string(items[k], "area", at);
        std::string item = read.string(items[k], "item", at);
        const double share = read.share(items[k], "share", at);
        if (read.error()) break;
        if (std::find(std::begin(kInterfaceAreas), std::end(kInterfaceAreas), area) == std::end(kInterfaceAreas)) {
          return fail(fmt::format("{}.area: \"{}\", expected io_uring, epoll or syscall", at, area));
        }
        profile.items.push_back({std::move(item), std::move(area), share});
      }
    }
    summary.cases.push_back(std::move(profile));
  }
  if (read.error()) return fail(*read.error());
  return summary;
}

Result<std::optional<ProfileSummary>> read_profile_summary(const std::filesystem::path& folder) {
  const std::filesystem::path path = folder / kProfileSummaryFile;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::optional<ProfileSummary>();
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(errno_message("open", path.string(), errno));
  std::ostringstream text;
  text << in.rdbuf();
  auto summary = parse_profile_summary(text.str());
  if (!summary) return fail(fmt::format("{}: {}", path.string(), summary.error().message));
  return std::optional<ProfileSummary>(std::move(*summary));
}

std::string render_profile_section(const ProfileSummary& profile, const Report* report) {
  std::string out = fmt::format(
      "A sample profile ({} events, recorded by `perf record` under tools/profile) of the client's measuring thread "
      "only, while the ops of each case's measured iterations ran (the timed segments; not the verified ops between "
      "them, the pilot or the warm-up). perf followed bench's main thread and no thread or process started after it "
      "(`--no-inherit`), so the server, and with --client-threads the other client threads, are not in it. {} Kernel "
      "is the thread's time in the kernel (system calls, and the network stack they run); user is bench's code and "
      "the libraries it calls. Shares are of the case's samples.\n",
      profile.event,
      profile.event == "cpu-clock"
          ? "cpu-clock is a timer that ticks only while the thread is on a CPU: time blocked waiting is not sampled, so "
            "the shares split the CPU time the table's CPU columns count. A timer cannot interrupt the kernel where it "
            "runs with interrupts off: that time is sampled where they are turned back on (`_raw_spin_unlock_irqrestore`, "
            "`finish_task_switch` and the like), so those symbols stand for the code before them."
          : fmt::format("{} counts while the thread is on a CPU: time blocked waiting is not sampled.", profile.event));
  if (profile.samples_outside_spans > 0) {
    out += fmt::format(
        "\n{} samples fell between the timed segments while perf was on (bench's verified ops and bookkeeping) and "
        "are in no case.\n",
        profile.samples_outside_spans);
  }
  out += render_areas(profile, report);
  for (const CaseProfile& c : profile.cases) {
    out += fmt::format("\n### {}\n\n", c.case_name);
    out += fmt::format("{} samples of {}; kernel {}, user {}.\n\n", c.samples, profile.event, percent(c.kernel),
                       percent(c.user));
    if (c.samples == 0) continue;
    out += "| DSO | Share |\n|---|---:|\n";
    for (const ProfileShare& d : c.dsos) out += fmt::format("| {} | {} |\n", cell_code(d.name), percent(d.share));
    out += "\n| Symbol | DSO | Share |\n|---|---|---:|\n";
    for (const ProfileShare& s : c.symbols) {
      out += fmt::format("| {} | {} | {} |\n", cell_code(s.name), cell_code(s.dso), percent(s.share));
    }
  }
  return out;
}

}  // namespace ringlab::bench
