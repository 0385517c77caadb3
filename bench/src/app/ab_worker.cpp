// A worker of a before/after run: the runner's RoundDriver over the parent's pipes (ab_protocol.hpp).
#include <charconv>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ringlab/bench/process/allocators.hpp"

#include "ab_protocol.hpp"
#include "commands.hpp"

namespace ringlab::bench::app {

namespace {

class WorkerDriver final : public RoundDriver {
 public:
  explicit WorkerDriver(const AbPlan& plan)
      : channel_(plan.worker_in_fd, plan.worker_out_fd, "the parent"), timeout_(plan.worker_timeout) {}

  Result<std::vector<uint64_t>> agree_ops(std::span<const std::string> names, std::span<const uint64_t> piloted) override {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (auto sent = channel_.send(fmt::format("case\t{}\t{}\t{}", i, piloted[i], names[i])); !sent) {
        return std::unexpected(sent.error());
      }
    }
    if (auto sent = channel_.send("cases"); !sent) return std::unexpected(sent.error());
    auto line = channel_.receive(timeout_);
    if (!line) return std::unexpected(line.error());
    const std::vector<std::string> fields = split_fields(*line);
    if (fields.empty() || fields[0] != "ops" || fields.size() != names.size() + 1) {
      return fail(fmt::format("the parent sent '{}' where bench expected the ops of {} cases", *line, names.size()));
    }
    std::vector<uint64_t> ops;
    for (std::size_t i = 1; i < fields.size(); ++i) {
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(fields[i].data(), fields[i].data() + fields[i].size(), value);
      if (error != std::errc() || end != fields[i].data() + fields[i].size()) {
        return fail(fmt::format("the parent sent ops '{}' for case {}", fields[i], i - 1));
      }
      ops.push_back(value);
    }
    return ops;
  }

  Result<std::optional<std::size_t>> next_case() override {
    if (!ready_) {
      if (auto sent = channel_.send("ready"); !sent) return std::unexpected(sent.error());
      ready_ = true;
    }
    auto line = channel_.receive(timeout_);
    if (!line) return std::unexpected(line.error());
    if (*line == "finish") return std::optional<std::size_t>{};
    const std::vector<std::string> fields = split_fields(*line);
    std::size_t index = 0;
    if (fields.size() == 2 && fields[0] == "measure") {
      const auto [end, error] = std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), index);
      if (error == std::errc() && end == fields[1].data() + fields[1].size()) return std::optional<std::size_t>{index};
    }
    return fail(fmt::format("the parent sent '{}' where bench expected measure or finish", *line));
  }

  Status measured(std::size_t index, std::optional<IterationSample> sample, std::string_view failure) override {
    if (sample) return channel_.send(fmt::format("sample\t{}\t{:.17g}\t{:.17g}", index, sample->ns_per_op, sample->cpu_ns_per_op));
    std::string reason(failure);
    for (char& c : reason) {
      if (c == '\t' || c == '\n') c = ' ';
    }
    return channel_.send(fmt::format("failed\t{}\t{}", index, reason));
  }

  Status send_report(const Report& report) {
    const std::string text = to_json(report).dump();
    if (auto sent = channel_.send(fmt::format("report\t{}", text.size())); !sent) return sent;
    // The report's bytes follow the line with no newline of their own.
    return channel_.send_raw(text);
  }

 private:
  LineChannel channel_;
  std::chrono::milliseconds timeout_;
  bool ready_ = false;
};

}  // namespace

int run_worker(const RunPlan& plan, const std::string& executable) {
  auto cases = plan_cases(plan);
  if (!cases) return report_error(cases.error().message);
  WorkerDriver driver(plan.ab);
  auto measured = measure_run(plan, std::move(*cases), executable, alloc::detect_allocator().name(), &driver);
  if (!measured) return report_error(measured.error().message, measured.error().exit_code);
  if (auto sent = driver.send_report(measured->report); !sent) return report_error(sent.error().message, kExitFailed);
  return 0;
}

}  // namespace ringlab::bench::app
