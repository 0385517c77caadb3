// `bench load`: its flags, the placement of load threads and server, the rounds over the server
// variants and targets, and the report (load.hpp, load_report.hpp).
#include <sys/utsname.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <iostream>

#include "cli_options.hpp"
#include "commands.hpp"
#include "testbed.hpp"
#include "ringlab/base/cpus.hpp"
#include "ringlab/bench/link/link_session.hpp"
#include "ringlab/bench/process/server_process.hpp"
#include "ringlab/bench/report/load_report.hpp"
#include "ringlab/http/url.hpp"

namespace ringlab::bench::app {
namespace {

// "5s", "250ms", "100us", "1.5" (seconds); nullopt for anything else or a negative value.
std::optional<std::chrono::nanoseconds> parse_duration_text(std::string_view text) {
  double scale = 1e9;
  if (text.ends_with("ms")) {
    scale = 1e6;
    text.remove_suffix(2);
  } else if (text.ends_with("us")) {
    scale = 1e3;
    text.remove_suffix(2);
  } else if (text.ends_with("s")) {
    text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !(value >= 0) || value * scale > 1e15) {
    return std::nullopt;
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(value * scale)));
}

// "0", "0,2", "1-3,6": CPU numbers; nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    const std::size_t dash = item.find('-');
    int first = 0;
    int last = 0;
    const auto number = [](std::string_view digits, int& out) {
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
      return !digits.empty() && ec == std::errc{} && end == digits.data() + digits.size() && out >= 0 && out < CPU_SETSIZE;
    };
    if (dash == std::string_view::npos) {
      if (!number(item, first)) return std::nullopt;
      last = first;
    } else if (!number(item.substr(0, dash), first) || !number(item.substr(dash + 1), last) || last < first) {
      return std::nullopt;
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  if (cpus.empty()) return std::nullopt;
  return cpus;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    if (comma != 0) items.emplace_back(text.substr(0, comma));
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
  }
  return items;
}

bool is_loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

std::string environment_line() {
  utsname names{};
  ::uname(&names);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("Client host: kernel {} {}, {} CPUs; {:04}-{:02}-{:02} {:02}:{:02} UTC.", names.release,
                     names.machine, base::allowed_cpus().size(), tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min);
}

}  // namespace

void add_load_arguments(CLI::App& app, LoadArguments& into) {
  LoadSpec& s = into.command.spec;
  app.footer(
      "\nClosed loop (the default): every connection sends its next request when the previous answer is complete.\n"
      "Open loop (--rate): requests are due at fixed intervals and latency counts from the due time, so a server\n"
      "stall shows in every request it delayed (coordinated omission corrected).");
  app.add_option("--url", into.command.url,
                 "load this running server (http://host:port[/target]) instead of starting the embedded one");
  app.add_option("--path", into.targets,
                 "targets to load, comma-separated (default: the URL's, or /weather?count=10); one row each");
  add_ranged_option(app, "--connections", s.connections, "kept-alive connections in all", 1u, 100000u);
  add_ranged_option(app, "--rate", s.rate, "open loop: requests per second in all (0: closed loop)", 0.0, 1e9);
  app.add_option("--duration", into.duration, "measured time per round (5s, 500ms, 2.5)")->capture_default_str();
  app.add_option("--warmup", into.warmup, "load before the measured window, per round")->capture_default_str();
  app.add_option("--timeout", into.timeout,
                 "connect limit, and how long a sent request awaits its answer (then: a timeout, and its "
                 "connection is opened again)")
      ->capture_default_str();
  add_ranged_option(app, "--threads", s.threads, "load threads, one ring each", 1u, 1024u);
  app.add_option("--cpu", into.cpus,
                 "CPUs of the load threads, e.g. 0 or 2-5 (thread i on the i-th; default: every allowed CPU but the "
                 "embedded server's; with --url: not pinned)");
  add_ranged_option(app, "--recv-buffers", s.recv_buffers,
                    "provided receive buffers per thread (a power of two)", 1u, 32768u);
  add_ranged_option(app, "--recv-buffer-bytes", s.recv_buffer_bytes, "size of each receive buffer", 64u, 1u << 24);
  add_ranged_option(app, "--rounds", into.command.rounds, "rounds; every row once per round, in turn", 1u, 1000u);
  app.add_option("--body-strategy", into.body_strategies,
                 "embedded server's body strategies, comma-separated: one row each (copy, writev, fixed, send_zc, "
                 "sendfile; default: the server's own)");
  app.add_option("--server-args", into.server_arguments,
                 "more flags for the embedded server, split at spaces, e.g. \"--inline-body 0\"");
  add_ranged_option(app, "--server-threads", into.command.server_threads, "embedded server's --threads", 1u, 1024u);
  add_server_cpu_option(app, into.command.server_cpu,
                        "embedded server's CPU: auto (one the load threads do not use), none or a number");
  app.add_option("--server-pid", s.server_pid,
                 "with --url: the server's PID on this machine, for its CPU per request (ours is found from GET /env)");
  app.add_option("--server", into.server, "server binary to start (default: next to bench)");
  app.add_option("--label", into.command.label, "the rows' server name (default: ours, or the URL)");
  app.add_option("--out", into.command.out, "results root: reports go to OUT/<UTC timestamp>-load/")->capture_default_str();
  app.add_option("--format", into.formats, "report files to write: md,csv,json")->capture_default_str();
}

