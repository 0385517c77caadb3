#pragma once
// Progress on stderr while cases run: "[ 3/16] presized weather 100  measure 7/100  113.1 μs/op".
//
// On a terminal the line is redrawn in place ("\r" + erase line) at every event, and a finished case
// leaves one permanent line with its mean or its failure. Elsewhere (a pipe, a log file) only the
// events worth a line are written, one per line: the ops the pilot settled on, the start of the
// measurement, and the end of each case (done, skipped, failed). Writes go straight to the fd, not
// through a stdio buffer, so they interleave correctly with the server's stderr.
//
// Given the run's plan, every line also says the time since the first event and an estimate of the
// time left ("  0:42 elapsed, about 3:10 left"): see Eta.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/bench/run/runner.hpp"

namespace ringlab::bench {

// The text of one event without any terminal control ("[ 3/16] presized weather 100  measure 7/100  113.1 μs/op").
[[nodiscard]] std::string progress_line(const ProgressEvent& event);

// What the runner was asked to do: the part of RunnerOptions the estimate of the time left needs.
struct ProgressPlan {
  double iteration_time_ms = 100;  // the pilot's goal: an iteration lasts at least this long
  unsigned warmup = 3;
  unsigned iterations = 15;  // measured iterations before the adaptive stop may end a case
  bool interleave = true;    // measured rounds are then a multiple of the number of cases
  unsigned max_iterations = 100;  // measured iterations at most
};
[[nodiscard]] ProgressPlan progress_plan(const RunnerOptions& options) noexcept;

// The estimate of the time left, from the events alone (no clock of its own: the caller says when
// each event happened, in seconds from any origin, so that it can be tested exactly).
//
// The model: each case still has its pilot (unless it has begun warming up), its warm-up iterations
// and its measured iterations to run. A case's iteration lasts ops per iteration × the per-op time
// of its last warm-up or measured iteration; before it has one, the plan's iteration time (the
// pilot's goal). A pilot lasts as long as the pilots seen so far did on average (5 iteration times
// before any is seen). A case runs as many measured iterations as the finished cases did on average
// (the plan's minimum, rounded up to whole rounds when interleaved, before any has finished); a
// case that already ran more is given one more. Skipped and failed cases have nothing left. The
// sum is the same whatever the order, so it holds for interleaved rounds too. The adaptive stop ends
// a case anywhere between the minimum and the maximum of measured iterations, so there are two
// estimates: remaining_s() at the fewest the finished cases suggest, remaining_max_s() at the most
// allowed (--max-iterations; whole rounds when interleaved). A slowing server makes both wrong by the
// factor it changes the op time by.
class Eta {
 public:
  explicit Eta(ProgressPlan plan) : plan_(plan) {}
  void observe(const ProgressEvent& event, double now_s);
  // Seconds left after the events observed, at the expected and at the largest number of measured
  // iterations; nullopt before the first event.
  [[nodiscard]] std::optional<double> remaining_s() const;
  [[nodiscard]] std::optional<double> remaining_max_s() const;
  // Seconds since the first event (0 before it).
  [[nodiscard]] double elapsed_s(double now_s) const noexcept { return started_ ? now_s - start_s_ : 0.0; }

 private:
  struct Case {
    bool begun = false;      // an event of this case was seen
    bool piloted = false;    // warm-up or measurement reached
    bool finished = false;   // done, skipped or failed
    double first_event_s = 0;
    double last_pilot_s = 0;
    unsigned warmed = 0;
    unsigned measured = 0;
    double iteration_ns = 0;  // 0: not known yet
  };
  void end_pilot(Case& c);
  [[nodiscard]] double remaining_with(double expected_measured) const;

  ProgressPlan plan_;
  std::vector<Case> cases_;
  bool started_ = false;
  double start_s_ = 0;
  double pilot_total_s_ = 0;
  std::size_t pilots_ = 0;
  double measured_total_ = 0;
  std::size_t measured_cases_ = 0;
};

// "0:42", "3:10", "1:02:05".
[[nodiscard]] std::string duration_text(double seconds);

class FdProgress final : public ProgressSink {
 public:
  // `tty`: redraw in place; by default whether `fd` is a terminal. With a `plan`, every line ends
  // with the time elapsed and an estimate of the time left.
  explicit FdProgress(int fd = 2, std::optional<bool> tty = std::nullopt, std::optional<ProgressPlan> plan = std::nullopt);
  void on_progress(const ProgressEvent& event) override;
  // Ends a redrawn line so that what follows starts on a clean one.
  void finish();

 private:
  void write_all(const std::string& text);

  int fd_;
  bool tty_;
  std::optional<Eta> eta_;
  std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
  bool line_open_ = false;
  // In a pipe: the stage each case was last seen in. Interleaved rounds visit every case in turn, so
  // "a new stage" is a case's own change of stage, not a change of the case the event is about.
  std::vector<std::optional<Stage>> stages_;
};

}  // namespace ringlab::bench
