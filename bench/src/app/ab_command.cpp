// `bench [SUITE] --before BENCH --after BENCH`: the parent of a before/after run (core/ab.hpp). It places
// the client and the server, starts one embedded server for both builds (--compare-side client), starts
// each build's bench as a worker (ab_worker.cpp) pinned to the client's CPU, and drives them over their
// pipes (ab_protocol.hpp): the pilots one build after the other, the same ops per iteration for both, the
// warm-ups, then rounds in which every case runs one measured iteration in each build, back to back. The
// parent measures nothing itself: it pairs the samples, judges them and writes the report.
//
// Errors: a worker that fails to start, answers out of protocol or exits is an error naming the build and
// the step (exit 1 once measuring began, 2 or 3 before, as a suite run); a case one build fails is not
// compared, the others go on. SIGINT/SIGTERM: the rounds completed are judged and reported (partial).
// Threads: the main thread only; the workers are processes. Ownership: the workers and the server are
// owned here and stopped before the report is written.
#include <fcntl.h>
#include <sys/personality.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>

#include "ab_protocol.hpp"
#include "commands.hpp"
#include "testbed.hpp"
#include "ringlab/bench/core/ab.hpp"
#include "ringlab/bench/measure/environment.hpp"
#include "ringlab/bench/process/allocators.hpp"
#include "ringlab/bench/report/ab_report.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::bench::app {

namespace {

// What the parent decides for its workers; the rest of its command line is theirs.
constexpr std::array<std::string_view, 17> kParentOptions{
    "--before",     "--after",          "--before-code",   "--after-code", "--compare-side", "--rounds",
    "--noise-band", "--fail-over",      "--slowdown",      "--out",        "--format",       "--columns",
    "--cpu",        "--url",            "--iterations",    "--max-iterations", "--iteration-time"};
constexpr int kWorkerInFd = 3;
constexpr int kWorkerOutFd = 4;

struct Worker {
  std::string side;  // "before" or "after"
  std::string bench;
  ChildProcess child;
  net::Fd to_worker;
  net::Fd from_worker;
  std::optional<LineChannel> channel;
  std::vector<std::string> names;     // its cases, in its order
  std::vector<uint64_t> piloted;      // ops per iteration its pilot found (0: not measured)
  std::chrono::milliseconds timeout{};

  Status fail_step(const Error& error, std::string_view step) const {
    return fail(fmt::format("{} build ({}): {}: {}", side, bench, step, error.message));
  }
};

Status start_worker(Worker& worker, std::vector<std::string> arguments, int cpu, int log_fd) {
  auto to = make_pipe();
  auto from = make_pipe();
  if (!to) return worker.fail_step(to.error(), "pipe");
  if (!from) return worker.fail_step(from.error(), "pipe");
  SpawnOptions spawn;
  spawn.executable = worker.bench;
  spawn.arguments = std::move(arguments);
  spawn.fds = {{to->read.get(), kWorkerInFd}, {from->write.get(), kWorkerOutFd}, {log_fd, STDERR_FILENO}};
  spawn.cpu = cpu;
  spawn.own_process_group = true;      // a kill reaches its embedded server too
  spawn.parent_death_signal = SIGKILL;  // never outlives the parent
  spawn.ignore_interrupt = true;        // the parent finishes it on SIGINT
  // Both workers with the same address-space layout: with it randomized, two processes of one build
  // place their heaps, stacks and libraries differently, and an A/A run measured the 350 ns parse floor at
  // 10 records 3.7 % apart. Async-signal-safe; where personality(2) is refused (a seccomp policy) the
  // layout stays random and the run goes on, its A/A then the check of what that costs.
  spawn.pre_exec = [] {
    const int current = ::personality(0xffffffff);
    if (current != -1) (void)::personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE);
    return 0;
  };
  auto child = ChildProcess::spawn(spawn);
  if (!child) return worker.fail_step(child.error(), "start");
  worker.child = std::move(*child);
  worker.to_worker = std::move(to->write);
  worker.from_worker = std::move(from->read);
  worker.channel.emplace(worker.from_worker.get(), worker.to_worker.get(), worker.side + " build's worker", &worker.child);
  return {};
}

