// profile.json (tools/profile) read and shown: profile_summary.hpp says the file and the section.
#include "ringlab/bench/report/profile_summary.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

std::string render_profile_section(const ProfileSummary& profile) {
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
