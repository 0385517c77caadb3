// The command line: defaults, every limit's flag, and refusals with a message and exit code 2.
#include "ringlab/bench/app/cli.hpp"
#include "ringlab/link/spec.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;

namespace {
rb::ParsedCommandLine parse(std::vector<std::string> args) { return rb::parse_command_line(args); }

// The options of a command line bench accepts; the test stops with bench's message where bench refuses it.
rb::CliOptions accepted(std::vector<std::string> args) {
  rb::ParsedCommandLine parsed = parse(std::move(args));
  REQUIRE_MESSAGE(parsed.options.has_value(), parsed.output);
  return std::move(*parsed.options);
}
rb::RunPlan plan_of(std::vector<std::string> args) { return accepted(std::move(args)).plan; }

// A command line bench refuses as the user's error: nothing to run, exit code 2, and a message that
// names `problem`.
void check_refused(const std::vector<std::string>& args, std::string_view problem) {
  const auto parsed = parse(args);
  CHECK_FALSE(parsed.options.has_value());
  CHECK(parsed.exit_code == 2);
  INFO("output: " << parsed.output);
  CHECK(parsed.output.find(problem) != std::string::npos);
}
}  // namespace

TEST_CASE("no arguments: the headline suite with the documented defaults") {
  const rb::RunPlan p = plan_of({});
  CHECK(p.cases.suite->name == "headline");
  CHECK_FALSE(p.cases.seeds);
  CHECK(p.cases.payload == rs::Payload::weather);
  CHECK(p.cases.connection == rs::Connection::pooled);
  CHECK(p.cases.server_mode == rs::ServerMode::cached);
  CHECK(p.cases.clients == std::vector<rs::Client>{rs::Client::pooled});
  CHECK(p.cases.sizes == std::vector<std::size_t>{10, 1000, 10000});
  CHECK(p.cases.filter == "*");
  CHECK(p.cases.ring.buffers == 0);  // each provided-buffer row's own ring
  CHECK(p.cases.ring.buffer_bytes == 0);
  const rb::RunnerOptions& r = p.measurement.runner;
  CHECK(r.iteration_time_ms == 100);
  CHECK(r.warmup == 3);
  CHECK(r.iterations == 15);
  CHECK(r.max_iterations == 100);
  CHECK(r.target_error == doctest::Approx(0.02));
  CHECK(r.memory);
  CHECK(r.phases);
  CHECK(r.interleave);  // paired, order-balanced rounds unless --no-interleave
  CHECK(p.outputs.out == "results");
  CHECK(p.outputs.formats.size() == 3);
  CHECK_FALSE(p.placement.client_cpu.has_value());
  CHECK(p.placement.server_cpu == rb::ServerCpu{});
  CHECK_FALSE(p.server.external.has_value());
  CHECK(p.job.output_fd == -1);
  CHECK_FALSE(p.link.spec.emulated());
  CHECK(p.link.leg == rb::LinkLeg::client);
  // The report's config block says the same, as the report names it.
  const rb::Config c = rb::report_config(p);
  CHECK(c.suite == "headline");
  CHECK(c.payload == "weather");
  CHECK(c.connection == "pooled");
  CHECK(c.server_mode == "cached");
  CHECK(c.client == "pooled");
  CHECK(c.interleave);
  CHECK(c.cpu == -1);
  CHECK(c.server_cpu == "auto");
  CHECK(c.url.empty());
  CHECK(c.link == "loopback");
  CHECK(c.link_leg == "client");
  CHECK(c.formats == std::vector<std::string>{"md", "csv", "json"});
}