// Its "case" lines up to "cases", after its setup and pilots.
Status read_cases(Worker& worker) {
  for (;;) {
    auto line = worker.channel->receive(worker.timeout);
    if (!line) return worker.fail_step(line.error(), "its cases after the pilots");
    if (*line == "cases") return {};
    const std::vector<std::string> f = split_fields(*line);
    uint64_t ops = 0;
    if (f.size() != 4 || f[0] != "case" || std::from_chars(f[2].data(), f[2].data() + f[2].size(), ops).ec != std::errc()) {
      return worker.fail_step(Error{fmt::format("'{}' is not a case line", *line)}, "its cases");
    }
    worker.names.push_back(f[3]);
    worker.piloted.push_back(ops);
  }
}

Status agree(Worker& worker, const std::vector<uint64_t>& ops) {
  std::string line = "ops";
  for (uint64_t o : ops) line += fmt::format("\t{}", o);
  if (auto sent = worker.channel->send(line); !sent) return worker.fail_step(sent.error(), "ops");
  auto ready = worker.channel->receive(worker.timeout);
  if (!ready) return worker.fail_step(ready.error(), "warm-up");
  if (*ready != "ready") return worker.fail_step(Error{fmt::format("'{}' instead of ready", *ready)}, "warm-up");
  return {};
}

struct Measured {
  std::optional<IterationSample> sample;
  std::string failure;
};

Result<Measured> measure(Worker& worker, std::size_t index) {
  if (auto sent = worker.channel->send(fmt::format("measure\t{}", index)); !sent) {
    return std::unexpected(worker.fail_step(sent.error(), "measure").error());
  }
  auto line = worker.channel->receive(worker.timeout);
  if (!line) return std::unexpected(worker.fail_step(line.error(), "a sample").error());
  const std::vector<std::string> f = split_fields(*line);
  if (f.size() >= 3 && f[0] == "failed") return Measured{std::nullopt, f[2]};
  IterationSample sample;
  if (f.size() == 4 && f[0] == "sample") {
    const auto parse = [](const std::string& text, double& into) {
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), into);
      return error == std::errc() && end == text.data() + text.size();
    };
    if (parse(f[2], sample.ns_per_op) && parse(f[3], sample.cpu_ns_per_op)) return Measured{sample, {}};
  }
  return std::unexpected(worker.fail_step(Error{fmt::format("'{}' is not a sample", *line)}, "a sample").error());
}

// "finish", then its report; waits for its exit.
Result<Report> finish(Worker& worker) {
  if (auto sent = worker.channel->send("finish"); !sent) return std::unexpected(worker.fail_step(sent.error(), "finish").error());
  auto line = worker.channel->receive(worker.timeout);
  if (!line) return std::unexpected(worker.fail_step(line.error(), "its report").error());
  const std::vector<std::string> f = split_fields(*line);
  std::size_t bytes = 0;
  if (f.size() != 2 || f[0] != "report" || std::from_chars(f[1].data(), f[1].data() + f[1].size(), bytes).ec != std::errc()) {
    return std::unexpected(worker.fail_step(Error{fmt::format("'{}' instead of its report", *line)}, "its report").error());
  }
  auto text = worker.channel->receive_bytes(bytes, worker.timeout);
  if (!text) return std::unexpected(worker.fail_step(text.error(), "its report").error());
  auto report = parse_report(*text);
  if (!report) return std::unexpected(worker.fail_step(report.error(), "its report").error());
  const auto status = worker.child.wait_for(worker.timeout);
  if (!status) return std::unexpected(worker.fail_step(Error{"still running after its report; killed"}, "exit").error());
  if (!status->success()) return std::unexpected(worker.fail_step(Error{status->describe()}, "exit").error());
  return report;
}

std::string url_of(const Target& target) {
  const bool v6 = target.host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}", v6 ? "[" : "", target.host, v6 ? "]" : "", target.port);
}

