// report.json: writing and reading it from one field table.
//
// Each struct of the results model is described once, by a describe_*() function that names every
// field with its JSON key (the table); a Writer and a Reader visit that same table. Adding a field to
// report.json is one line in its describe_*() (plus, if a table should show it, the reporters), and
// the round-trip tests cover it. Keys and units: results.hpp. Numbers that are not finite are written
// as null and read back as NaN (plain doubles) or absent (optional ones); a missing key keeps the
// field's default, so files from before a field was added still read; a key of the wrong type is an
// error naming its path ("cases[3].stats.mean: ...").
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "report_fields.hpp"
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

using nlohmann::json;

using namespace report_fields;

namespace {

// ---- the writer ---------------------------------------------------------------------------------

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

class Writer {
 public:
  template <class T>
  void operator()(const char* key, const T& value) {
    out_[key] = value_json(value);
  }
  template <class S, class Describe>
  void object(const char* key, const S& value, Describe describe) {
    Writer inner;
    describe(inner, value);
    out_[key] = std::move(inner.out_);
  }
  template <class S, class Describe>
  void optional_object(const char* key, const std::optional<S>& value, Describe describe) {
    if (!value) {
      out_[key] = nullptr;
      return;
    }
    object(key, *value, describe);
  }
  json take() { return std::move(out_); }

 private:
  static json value_json(double v) { return number(v); }
  static json value_json(const std::optional<double>& v) { return v ? number(*v) : json(nullptr); }
  static json value_json(const std::optional<bool>& v) { return v ? json(*v) : json(nullptr); }
  static json value_json(CaseStatus status) { return std::string(status_name(status)); }
  static json value_json(const std::vector<double>& samples) {
    json out = json::array();
    for (double s : samples) out.push_back(number(s));
    return out;
  }
  static json value_json(const Counters& counters) {
    json out = json::object();
    for (const auto& [name, value] : counters) out[name] = value_json(value);
    return out;
  }
  static json value_json(const std::vector<LatencyBucket>& buckets) {
    json out = json::array();
    for (const LatencyBucket& b : buckets) out.push_back(json::array({b.lowest_ns, b.highest_ns, b.count}));
    return out;
  }
  template <class T>
  static json value_json(const T& value) {
    return json(value);
  }

  json out_ = json::object();
};

template <class S, class Describe>
json write(const S& value, Describe describe) {
  Writer w;
  describe(w, value);
  return w.take();
}

// ---- the reader ---------------------------------------------------------------------------------

class Reader {
 public:
  Reader(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  template <class T>
  void operator()(const char* key, T& out) {
    if (!error_.empty()) return;
    const auto it = object_.find(key);
    if (it == object_.end()) return;
    read_value(*it, key, out);
  }
  template <class S, class Describe>
  void object(const char* key, S& out, Describe describe) {
    if (!error_.empty()) return;
    const auto it = object_.find(key);
    if (it == object_.end()) return;
    if (!it->is_object()) {
      fail_at(key, "expected an object");
      return;
    }
    Reader inner(*it, path_ + "." + key);
    describe(inner, out);
    error_ = inner.error_;
  }
  template <class S, class Describe>
  void optional_object(const char* key, std::optional<S>& out, Describe describe) {
    if (!error_.empty()) return;
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      out.reset();
      return;
    }
    S value{};
    object(key, value, describe);
    if (error_.empty()) out = std::move(value);
  }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  void fail_at(const char* key, std::string_view what) { error_ = path_ + "." + key + ": " + std::string(what); }