TEST_CASE("every option reaches the plan and the report's config") {
  const rb::RunPlan p = plan_of({"repos", "--filter", "pre*,views", "--sizes", "10,20", "--payload", "weather",
                                "--iteration-time", "50", "--warmup", "1", "--iterations", "5", "--max-iterations", "9",
                                "--target-error", "5", "--no-memory", "--no-phases", "--format", "json",
                                "--cpu", "0", "--out", "/tmp/x", "--url", "http://127.0.0.1:8080",
                                "--max-ops-per-iteration", "1000", "--phase-samples", "10",
                                "--request-timeout-ms", "250", "--server-cpu", "none",
                                "--connection", "fresh", "--server-mode", "seed"});
  CHECK(p.cases.suite->name == "repos");
  CHECK(p.cases.filter == "pre*,views");
  CHECK(p.cases.sizes == std::vector<std::size_t>{10, 20});
  CHECK(p.cases.payload == rs::Payload::weather);
  CHECK(p.cases.connection == rs::Connection::fresh);
  CHECK(p.cases.server_mode == rs::ServerMode::seed);
  const rb::RunnerOptions& r = p.measurement.runner;
  CHECK(r.iteration_time_ms == 50);
  CHECK(r.warmup == 1);
  CHECK(r.iterations == 5);
  CHECK(r.max_iterations == 9);
  CHECK(r.target_error == doctest::Approx(0.05));
  CHECK(r.interleave);
  CHECK_FALSE(r.memory);
  CHECK_FALSE(r.phases);
  CHECK(r.max_ops_per_iteration == 1000);
  CHECK(r.phase_samples == 10);
  CHECK(p.outputs.formats == std::vector<rb::Format>{rb::Format::json});
  CHECK(p.placement.client_cpu == 0);
  CHECK(p.outputs.out == "/tmp/x");
  REQUIRE(p.server.external.has_value());
  CHECK(p.server.external->host == "127.0.0.1");
  CHECK(p.server.external->port == 8080);
  CHECK(p.server.request_timeout.count() == 250);
  CHECK(p.placement.server_cpu.choice == rb::ServerCpu::Choice::none);
  CHECK(p.arguments.front() == "repos");
  CHECK(p.arguments.back() == "seed");
  const rb::Config c = rb::report_config(p);
  CHECK(c.suite == "repos");
  CHECK(c.filter == "pre*,views");
  CHECK(c.sizes == std::vector<std::size_t>{10, 20});
  CHECK(c.payload == "weather");
  CHECK(c.connection == "fresh");
  CHECK(c.server_mode == "seed");
  CHECK(c.iteration_time_ms == 50);
  CHECK(c.warmup == 1);
  CHECK(c.iterations == 5);
  CHECK(c.max_iterations == 9);
  CHECK(c.target_error == doctest::Approx(0.05));
  CHECK(c.interleave);
  CHECK_FALSE(c.memory);
  CHECK_FALSE(c.phases);
  CHECK(c.formats == std::vector<std::string>{"json"});
  CHECK(c.cpu == 0);
  CHECK(c.out == "/tmp/x");
  CHECK(c.url == "http://127.0.0.1:8080");
  CHECK(c.server_cpu == "none");
  CHECK(c.arguments == p.arguments);
}

TEST_CASE("--ring-buffers and --ring-buffer-bytes: the provided-buffer rows' ring, field by field") {
  const rb::RunPlan both = plan_of({"get", "--ring-buffers", "16", "--ring-buffer-bytes", "262144"});
  CHECK(both.cases.ring.buffers == 16);
  CHECK(both.cases.ring.buffer_bytes == 262144);
  const rb::Config config = rb::report_config(both);
  CHECK(config.ring_buffers == 16);
  CHECK(config.ring_buffer_bytes == 262144);
  const rb::RunPlan one = plan_of({"get", "--ring-buffers", "32768"});
  CHECK(one.cases.ring.buffers == 32768);
  CHECK(one.cases.ring.buffer_bytes == 0);  // the row's own
}