// The cases both builds have, in the before build's order, and those only one has.
std::vector<AbCase> pair_cases(const Worker& before, const Worker& after) {
  std::unordered_map<std::string, std::size_t> in_after;
  for (std::size_t i = 0; i < after.names.size(); ++i) in_after[after.names[i]] = i;
  std::vector<AbCase> cases;
  for (std::size_t i = 0; i < before.names.size(); ++i) {
    AbCase c;
    c.name = before.names[i];
    c.before_index = i;
    if (auto found = in_after.find(c.name); found != in_after.end()) {
      c.after_index = found->second;
      in_after.erase(found);
    } else {
      c.reason = "the after build has no such case";
    }
    if (c.reason.empty() && before.piloted[i] == 0) c.reason = "the before build does not measure it (skipped or failed)";
    if (c.reason.empty() && after.piloted[*c.after_index] == 0) c.reason = "the after build does not measure it (skipped or failed)";
    cases.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < after.names.size(); ++i) {
    if (!in_after.contains(after.names[i])) continue;
    AbCase c;
    c.name = after.names[i];
    c.after_index = i;
    c.reason = "the before build has no such case";
    cases.push_back(std::move(c));
  }
  // Names are "STRATEGY PAYLOAD SIZE[ ...]" (runner.hpp's case_name).
  for (AbCase& c : cases) {
    const auto space = c.name.find(' ');
    c.strategy = c.name.substr(0, space);
    const auto size_start = c.name.find(' ', space + 1);
    if (size_start != std::string::npos) {
      std::size_t size = 0;
      const auto* begin = c.name.data() + size_start + 1;
      std::from_chars(begin, c.name.data() + c.name.size(), size);
      c.size = size;
    }
  }
  return cases;
}

// The rounds: every compared case once in each build per round, the pair's first alternating.
Status run_rounds(AbReport& ab, Worker& before, Worker& after, unsigned rounds) {
  std::vector<std::size_t> compared;
  for (std::size_t i = 0; i < ab.cases.size(); ++i) {
    if (ab.cases[i].reason.empty()) compared.push_back(i);
  }
  const auto started = std::chrono::steady_clock::now();
  for (unsigned round = 0; round < rounds; ++round) {
    const std::vector<std::size_t> order = interleave_order(compared.size(), round);
    for (std::size_t position = 0; position < order.size(); ++position) {
      if (g_cancel != 0) {
        ab.partial = true;
        return {};
      }
      AbCase& c = ab.cases[compared[order[position]]];
      if (!c.reason.empty()) continue;  // a build failed it in an earlier round
      // By round and case, not by position: a case's position moves with the rotation, and with an even
      // number of cases its parity would then never change. The second of a pair runs right after the
      // same case in the other build (its code and data warm in the shared caches); alternating gives
      // each build that place in half the rounds.
      const bool after_first = (round + order[position]) % 2 == 1;
      Worker& first = after_first ? after : before;
      Worker& second = after_first ? before : after;
      auto one = measure(first, after_first ? *c.after_index : *c.before_index);
      if (!one) return std::unexpected(one.error());
      auto two = measure(second, after_first ? *c.before_index : *c.after_index);
      if (!two) return std::unexpected(two.error());
      const Measured& b = after_first ? *two : *one;
      const Measured& a = after_first ? *one : *two;
      if (!b.sample || !a.sample) {
        c.reason = !b.sample ? "the before build failed it: " + b.failure : "the after build failed it: " + a.failure;
        continue;
      }
      c.before_ns.push_back(b.sample->ns_per_op);
      c.after_ns.push_back(a.sample->ns_per_op);
      c.before_cpu_ns.push_back(b.sample->cpu_ns_per_op);
      c.after_cpu_ns.push_back(a.sample->cpu_ns_per_op);
      c.after_first.push_back(after_first);
    }
    ab.rounds = round + 1;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cerr << fmt::format("bench: round {} of {} ({} cases in each build), {:.0f} s\n", round + 1, rounds,
                             compared.size(), elapsed);
  }
  return {};
}

