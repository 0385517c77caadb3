#include "ringlab/bench/progress.hpp"

#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>
#include <vector>

#include "ringlab/bench/reporters.hpp"
#include "ringlab/bench/statistics.hpp"

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

FdProgress::FdProgress(int fd, std::optional<bool> tty) : fd_(fd), tty_(tty.value_or(::isatty(fd) == 1)) {}

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
  const std::string line = progress_line(e);
  if (tty_) {
    write_all("\r\033[2K" + line + (final ? "\n" : ""));
    line_open_ = !final;
  } else {
    const bool new_stage = e.case_index != last_case_ || e.stage != last_stage_;
    // The pilot's last line says the ops it settled on; print it when the warm-up begins.
    const bool worth = final || (new_stage && (e.stage == Stage::measure || e.stage == Stage::warmup));
    if (worth) write_all(line + "\n");
  }
  last_case_ = e.case_index;
  last_stage_ = e.stage;
}

void FdProgress::finish() {
  if (tty_ && line_open_) write_all("\r\033[2K");
  line_open_ = false;
}

}  // namespace ringlab::bench