TEST_CASE("--server-cpu: auto, none or a CPU number, read back as given") {
  for (const char* text : {"auto", "none", "0", "7"}) {
    CHECK(plan_of({"--server-cpu", text}).placement.server_cpu.text() == text);
  }
  CHECK(plan_of({"--server-cpu", "3"}).placement.server_cpu.cpu == 3);
  for (const char* text : {"-1", "1x", "", "auto1"}) {
    INFO(text);
    CHECK_FALSE(rb::ServerCpu::parse(text).has_value());
  }
}

TEST_CASE("--client fresh: a whole client per request, recorded in the config and explained in --help") {
  const rb::RunPlan plan = plan_of({"get", "--client", "fresh", "--sizes", "10"});
  CHECK(plan.cases.clients == std::vector<rs::Client>{rs::Client::fresh});
  CHECK(plan.cases.connection == rs::Connection::pooled);
  CHECK(rb::report_config(plan).client == "fresh");
  const auto help = parse({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("--client") != std::string::npos);
  CHECK(help.output.find("destroys the whole client") != std::string::npos);
}

TEST_CASE("--client pooled,inflight: each case under both clients, in the order given, each at most once") {
  const rb::RunPlan plan = plan_of({"get", "--client", "pooled,inflight", "--sizes", "10"});
  CHECK(plan.cases.clients == std::vector<rs::Client>{rs::Client::pooled, rs::Client::inflight});
  CHECK(rb::report_config(plan).client == "pooled,inflight");
  for (const char* bad : {"pooled,pooled", "pooled,", "inflight,sometimes"}) {
    INFO(bad);
    check_refused({"get", "--client", bad}, "--client");
  }
}

TEST_CASE("bad arguments are refused with exit code 2 and a message naming the problem") {
  struct Row {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Row> rows{
      {{"nosuchsuite"}, "suite"},
      {{"--iterations", "20", "--max-iterations", "10"}, "--max-iterations 10 is below --iterations 20"},
      {{"--sizes", "10,0"}, "--sizes: size '0' is not a positive whole number"},
      {{"--format", "md,xml"}, "--format: unknown report format 'xml'"},
      {{"--payload", "cats"}, "payload"},
      {{"--connection", "reused"}, "--connection"},
      {{"--server-mode", "kestrel"}, "--server-mode"},
      {{"--client", "reused"}, "--client"},
      {{"--client", "Fresh"}, "--client"},
      {{"--client"}, "--client"},
      {{"--iterations", "0"}, "iterations"},
      {{"--target-error", "0"}, "target-error"},
      {{"--allocators", "system,nope"}, "--allocators"},
      {{"--url", "https://example.com"}, "--url"},
      {{"--perf-control", "onlyone"}, "--perf-control"},
      {{"--server-cpu", "fast"}, "--server-cpu: 'fast' is not auto, none or a CPU number"},
      {{"--columns", "p50,p95"}, "--columns: unknown column 'p95' (p50,p90,p99,p999,max)"},
      {{"--no-such-flag"}, "no-such-flag"},
      {{"--interleave"}, "interleave"},
      {{"proxy", "--link-leg", "server", "--link", "wan"}, "--link-leg"},
      {{"--job-output-fd", "3"}, "--job-output-fd needs --job-allocator"},
      {{"seeds", "--sizes", "10"}, "seeds: --sizes does not apply"},
      {{"proxy", "--link-leg", "upstream"}, "--link-leg upstream needs an emulated --link"},
      {{"proxy", "--link-leg", "upstream", "--link", "loopback"}, "--link-leg upstream needs an emulated --link"},
      {{"proxy", "--link-leg", "upstream", "--link", "rate=fast"}, "--link:"},
      {{"get", "--link-leg", "upstream", "--link", "wan"}, "only the proxy suite's server fetches from an upstream"},
      {{"proxy", "--link-leg", "upstream", "--link", "wan", "--url", "http://127.0.0.1:8080"}, "--url"},
      {{"--ring-buffers", "12"}, "--ring-buffers 12 is not a power of two"},
      {{"--ring-buffers", "0"}, "--ring-buffers"},
      {{"--ring-buffers", "65536"}, "--ring-buffers"},
      {{"--ring-buffer-bytes", "0"}, "--ring-buffer-bytes"},
      {{"--ring-buffer-bytes", "67108865"}, "--ring-buffer-bytes"},
      {{"seeds", "--ring-buffers", "16"}, "seeds: --ring-buffers does not apply"},
  };
  for (const Row& row : rows) {
    INFO("args: " << row.args.front() << (row.args.size() > 1 ? " " + row.args[1] : ""));
    check_refused(row.args, row.message);
  }
}

TEST_CASE("--link-leg: client by default, upstream for the proxy suite over an emulated link") {
  const rb::RunPlan plain = plan_of({"proxy", "--link", "wan"});
  CHECK(plain.link.leg == rb::LinkLeg::client);
  CHECK(plain.link.spec.profile == "wan");
  const rb::RunPlan upstream = plan_of({"proxy", "--link-leg", "upstream", "--link", "rate=100mbit,delay=10ms"});
  CHECK(upstream.link.leg == rb::LinkLeg::upstream);
  const rb::Config c = rb::report_config(upstream);
  CHECK(c.link_leg == "upstream");
  CHECK(ringlab::link::parse_link_spec(c.link)->canonical() == upstream.link.spec.canonical());
}

TEST_CASE("--no-interleave runs the cases one after another") {
  const rb::RunPlan plan = plan_of({"--no-interleave"});
  CHECK_FALSE(plan.measurement.runner.interleave);
  CHECK_FALSE(rb::report_config(plan).interleave);
}

TEST_CASE("--help explains every column and exits 0") {
  const auto parsed = parse({"--help"});
  CHECK_FALSE(parsed.options.has_value());
  CHECK(parsed.exit_code == 0);
  for (const char* column : {"Mean", "Error", "StdDev", "Median", "P95", "Ratio", "RatioSD", "Ratio 95% CI", "Allocated", "Allocs/op",
                             "Alloc Ratio", "Page faults/op", "Syscalls/op", "SQEs/op", "CQEs/op", "(ref)",
                             "Warnings", "--iteration-time", "--no-interleave", "--columns", "--version"}) {
    INFO(column);
    CHECK(parsed.output.find(column) != std::string::npos);
  }
}

TEST_CASE("an allocator job's hidden options are accepted") {
  const rb::RunPlan plan = plan_of({"--job-output-fd", "3", "--job-allocator", "mimalloc"});
  CHECK(plan.job.output_fd == 3);
  CHECK(plan.job.allocator == ringlab::bench::alloc::Allocator::mimalloc);
  const auto bad = parse({"--job-output-fd", "3", "--job-allocator", "dlmalloc"});
  CHECK(bad.exit_code == 2);
}

TEST_CASE("--columns selects the extra latency columns and records them in the config") {
  CHECK(plan_of({}).outputs.columns.empty());  // off by default
  const rb::RunPlan plan = plan_of({"--columns", "p50,p99,p999"});
  CHECK(plan.outputs.columns == std::vector<std::string>{"p50", "p99", "p999"});
  CHECK(rb::report_config(plan).columns == plan.outputs.columns);
}

TEST_CASE("--version prints the version and the commit, and exits 0") {
  const auto parsed = parse({"--version"});
  CHECK_FALSE(parsed.options.has_value());
  CHECK(parsed.exit_code == 0);
  CHECK(parsed.output.starts_with("ringlab "));
  CHECK(parsed.output.find("(commit ") != std::string::npos);
}

TEST_CASE("compare is a subcommand: listed in --help, its arguments parsed and checked by the same command line") {
  const auto help = parse({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("Subcommands:") != std::string::npos);
  CHECK(help.output.find("compare") != std::string::npos);

  const rb::CliOptions options =
      accepted({"compare", "old.json", "new.json", "--fail-over", "5", "--alpha", "0.01", "--force"});
  REQUIRE(options.compare.has_value());
  const rb::CompareCommand& c = *options.compare;
  CHECK(c.files == std::vector<std::string>{"old.json", "new.json"});
  CHECK(c.fail_over == 5.0);
  CHECK(c.options.alpha == 0.01);
  CHECK(c.force);
  CHECK_FALSE(accepted({}).compare.has_value());

  const auto sub_help = parse({"compare", "--help"});
  CHECK(sub_help.exit_code == 0);
  CHECK(sub_help.output.find("Usage: bench compare [OPTIONS] files") != std::string::npos);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"compare", "one.json"},
                                              {"compare", "a.json", "b.json", "--alpha", "2"},
                                              {"compare", "a.json", "b.json", "--sizes", "10"}}) {
    INFO(bad.back());
    const auto refused = parse(bad);
    CHECK_FALSE(refused.options.has_value());
    CHECK(refused.exit_code == 2);
    CHECK_FALSE(refused.output.empty());
  }
}