std::optional<std::string> finish_load_arguments(LoadArguments& a) {
  LoadCommand& c = a.command;
  LoadSpec& s = c.spec;
  const auto duration = [](const std::string& text, const char* flag, std::chrono::nanoseconds& into,
                           bool positive) -> std::optional<std::string> {
    auto value = parse_duration_text(text);
    if (!value || (positive && value->count() == 0)) {
      return fmt::format("{} '{}': expected a {}duration such as 5s, 250ms or 1.5", flag, text,
                         positive ? "positive " : "");
    }
    into = *value;
    return std::nullopt;
  };
  if (auto refused = duration(a.duration, "--duration", s.duration, true)) return refused;
  if (auto refused = duration(a.warmup, "--warmup", s.warmup, false)) return refused;
  if (auto refused = duration(a.timeout, "--timeout", s.timeout, true)) return refused;
  if (!std::has_single_bit(s.recv_buffers)) return fmt::format("--recv-buffers {}: not a power of two", s.recv_buffers);
  if (s.threads > s.connections) {
    return fmt::format("--threads {} with --connections {}: every thread needs a connection", s.threads, s.connections);
  }
  c.targets = split_list(a.targets);
  for (const std::string& target : c.targets) {
    if (!target.starts_with('/')) return fmt::format("--path '{}': a target starts with /", target);
  }
  if (!c.url.empty()) {
    auto url = http::Url::parse(c.url);
    if (!url) return "--url: " + url.error().message();
    s.host = std::string(url->host);
    s.port = url->port;
    if (c.targets.empty()) c.targets.emplace_back(url->target);
    if (!a.body_strategies.empty()) return "--body-strategy starts the embedded server: not with --url";
    if (!a.server_arguments.empty()) return "--server-args are for the embedded server: not with --url";
  } else if (s.server_pid != -1) {
    return "--server-pid is for --url: the embedded server's PID is known";
  }
  if (c.targets.empty()) c.targets.emplace_back("/weather?count=10");
  c.body_strategies = split_list(a.body_strategies);
  for (std::string_view rest = a.server_arguments; !rest.empty();) {
    const std::size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::size_t end = rest.find(' ');
    c.server_arguments.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  }
  if (!a.cpus.empty()) {
    auto cpus = parse_cpu_list(a.cpus);
    if (!cpus) return fmt::format("--cpu '{}': expected CPU numbers such as 0, 0,2 or 1-3", a.cpus);
    s.cpus = *cpus;
    c.cpus_given = true;
  }
  auto formats = parse_formats(a.formats);
  if (!formats) return "--format: " + formats.error().message;
  for (Format f : *formats) {
    if (f != Format::md && f != Format::csv && f != Format::json) {
      return fmt::format("--format {}: load reports are md, csv or json", format_name(f));
    }
  }
  c.formats = *formats;
  return std::nullopt;
}

