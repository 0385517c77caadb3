#include "ringlab/bench/run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include "ringlab/bench/core/statistics.hpp"
#include "ringlab/bench/core/table.hpp"

namespace ringlab::bench {
namespace {

std::string time_text(double ns) {
  const std::vector<double> one{ns};
  const Unit unit = time_unit_for(one);
  const std::vector<double> scaled{ns / unit.scale};
  return format_number(ns / unit.scale, decimals_for(scaled)) + " " + std::string(unit.name);
}

int digits(std::size_t n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

}  // namespace

std::string progress_line(const ProgressEvent& e) {
  std::string out = fmt::format("[{:>{}}/{}] {}  {}", e.case_index + 1, digits(e.case_count), e.case_count, e.name,
                                stage_name(e.stage));
  switch (e.stage) {
    case Stage::pilot:
      out += fmt::format(" {}: {} op{}/iteration", e.iteration, e.ops_per_iteration,
                         e.ops_per_iteration == 1 ? "" : "s");
      break;
    case Stage::warmup:
    case Stage::measure:
      out += e.iterations > 0 ? fmt::format(" {}/{}", e.iteration, e.iterations) : fmt::format(" {}", e.iteration);
      out += fmt::format(" ({} ops)", e.ops_per_iteration);
      if (e.last_sample_ns > 0) out += "  " + time_text(e.last_sample_ns) + "/op";
      break;
    case Stage::done:
      out += fmt::format(": {} iterations of {} ops, mean {}/op", e.iteration, e.ops_per_iteration,
                         time_text(e.last_sample_ns));
      break;
    case Stage::skipped:
    case Stage::failed:
      out += fmt::format(": {}", e.detail);
      break;
    case Stage::setup:
      break;
  }
  return out;
}

ProgressPlan progress_plan(const RunnerOptions& options) noexcept {
  return ProgressPlan{options.iteration_time_ms, options.warmup, options.iterations, options.interleave,
                      options.max_iterations};
}

std::string duration_text(double seconds) {
  const auto total = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  const long long hours = total / 3600;
  const long long minutes = total / 60 % 60;
  const long long secs = total % 60;
  return hours > 0 ? fmt::format("{}:{:02}:{:02}", hours, minutes, secs) : fmt::format("{}:{:02}", minutes, secs);
}

void Eta::end_pilot(Case& c) {
  if (c.piloted) return;
  c.piloted = true;
  pilot_total_s_ += std::max(0.0, c.last_pilot_s - c.first_event_s);
  ++pilots_;
}

void Eta::observe(const ProgressEvent& e, double now_s) {
  if (!started_) {
    started_ = true;
    start_s_ = now_s;
  }
  if (cases_.size() < e.case_count) cases_.resize(e.case_count);
  if (e.case_index >= cases_.size()) return;
  Case& c = cases_[e.case_index];
  if (!c.begun) {
    c.begun = true;
    c.first_event_s = now_s;
    c.last_pilot_s = now_s;
  }
  // Interleaved runs pilot every case before warming any up: a case's pilot has ended when the next
  // case begins.
  if (e.case_index > 0 && !cases_[e.case_index - 1].piloted && cases_[e.case_index - 1].begun &&
      (e.stage == Stage::setup || e.stage == Stage::pilot)) {
    end_pilot(cases_[e.case_index - 1]);
  }
  const auto iteration_ns = [&e] { return e.last_sample_ns * static_cast<double>(e.ops_per_iteration); };
  switch (e.stage) {
    case Stage::setup:
      break;
    case Stage::pilot:
      c.last_pilot_s = now_s;
      break;
    case Stage::warmup:
      end_pilot(c);
      c.warmed = std::max(c.warmed, e.iteration);
      if (e.last_sample_ns > 0) c.iteration_ns = iteration_ns();
      break;
    case Stage::measure:
      end_pilot(c);
      c.warmed = plan_.warmup;
      c.measured = std::max(c.measured, e.iteration);
      if (e.last_sample_ns > 0) c.iteration_ns = iteration_ns();
      break;
    case Stage::done:
      end_pilot(c);
      if (!c.finished) {
        measured_total_ += e.iteration;
        ++measured_cases_;
      }
      c.finished = true;
      break;
    case Stage::skipped:
    case Stage::failed:
      c.finished = true;
      break;
  }
}

std::optional<double> Eta::remaining_s() const {
  if (!started_) return std::nullopt;
  double expected = std::max(1u, plan_.iterations);
  if (plan_.interleave && !cases_.empty()) {
    const double n = static_cast<double>(cases_.size());
    expected = std::ceil(expected / n) * n;
  }
  if (measured_cases_ > 0) expected = measured_total_ / static_cast<double>(measured_cases_);
  return remaining_with(expected);
}

std::optional<double> Eta::remaining_max_s() const {
  if (!started_) return std::nullopt;
  const double at_least = std::max(1u, plan_.iterations);
  double most = std::max<double>(at_least, plan_.max_iterations);
  if (plan_.interleave && !cases_.empty()) {
    // The runner's rounds: the minimum rounded up to whole rounds, the maximum rounded down.
    const double n = static_cast<double>(cases_.size());
    most = std::max(std::ceil(at_least / n) * n, std::floor(most / n) * n);
  }
  return remaining_with(most);
}

double Eta::remaining_with(double expected) const {
  const double default_iteration_ns = plan_.iteration_time_ms * 1e6;
  const double pilot_s = pilots_ > 0 ? pilot_total_s_ / static_cast<double>(pilots_) : 5 * default_iteration_ns / 1e9;
  double left_s = 0;
  for (const Case& c : cases_) {
    if (c.finished) continue;
    const double iteration_s = (c.iteration_ns > 0 ? c.iteration_ns : default_iteration_ns) / 1e9;
    if (!c.piloted) left_s += pilot_s;
    left_s += static_cast<double>(plan_.warmup - std::min(plan_.warmup, c.warmed)) * iteration_s;
    const double measured = static_cast<double>(c.measured);
    left_s += (measured < expected ? expected - measured : 1.0) * iteration_s;
  }
  return left_s;
}

FdProgress::FdProgress(int fd, std::optional<bool> tty, std::optional<ProgressPlan> plan)
    : fd_(fd), tty_(tty.value_or(::isatty(fd) == 1)) {
  if (plan) eta_.emplace(*plan);
}

void FdProgress::write_all(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // progress is best effort: a closed stderr must not stop the run
    done += static_cast<std::size_t>(n);
  }
}

void FdProgress::on_progress(const ProgressEvent& e) {
  const bool final = e.stage == Stage::done || e.stage == Stage::skipped || e.stage == Stage::failed;
  std::string line = progress_line(e);
  if (eta_) {
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
    eta_->observe(e, now);
    const std::optional<double> left = eta_->remaining_s();
    const std::optional<double> most = eta_->remaining_max_s();
    line += fmt::format("  [{} elapsed", duration_text(eta_->elapsed_s(now)));
    if (left && most && duration_text(*most) != duration_text(*left)) {
      // The adaptive stop decides between the two: say both rather than a number that may be 5x off.
      line += fmt::format(", {} to {} left]", duration_text(*left), duration_text(*most));
    } else {
      line += left && *left >= 0.5 ? fmt::format(", about {} left]", duration_text(*left)) : std::string("]");
    }
  }
  if (tty_) {
    write_all("\r\033[2K" + line + (final ? "\n" : ""));
    line_open_ = !final;
  } else {
    if (stages_.size() <= e.case_index) stages_.resize(e.case_index + 1);
    const bool new_stage = stages_[e.case_index] != e.stage;
    stages_[e.case_index] = e.stage;
    // The pilot's last line says the ops it settled on; print it when the warm-up begins.
    const bool worth = final || (new_stage && (e.stage == Stage::measure || e.stage == Stage::warmup));
    if (worth) write_all(line + "\n");
  }
}

void FdProgress::finish() {
  if (tty_ && line_open_) write_all("\r\033[2K");
  line_open_ = false;
}

}  // namespace ringlab::bench