TEST_CASE("the github suite takes its payload from the suite, and --payload github is accepted") {
  const rb::RunPlan suite = plan_of({"github"});
  CHECK(suite.cases.suite->name == "github");
  CHECK(suite.cases.payload == rs::Payload::github);
  CHECK(suite.cases.sizes == std::vector<std::size_t>{10, 100, 1000, 10000});
  CHECK(plan_of({"get", "--payload", "github", "--filter", "three_fields"}).cases.payload == rs::Payload::github);
  CHECK_FALSE(parse({"get", "--payload", "gitlab"}).options.has_value());
}

TEST_CASE("load is a subcommand: its defaults, units, lists and refusals") {
  SUBCASE("defaults: closed loop, 32 connections, 5 s after 1 s, the embedded server's /weather?count=10") {
    const rb::CliOptions options = accepted({"load"});
    REQUIRE(options.load.has_value());
    const rb::LoadCommand& load = *options.load;
    CHECK(load.url.empty());
    CHECK(load.targets == std::vector<std::string>{"/weather?count=10"});
    CHECK(load.spec.connections == 32);
    CHECK(load.spec.rate == 0);
    CHECK(load.spec.duration == std::chrono::seconds(5));
    CHECK(load.spec.warmup == std::chrono::seconds(1));
    CHECK(load.spec.timeout == std::chrono::seconds(10));
    CHECK(load.spec.threads == 1);
    CHECK(load.spec.recv_buffers == 256);
    CHECK(load.spec.recv_buffer_bytes == 16384);
    CHECK(load.spec.cpus.empty());
    CHECK_FALSE(load.cpus_given);
    CHECK(load.rounds == 1);
    CHECK(load.body_strategies.empty());
    CHECK(load.server_threads == 1);
    CHECK(load.server_cpu == rb::ServerCpu{});
    CHECK(load.out == "results");
  }
  SUBCASE("every option arrives, in its unit") {
    const rb::CliOptions options =
        accepted({"load", "--url", "http://127.0.0.1:8080/x?y=1", "--rate", "2500", "--connections", "8", "--duration",
                  "250ms", "--warmup", "0", "--timeout", "1.5", "--threads", "2", "--cpu", "0,2-3", "--recv-buffers",
                  "64", "--recv-buffer-bytes", "4096", "--rounds", "3", "--server-pid", "42", "--label", "nginx",
                  "--format", "json", "--out", "elsewhere"});
    REQUIRE(options.load.has_value());
    const rb::LoadCommand& load = *options.load;
    CHECK(load.spec.host == "127.0.0.1");
    CHECK(load.spec.port == 8080);
    CHECK(load.targets == std::vector<std::string>{"/x?y=1"});
    CHECK(load.spec.rate == 2500);
    CHECK(load.spec.connections == 8);
    CHECK(load.spec.duration == std::chrono::milliseconds(250));
    CHECK(load.spec.warmup == std::chrono::nanoseconds(0));
    CHECK(load.spec.timeout == std::chrono::milliseconds(1500));
    CHECK(load.spec.threads == 2);
    CHECK(load.spec.cpus == std::vector<int>{0, 2, 3});
    CHECK(load.cpus_given);
    CHECK(load.spec.recv_buffers == 64);
    CHECK(load.spec.recv_buffer_bytes == 4096);
    CHECK(load.rounds == 3);
    CHECK(load.spec.server_pid == 42);
    CHECK(load.label == "nginx");
    CHECK(load.formats == std::vector<rb::Format>{rb::Format::json});
    CHECK(load.out == "elsewhere");
  }
  SUBCASE("the embedded server's variants and targets") {
    const rb::CliOptions options = accepted({"load", "--body-strategy", "copy,writev", "--path", "/a,/b?c=1",
                                             "--server-threads", "2", "--server-args", " --inline-body  0 "});
    REQUIRE(options.load.has_value());
    const rb::LoadCommand& load = *options.load;
    CHECK(load.body_strategies == std::vector<std::string>{"copy", "writev"});
    CHECK(load.server_arguments == std::vector<std::string>{"--inline-body", "0"});
    CHECK(load.targets == std::vector<std::string>{"/a", "/b?c=1"});
    CHECK(load.server_threads == 2);
  }
  SUBCASE("refusals, exit code 2, naming the last flag given") {
    // The arguments after "load", each line ending in the refused flag and its value: a value out of
    // range, or one the flags before it rule out (a --body-strategy or --server-args with --url, more
    // threads than --connections).
    const std::vector<std::vector<std::string>> bad = {
        {"--duration", "soon"}, {"--duration", "0"}, {"--warmup", "-1s"}, {"--recv-buffers", "3"},
        {"--recv-buffers", "65536"}, {"--recv-buffer-bytes", "10"}, {"--connections", "2", "--threads", "4"},
        {"--connections", "0"}, {"--rate", "-5"}, {"--cpu", "x"}, {"--cpu", "3-1"}, {"--path", "weather"},
        {"--url", "ftp://x"}, {"--url", "http://127.0.0.1:1", "--body-strategy", "copy"}, {"--server-pid", "42"},
        {"--url", "http://127.0.0.1:1", "--server-args", "--inline-body 0"}, {"--server-cpu", "x"},
        {"--format", "html"},
    };
    for (const std::vector<std::string>& flags : bad) {
      std::vector<std::string> args{"load"};
      args.insert(args.end(), flags.begin(), flags.end());
      CAPTURE(args);
      check_refused(args, flags[flags.size() - 2]);
    }
  }
}