namespace {

// The report before any round: what runs where, and a row per body strategy and target.
LoadReport start_load_report(const LoadCommand& command, const LoadSpec& spec, const std::vector<std::string>& variants,
                             int server_cpu) {
  const bool embedded = command.url.empty();
  LoadReport report;
  report.spec = spec;
  report.mode = spec.rate > 0 ? fmt::format("open loop, {:g} req/s, {} connections", spec.rate, spec.connections)
                              : fmt::format("closed loop, {} connections", spec.connections);
  report.placement = fmt::format(
      "load threads on {}; {}", spec.cpus.empty() ? std::string("any CPU") : fmt::format("CPU {}", fmt::join(spec.cpus, ",")),
      embedded ? fmt::format("embedded server ({} thread(s){}{}) {}", command.server_threads,
                             command.server_arguments.empty() ? "" : ", ",
                             fmt::join(command.server_arguments, " "),
                             server_cpu >= 0 ? fmt::format("on CPU {}", server_cpu) : std::string("not pinned"))
               : "server at " + command.url);
  report.environment = environment_line();
  for (const std::string& variant : variants) {
    for (const std::string& target : command.targets) {
      LoadRow row;
      row.server = !command.label.empty() ? command.label : embedded ? "ours" : command.url;
      row.body_strategy = variant;
      row.target = target;
      report.rows.push_back(std::move(row));
    }
  }
  return report;
}

// The embedded server for one body strategy (`variant`, empty: the server's default).
Result<ServerProcess> start_load_server(const ServerPlan& server, const LoadCommand& command,
                                        const std::string& executable, int server_cpu, const std::string& variant) {
  ServerProcessOptions server_options = embedded_server_options(server, executable, server_cpu);
  server_options.extra_arguments = {"--threads", std::to_string(command.server_threads)};
  server_options.extra_arguments.insert(server_options.extra_arguments.end(), command.server_arguments.begin(),
                                        command.server_arguments.end());
  if (!variant.empty()) {
    server_options.extra_arguments.push_back("--body-strategy");
    server_options.extra_arguments.push_back(variant);
  }
  return start_embedded_server(server_options);
}

// What the server says of itself (GET /env): its body strategy (returned; `asked` when it does not
// say), and, for ours on this machine, its PID and the CPUs its workers are pinned to, whose busy time
// is the server's only when no load thread may run there.
std::string learn_server(const ServerPlan& server, const LoadSpec& spec, LoadSpec& run_spec, const std::string& asked) {
  std::string body_strategy = asked;
  auto env = fetch_server_environment(run_spec.host, run_spec.port, server.start_timeout);
  if (!env) return body_strategy;
  if (auto it = env->find("body_strategy"); it != env->end()) body_strategy = it->second;
  const auto program = env->find("program");
  const auto pid = env->find("pid");
  const bool ours = program != env->end() && program->second == "ringlab server";
  if (run_spec.server_pid == -1 && is_loopback(run_spec.host) && ours && pid != env->end()) {
    run_spec.server_pid = static_cast<pid_t>(std::atoi(pid->second.c_str()));
  }
  run_spec.server_stats = ours;
  const auto worker_cpus = env->find("worker_cpus");
  if (ours && is_loopback(run_spec.host) && worker_cpus != env->end() && !spec.cpus.empty()) {
    if (auto cpus = parse_cpu_list(worker_cpus->second)) {
      const bool shared = std::any_of(cpus->begin(), cpus->end(), [&](int cpu) {
        return std::find(spec.cpus.begin(), spec.cpus.end(), cpu) != spec.cpus.end();
      });
      if (!shared) run_spec.server_cpus = std::move(*cpus);
    }
  }
  return body_strategy;
}

// Every target against one server, once (a round of one body strategy); the first failure ends it.
Status load_targets(const LoadCommand& command, LoadSpec& run_spec, LoadReport& report, std::size_t variant,
                    const std::string& body_strategy, unsigned round) {
  for (std::size_t t = 0; t < command.targets.size() && g_cancel == 0; ++t) {
    run_spec.target = command.targets[t];
    LoadRow& row = report.rows[variant * command.targets.size() + t];
    row.body_strategy = body_strategy;
    std::cerr << fmt::format("load: round {}/{}: {}{} {} ...", round, command.rounds, row.server,
                             body_strategy.empty() ? "" : " (" + body_strategy + ")", run_spec.target)
              << std::flush;
    auto result = run_load(run_spec, &g_cancel);
    if (!result) {
      std::cerr << "\n";
      return fail(result.error().message);
    }
    std::cerr << fmt::format(" {:.0f} req/s, p99 {:.3g} ms, {} errors\n", result->requests_per_second,
                             static_cast<double>(result->latency.value_at_percentile(99)) / 1e6, result->errors.total());
    row.rounds.push_back(std::move(*result));
  }
  return {};
}

// The report's files, and the command's exit status: failed when any request failed.
int finish_load_report(const LoadCommand& command, LoadReport& report) {
  // Rows without a round (interrupted before them) are left out.
  std::erase_if(report.rows, [](const LoadRow& row) { return row.rounds.empty(); });
  std::cout << render_load_markdown(report) << std::flush;
  auto folder = create_results_folder(command.out, "-load", static_cast<long long>(std::time(nullptr)));
  if (!folder) return report_error(folder.error().message, kExitFailed);
  std::vector<std::filesystem::path> written;
  for (Format format : command.formats) {
    const std::filesystem::path path = *folder / fmt::format("load.{}", format_name(format));
    const std::string text = format == Format::md    ? render_load_markdown(report)
                             : format == Format::csv ? render_load_csv(report)
                                                     : render_load_json(report);
    if (auto done = write_text_file(path, text); !done) return report_error(done.error().message, kExitFailed);
    written.push_back(path);
  }
  for (const auto& path : written) std::cout << "wrote " << path.string() << "\n";
  if (g_cancel != 0) return interrupted_exit_code();
  uint64_t errors = 0;
  for (const LoadRow& row : report.rows) {
    for (const LoadResult& r : row.rounds) errors += r.errors.total();
  }
  return errors == 0 ? 0 : kExitFailed;
}

}  // namespace

