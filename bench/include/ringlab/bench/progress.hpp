#pragma once
// Progress on stderr while cases run: "[ 3/16] presized weather 100  measure 7/100  113.1 μs/op".
//
// On a terminal the line is redrawn in place ("\r" + erase line) at every event, and a finished case
// leaves one permanent line with its mean or its failure. Elsewhere (a pipe, a log file) only the
// events worth a line are written, one per line: the ops the pilot settled on, the start of the
// measurement, and the end of each case (done, skipped, failed). Writes go straight to the fd, not
// through a stdio buffer, so they interleave correctly with the server's stderr.
#include <optional>
#include <string>

#include "ringlab/bench/runner.hpp"

namespace ringlab::bench {

// The text of one event without any terminal control ("[ 3/16] presized weather 100  measure 7/100  113.1 μs/op").
[[nodiscard]] std::string progress_line(const ProgressEvent& event);

class FdProgress final : public ProgressSink {
 public:
  // `tty`: redraw in place; by default whether `fd` is a terminal.
  explicit FdProgress(int fd = 2, std::optional<bool> tty = std::nullopt);
  void on_progress(const ProgressEvent& event) override;
  // Ends a redrawn line so that what follows starts on a clean one.
  void finish();

 private:
  void write_all(const std::string& text);

  int fd_;
  bool tty_;
  bool line_open_ = false;
  Stage last_stage_ = Stage::done;
  std::size_t last_case_ = static_cast<std::size_t>(-1);
};

}  // namespace ringlab::bench