std::string slowdown_text(const RunnerOptions& runner) {
  if (runner.slowdown_strategy.empty()) return {};
  return fmt::format("{}:{:g}", runner.slowdown_strategy, runner.slowdown_percent);
}

// The workers' command line: the parent's without what it decides, then the worker's own.
std::vector<std::string> worker_arguments(const RunPlan& plan, int cpu, const std::string& url, bool slowed) {
  std::vector<std::string> out = arguments_without(plan.arguments, kParentOptions);
  const std::string rounds = std::to_string(plan.ab.rounds);
  out.insert(out.end(), {"--iteration-time", fmt::format("{:g}", plan.measurement.runner.iteration_time_ms),
                         "--iterations", rounds, "--max-iterations", rounds, "--ab-worker-in",
                         std::to_string(kWorkerInFd), "--ab-worker-out", std::to_string(kWorkerOutFd)});
  if (cpu >= 0) out.insert(out.end(), {"--cpu", std::to_string(cpu)});
  if (!url.empty()) out.insert(out.end(), {"--url", url});
  // The after build gets the slowdown, the before build the same text with every digit 0: the same code
  // around the op (the wrapper, waiting for nothing) and a command line of the same length. One longer
  // by "--slowdown views:2" moved the initial stack, and with it a 400 ns parse by 4 %.
  if (!plan.measurement.runner.slowdown_strategy.empty()) {
    std::string text = slowdown_text(plan.measurement.runner);
    if (!slowed) {
      for (std::size_t i = text.rfind(':') + 1; i < text.size(); ++i) {
        if (text[i] >= '1' && text[i] <= '9') text[i] = '0';
      }
    }
    out.insert(out.end(), {"--slowdown", text});
  }
  return out;
}

Environment parent_environment(const Placement& placement, const std::string& server) {
  EnvironmentInputs inputs;
  if (auto ring = net::Ring::create(); ring) {
    inputs.io_uring_features = describe_features((*ring)->features());
  } else {
    inputs.io_uring_features = "unavailable: " + ring.error().message();
  }
  inputs.client_cpu = placement.client_cpus.empty() ? -1 : placement.client_cpus.front();
  inputs.server_cpu = placement.server_cpu;
  inputs.server = server;
  inputs.allocator = alloc::detect_allocator().describe();
  return gather_environment(inputs);
}

// The report's files in the run's folder: report.json and report.md (the table and summary).
Result<std::filesystem::path> write_ab_files(const AbReport& ab, const std::filesystem::path& folder) {
  const std::filesystem::path json_path = folder / "report.json";
  if (auto written = write_text_file(json_path, to_json(ab).dump(2) + "\n"); !written) return std::unexpected(written.error());
  const std::string md = render_ab_page(ab, "bench, at the end of the run");
  if (auto written = write_text_file(folder / "report.md", md); !written) return std::unexpected(written.error());
  return json_path;
}

}  // namespace