int run_load_command(const LoadCommand& command, const ServerPlan& server_plan, const std::string& executable) {
  LoadSpec spec = command.spec;
  const bool embedded = command.url.empty();
  // The embedded server on its own CPU, the load threads on the others (all of them unless --cpu named some).
  PlacementRequest asked{.client_cpus = command.cpus_given ? spec.cpus : std::vector<int>{},
                         .client_takes_rest = true,
                         .server_cpu = command.server_cpu,
                         .embedded = embedded};
  const auto placement = place(asked);
  if (!placement) return report_error("load: " + placement.error().message);
  spec.cpus = placement->client_cpus;
  const int server_cpu = placement->server_cpu;
  std::vector<std::string> variants = command.body_strategies;
  if (variants.empty()) variants.emplace_back();
  LoadReport report = start_load_report(command, spec, variants, server_cpu);
  if (auto writable = check_out_root(command.out); !writable) return report_error(writable.error().message);

  install_stop_signals();
  for (unsigned round = 1; round <= command.rounds && g_cancel == 0; ++round) {
    for (std::size_t v = 0; v < variants.size() && g_cancel == 0; ++v) {
      std::optional<ServerProcess> server;
      LoadSpec run_spec = spec;
      if (embedded) {
        auto started = start_load_server(server_plan, command, executable, server_cpu, variants[v]);
        if (!started) return report_error("load: " + started.error().message, kExitServerFault);
        server.emplace(std::move(*started));
        run_spec.host = server->host();
        run_spec.port = server->port();
        run_spec.server_pid = server->pid();
      }
      const std::string body_strategy = learn_server(server_plan, spec, run_spec, variants[v]);
      if (auto loaded = load_targets(command, run_spec, report, v, body_strategy, round); !loaded) {
        return report_error("load: " + loaded.error().message, kExitFailed);
      }
      if (server) {
        if (auto stopped = server->stop(); !stopped) return report_error("load: " + stopped.error().message, kExitFailed);
      }
    }
  }
  return finish_load_report(command, report);
}

}  // namespace ringlab::bench::app