  void read_value(const json& j, const char* key, double& out) {
    if (j.is_null()) {
      out = std::numeric_limits<double>::quiet_NaN();
    } else if (j.is_number()) {
      out = j.get<double>();
    } else {
      fail_at(key, "expected a number or null");
    }
  }
  // An optional number or flag: null is absent.
  template <class T>
    requires std::is_same_v<T, double> || std::is_same_v<T, bool>
  void read_value(const json& j, const char* key, std::optional<T>& out) {
    constexpr bool kFlag = std::is_same_v<T, bool>;
    if (j.is_null()) {
      out.reset();
    } else if (kFlag ? j.is_boolean() : j.is_number()) {
      out = j.get<T>();
    } else {
      fail_at(key, kFlag ? "expected true, false or null" : "expected a number or null");
    }
  }
  void read_value(const json& j, const char* /*key: the message names the case*/, CaseStatus& out) {
    const std::string name = j.is_string() ? j.get<std::string>() : std::string();
    if (const auto parsed = parse_status(name)) {
      out = *parsed;
    } else {
      error_ = path_ + ": unknown status '" + (j.is_string() ? name : j.dump()) + "'";
    }
  }
  void read_value(const json& j, const char* key, std::vector<double>& out) {
    if (!j.is_array()) {
      fail_at(key, "expected an array");
      return;
    }
    out.clear();
    for (const json& v : j) {
      if (!v.is_null() && !v.is_number()) {
        fail_at(key, "expected numbers");
        return;
      }
      out.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
    }
  }
  void read_value(const json& j, const char* key, Counters& out) {
    if (!j.is_object()) {
      fail_at(key, "expected an object");
      return;
    }
    for (const auto& [name, value] : j.items()) {
      if (value.is_null()) {
        out[name] = std::nullopt;
      } else if (value.is_number()) {
        out[name] = value.get<double>();
      } else {
        error_ = path_ + "." + key + "." + name + ": expected a number or null";
        return;
      }
    }
  }
  void read_value(const json& j, const char* key, std::vector<LatencyBucket>& out) {
    std::vector<std::array<uint64_t, 3>> triples;
    read_value(j, key, triples);
    out.clear();
    for (const auto& [lowest, highest, count] : triples) out.push_back({lowest, highest, count});
  }
  template <class T>
  void read_value(const json& j, const char* key, T& out) {
    try {
      out = j.template get<T>();
    } catch (const json::exception& e) {
      fail_at(key, e.what());
    }
  }

  const json& object_;
  std::string path_;
  std::string error_;
};

// Reads `j` (an object) into `out`; the error names the path.
template <class S, class Describe>
Status read(const json& j, const std::string& path, S& out, Describe describe) {
  if (!j.is_object()) return fail(path + ": expected an object");
  Reader r(j, path);
  describe(r, out);
  if (!r.error().empty()) return fail(r.error());
  return {};
}

}  // namespace

json to_json(const Report& report) {
  json cases = json::array();
  for (const CaseResult& c : report.cases) cases.push_back(write(c, [](auto& w, auto& x) { describe_case(w, x); }));
  return json{{"schema_version", report.schema_version},
              {"partial", report.partial},
              {"environment", write(report.environment, [](auto& w, auto& x) { describe_environment(w, x); })},
              {"config", write(report.config, [](auto& w, auto& x) { describe_config(w, x); })},
              {"cases", std::move(cases)}};
}

Result<Report> report_from_json(const json& j) {
  if (!j.is_object()) return fail("report: expected a JSON object at the top");
  if (j.value("kind", std::string()) == "ab") {
    return fail("report: a before/after run's report (\"kind\": \"ab\"), not a suite's: bench report makes its "
                "page, tools/plot its per-round ratios");
  }
  Report report;
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer()) return fail("report: no integer schema_version");
  report.schema_version = version->get<int>();
  if (report.schema_version < kOldestReadableSchemaVersion || report.schema_version > kReportSchemaVersion) {
    return fail("report: schema_version " + std::to_string(report.schema_version) + " is not one of the " +
                std::to_string(kOldestReadableSchemaVersion) + ".." + std::to_string(kReportSchemaVersion) +
                " this bench reads");
  }
  if (const auto partial = j.find("partial"); partial != j.end()) {
    if (!partial->is_boolean()) return fail("report: partial is not a boolean");
    report.partial = partial->get<bool>();
  }
  if (const auto e = j.find("environment"); e != j.end()) {
    if (auto ok = read(*e, "environment", report.environment, [](auto& r, auto& x) { describe_environment(r, x); });
        !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (const auto c = j.find("config"); c != j.end()) {
    if (auto ok = read(*c, "config", report.config, [](auto& r, auto& x) { describe_config(r, x); }); !ok) {
      return std::unexpected(ok.error());
    }
  }
  const auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array()) return fail("report: no cases array");
  for (std::size_t i = 0; i < cases->size(); ++i) {
    CaseResult c;
    if (auto ok = read((*cases)[i], "cases[" + std::to_string(i) + "]", c, [](auto& r, auto& x) { describe_case(r, x); });
        !ok) {
      return std::unexpected(ok.error());
    }
    report.cases.push_back(std::move(c));
  }
  return report;
}

Result<Report> parse_report(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("report: not valid JSON");
  return report_from_json(j);
}

Result<Report> read_report_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(errno_message("open", path.string(), errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail(errno_message("read", path.string(), errno));
  auto report = parse_report(text.str());
  if (!report) return std::unexpected(report.error().wrap(path.string()));
  return report;
}

Status write_report_fd(int fd, const Report& report) {
  const std::string text = to_json(report).dump(2) + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno_message("write", "report fd " + std::to_string(fd), errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<Report> read_report_fd(int fd) {
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno_message("read", "report fd " + std::to_string(fd), errno));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return parse_report(text);
}

}  // namespace ringlab::bench