int run_before_after(const RunPlan& plan, const std::string& executable) {
  const AbPlan& abp = plan.ab;
  auto cases = plan_cases(plan);
  if (!cases) return report_error(cases.error().message);
  PlacementRequest asked{.client_cpus = {}, .client_takes_rest = false, .server_cpu = plan.placement.server_cpu,
                         .embedded = !plan.server.external};
  if (plan.placement.client_cpu) asked.client_cpus = {*plan.placement.client_cpu};
  auto placement = place(asked);
  if (!placement) return report_error(placement.error().message);
  const int client_cpu = placement->client_cpus.empty() ? -1 : placement->client_cpus.front();
  if (auto writable = check_out_root(plan.outputs.out); !writable) return report_error(writable.error().message);
  auto folder = create_results_folder(plan.outputs.out, "-ab", static_cast<long long>(std::time(nullptr)));
  if (!folder) return report_error(folder.error().message);
  install_stop_signals();

  // One server for both builds, unless the change is the server's.
  Testbed bed;
  std::string url;
  if (plan.server.external) {
    if (auto used = bed.use_external_server(plan.server); !used) return report_error(used.error().message, kExitServerFault);
    url = plan.server.external->url;
  } else if (abp.side == CompareSide::client) {
    if (auto started = bed.start_embedded(
            plan, suite_server_options(plan.server, *cases, executable, placement->server_cpu, 2), executable);
        !started) {
      return report_error(started.error().message, kExitServerFault);
    }
    url = url_of(bed.target);
  }

  AbReport ab;
  ab.environment = parent_environment(*placement, url.empty() ? "each build's own embedded server" : bed.target.description);
  ab.config = report_config(plan);
  ab.side = std::string(compare_side_name(abp.side));
  ab.slowdown = slowdown_text(plan.measurement.runner);
  ab.method.noise_band = abp.noise_band;
  ab.method.fail_over = abp.fail_over;

  Worker before;
  Worker after;
  for (auto [worker, side, bench] : {std::tuple{&before, "before", &abp.before}, std::tuple{&after, "after", &abp.after}}) {
    worker->side = side;
    worker->bench = *bench;
    worker->timeout = abp.worker_timeout;
  }
  ab.before.bench = abp.before;
  ab.after.bench = abp.after;
  ab.before.code = abp.before_code;
  ab.after.code = abp.after_code;
  // Each worker's progress and messages go to a log in the run's folder; the console shows the rounds.
  for (Worker* worker : {&before, &after}) {
    const std::filesystem::path log = *folder / (worker->side + ".log");
    net::Fd log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (log_fd.get() < 0) return report_error(base::errno_message("open", log.string(), errno));
    std::cerr << fmt::format("bench: {} build {}: setup and pilots (its log: {})\n", worker->side, worker->bench, log.string());
    const bool slowed = worker == &after && !ab.slowdown.empty();
    if (auto started = start_worker(*worker, worker_arguments(plan, client_cpu, url, slowed), client_cpu, log_fd.get());
        !started) {
      return report_error(started.error().message, kExitFailed);
    }
    // One build pilots at a time: the other is not started yet, or waits for its ops.
    if (auto read = read_cases(*worker); !read) return report_error(read.error().message, kExitFailed);
  }
  ab.cases = pair_cases(before, after);
  std::vector<uint64_t> before_ops(before.names.size(), 0);
  std::vector<uint64_t> after_ops(after.names.size(), 0);
  for (const AbCase& c : ab.cases) {
    if (!c.reason.empty()) continue;
    before_ops[*c.before_index] = before.piloted[*c.before_index];
    after_ops[*c.after_index] = before.piloted[*c.before_index];  // the same count on both sides
  }
  for (auto [worker, ops] : {std::pair{&before, &before_ops}, std::pair{&after, &after_ops}}) {
    std::cerr << fmt::format("bench: {} build: warm-up\n", worker->side);
    if (auto agreed = agree(*worker, *ops); !agreed) return report_error(agreed.error().message, kExitFailed);
  }
  if (auto ran = run_rounds(ab, before, after, abp.rounds); !ran) return report_error(ran.error().message, kExitFailed);
  for (auto [worker, build] : {std::pair{&before, &ab.before}, std::pair{&after, &ab.after}}) {
    auto report = finish(*worker);
    if (!report) return report_error(report.error().message, kExitFailed);
    build->report = std::move(*report);
  }
  for (std::string& warning : bed.stop(nullptr)) ab.environment.warnings.push_back(std::move(warning));
  ab.environment.load_average_end = read_load_average();
  judge(ab);

  std::cout << render_ab_table(ab) << "\n" << render_ab_summary(ab);
  auto written = write_ab_files(ab, *folder);
  if (!written) return report_error(written.error().message);
  std::cout << fmt::format("\nReport: {}\nA results page of it: tools/bench report {}\nThe per-round ratios: tools/plot {}\n",
                           written->string(), written->string(), written->string());
  if (ab.partial) return report_error("interrupted: the report above is partial", interrupted_exit_code());
  if (!over_gate(ab).empty()) return kExitSlower;
  for (const Report* side : {&ab.before.report, &ab.after.report}) {
    if (exit_code_for(side->cases) != 0) return kExitFailed;
  }
  return 0;
}

}  // namespace ringlab::bench::app
