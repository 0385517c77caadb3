// The formats of `bench load`'s report (load_report.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <nlohmann/json.hpp>

#include "ringlab/bench/report/load_report.hpp"

namespace ringlab::bench {
namespace {

// "812 µs", "1.25 ms", "3.40 s": three significant digits, as the histogram keeps them.
std::string duration_text(uint64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns < 1'000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.3g} µs", v / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.3g} ms", v / 1e6);
  return fmt::format("{:.3g} s", v / 1e9);
}

std::string percentile_name(double p) {
  std::string text = fmt::format("{}", p);
  std::erase(text, '.');
  return "p" + text;
}

template <class Get>
double median_of(const LoadRow& row, Get get) {
  std::vector<double> values;
  for (const LoadResult& r : row.rounds) values.push_back(get(r));
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The median of an optional figure over the rounds; none unless every round has it.
std::optional<double> optional_median(const LoadRow& row, std::optional<double> LoadResult::*field) {
  for (const LoadResult& r : row.rounds) {
    if (!(r.*field)) return std::nullopt;
  }
  return median_of(row, [field](const LoadResult& r) { return *(r.*field); });
}

std::string optional_us(const LoadRow& row, std::optional<double> LoadResult::*field) {
  const std::optional<double> value = optional_median(row, field);
  return value ? fmt::format("{:.2f}", *value) : std::string("n/a");
}

// The server's zero-copy sends per request, "sent / copied"; n/a unless every round has both (the
// server answers GET /stats).
std::string zero_copy_text(const LoadRow& row) {
  const std::optional<double> sent = optional_median(row, &LoadResult::server_zc_sends_per_request);
  const std::optional<double> copied = optional_median(row, &LoadResult::server_zc_copied_per_request);
  return sent && copied ? fmt::format("{:.2f} / {:.2f}", *sent, *copied) : std::string("n/a");
}

std::string optional_number(const std::optional<double>& value) {
  return value ? fmt::format("{:.3f}", *value) : std::string();
}

std::string errors_text(const LoadErrors& e) {
  std::vector<std::string> parts;
  const auto add = [&parts](const char* name, uint64_t n) {
    if (n != 0) parts.push_back(fmt::format("{} {}", n, name));
  };
  add("connect", e.connect);
  add("send", e.send);
  add("receive", e.receive);
  add("closed", e.closed);
  add("malformed", e.malformed);
  add("non-2xx", e.status);
  add("timeout", e.timeout);
  return parts.empty() ? "0" : fmt::format("{}", fmt::join(parts, ", "));
}

LoadErrors summed_errors(const LoadRow& row) {
  LoadErrors e;
  for (const LoadResult& r : row.rounds) e += r.errors;
  return e;
}

}  // namespace

double LoadRow::median_requests_per_second() const {
  return median_of(*this, [](const LoadResult& r) { return r.requests_per_second; });
}

Histogram LoadRow::merged_latency() const {
  Histogram merged;
  for (const LoadResult& r : rounds) merged.merge(r.latency);
  return merged;
}

std::string render_load_markdown(const LoadReport& report) {
  std::string out = "# bench load\n\n";
  out += fmt::format("{}; {} thread(s), {:.3g} s measured after {:.3g} s of warm-up per round; {}.\n",
                     report.mode, report.spec.threads, std::chrono::duration<double>(report.spec.duration).count(),
                     std::chrono::duration<double>(report.spec.warmup).count(), report.placement);
  if (!report.environment.empty()) out += report.environment + "\n";
  out += "\nReq/s: median of the rounds (each round in brackets). Latency percentiles: every round's measured "
         "requests together";
  out += report.spec.rate > 0 ? ", from each request's due time (open loop: coordinated omission corrected).\n"
                              : ", from each request's send (closed loop: a server stall shows in few requests).\n";
  out += fmt::format("Errors: timeout counts the requests left unanswered {:.3g} s after their send (--timeout); "
                     "they have no latency, and their connections were opened again.\n",
                     std::chrono::duration<double>(report.spec.timeout).count());
  out += "CPU/req: CPU time over the window divided by the measured requests (server: every thread of it). "
         "Server CPUs busy/req: the whole busy time of the CPUs our server has to itself (its /env "
         "worker_cpus; /proc/stat), which also counts the softirq work that runs there while the server "
         "sleeps (n/a: no such CPUs).\n";
  out += "ZC sent / copied per req: the server's zero-copy sends over the window (its GET /stats), those the "
         "kernel sent from the server's pages and those it copied, per measured request (n/a: no /stats).\n\n";
  out += "| Server | Body strategy | Target | Req/s | Rounds | ";
  for (double p : kLoadPercentiles) out += percentile_name(p) + " | ";
  out += "Max | Errors | Server CPU/req (µs) | Server CPUs busy/req (µs) | Client CPU/req (µs) | Enters/req | "
         "ZC sent / copied per req |\n";
  out += "|---|---|---|---:|---|";
  for (std::size_t i = 0; i < std::size(kLoadPercentiles); ++i) out += "---:|";
  out += "---:|---|---:|---:|---:|---:|---:|\n";
  for (const LoadRow& row : report.rows) {
    const Histogram latency = row.merged_latency();
    std::vector<std::string> rounds;
    for (const LoadResult& r : row.rounds) rounds.push_back(fmt::format("{:.0f}", r.requests_per_second));
    out += fmt::format("| {} | {} | `{}` | {:.0f} | {} | ", row.server, row.body_strategy.empty() ? "n/a" : row.body_strategy,
                       row.target, row.median_requests_per_second(), fmt::join(rounds, ", "));
    for (double p : kLoadPercentiles) out += duration_text(latency.value_at_percentile(p)) + " | ";
    const double enters = median_of(row, [](const LoadResult& r) {
      return r.requests_total == 0 ? 0.0 : static_cast<double>(r.enters) / static_cast<double>(r.requests_total);
    });
    out += fmt::format("{} | {} | {} | {} | {:.2f} | {:.2f} | {} |\n", duration_text(latency.max()),
                       errors_text(summed_errors(row)), optional_us(row, &LoadResult::server_cpu_us_per_request),
                       optional_us(row, &LoadResult::server_cpus_busy_us_per_request),
                       median_of(row, [](const LoadResult& r) { return r.client_cpu_us_per_request; }), enters,
                       zero_copy_text(row));
  }
  bool interrupted = false;
  for (const LoadRow& row : report.rows) {
    for (const LoadResult& r : row.rounds) interrupted = interrupted || r.interrupted;
  }
  if (interrupted) out += "\nInterrupted: some rounds ended early; their figures cover less than the window.\n";
  return out;
}

std::string render_load_csv(const LoadReport& report) {
  std::string out = "server,body_strategy,target,mode,round,requests,requests_per_second";
  for (double p : kLoadPercentiles) out += "," + percentile_name(p) + "_ns";
  out += ",max_ns,errors_connect,errors_send,errors_receive,errors_closed,errors_malformed,errors_status,"
         "errors_timeout,reconnects,buffer_shortages,server_cpu_us_per_request,client_cpu_us_per_request,"
         "enters_per_request,server_zc_sends_per_request,server_zc_copied_per_request,"
         "server_cpus_busy_us_per_request\n";
  const auto quoted = [](const std::string& text) {
    std::string q = "\"";
    for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const LoadRow& row : report.rows) {
    for (std::size_t i = 0; i < row.rounds.size(); ++i) {
      const LoadResult& r = row.rounds[i];
      out += fmt::format("{},{},{},{},{},{},{:.1f}", quoted(row.server), quoted(row.body_strategy), quoted(row.target),
                         quoted(report.mode), i + 1, r.requests, r.requests_per_second);
      for (double p : kLoadPercentiles) out += fmt::format(",{}", r.latency.value_at_percentile(p));
      const LoadErrors& e = r.errors;
      out += fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{},{},{}\n", r.latency.max(), e.connect, e.send,
                         e.receive, e.closed, e.malformed, e.status, e.timeout, r.reconnects, r.buffer_shortages,
                         optional_number(r.server_cpu_us_per_request), r.client_cpu_us_per_request,
                         r.requests_total == 0 ? 0.0 : static_cast<double>(r.enters) / static_cast<double>(r.requests_total),
                         optional_number(r.server_zc_sends_per_request), optional_number(r.server_zc_copied_per_request),
                         optional_number(r.server_cpus_busy_us_per_request));
    }
  }
  return out;
}

std::string render_load_json(const LoadReport& report) {
  using nlohmann::json;
  const LoadSpec& s = report.spec;
  json root = {
      {"schema", kLoadSchemaVersion},
      {"command", "load"},
      {"mode", report.mode},
      {"placement", report.placement},
      {"environment", report.environment},
      {"settings",
       {{"connections", s.connections},
        {"rate", s.rate},
        {"threads", s.threads},
        {"duration_s", std::chrono::duration<double>(s.duration).count()},
        {"warmup_s", std::chrono::duration<double>(s.warmup).count()},
        {"timeout_s", std::chrono::duration<double>(s.timeout).count()},
        {"recv_buffers", s.recv_buffers},
        {"recv_buffer_bytes", s.recv_buffer_bytes},
        {"cpus", s.cpus}}},
      {"rows", json::array()},
  };
  for (const LoadRow& row : report.rows) {
    json rounds = json::array();
    for (const LoadResult& r : row.rounds) {
      json percentiles = json::object();
      for (double p : kLoadPercentiles) percentiles[percentile_name(p)] = r.latency.value_at_percentile(p);
      json buckets = json::array();
      for (const Histogram::Bucket& b : r.latency.non_empty_buckets()) {
        buckets.push_back(json::array({b.lowest, b.highest, b.count}));
      }
      const LoadErrors& e = r.errors;
      rounds.push_back({
          {"requests", r.requests},
          {"seconds", r.seconds},
          {"requests_per_second", r.requests_per_second},
          {"body_bytes", r.body_bytes},
          {"latency_ns", {{"percentiles", percentiles}, {"min", r.latency.min()}, {"max", r.latency.max()},
                          {"count", r.latency.count()}, {"buckets", buckets}}},
          {"errors",
           {{"connect", e.connect}, {"send", e.send}, {"receive", e.receive}, {"closed", e.closed},
            {"malformed", e.malformed}, {"status", e.status}, {"timeout", e.timeout}}},
          {"reconnects", r.reconnects},
          {"buffer_shortages", r.buffer_shortages},
          {"requests_total", r.requests_total},
          {"enters", r.enters},
          {"server_cpu_us_per_request", r.server_cpu_us_per_request ? json(*r.server_cpu_us_per_request) : json(nullptr)},
          {"server_cpus_busy_us_per_request",
           r.server_cpus_busy_us_per_request ? json(*r.server_cpus_busy_us_per_request) : json(nullptr)},
          {"client_cpu_us_per_request", r.client_cpu_us_per_request},
          {"server_zc_sends_per_request",
           r.server_zc_sends_per_request ? json(*r.server_zc_sends_per_request) : json(nullptr)},
          {"server_zc_copied_per_request",
           r.server_zc_copied_per_request ? json(*r.server_zc_copied_per_request) : json(nullptr)},
          {"interrupted", r.interrupted},
      });
    }
    root["rows"].push_back({{"server", row.server},
                            {"body_strategy", row.body_strategy},
                            {"target", row.target},
                            {"median_requests_per_second", row.median_requests_per_second()},
                            {"rounds", rounds}});
  }
  return root.dump(2) + "\n";
}

}  // namespace ringlab::bench