TEST_CASE("the report's config.options holds every option as parsed: given, defaulted, flags, lists") {
  const rb::RunPlan plan = plan_of({"get", "--iterations", "7", "--client", "pooled,inflight", "--no-interleave",
                                    "--request-timeout-ms", "250"});
  const std::map<std::string, std::string>& o = rb::report_config(plan).options;
  const auto value = [&o](const std::string& flag) {
    const auto found = o.find(flag);
    return found == o.end() ? std::string("(absent)") : found->second;
  };
  CHECK(value("--iterations") == "7");
  CHECK(value("--warmup") == "3");  // not given: the default --help shows
  CHECK(value("--client") == "pooled,inflight");
  CHECK(value("--no-interleave") == "true");
  CHECK(value("--counters") == "false");
  CHECK(value("--request-timeout-ms") == "250");
  CHECK(value("--server-start-timeout-ms") == "10000");
  // Options that have no typed key of their own in the config are recorded too.
  CHECK(value("--max-ops-per-iteration") != "(absent)");
  CHECK(value("--phase-samples") != "(absent)");
  // Not recorded: --help, --version and the allocator job's hidden protocol.
  CHECK(value("--help") == "(absent)");
  CHECK(value("--version") == "(absent)");
  CHECK(value("--job-output-fd") == "(absent)");
  CHECK(value("--job-allocator") == "(absent)");
}
