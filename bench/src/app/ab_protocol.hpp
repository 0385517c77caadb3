#pragma once
// The lines a before/after run's parent (ab_command.cpp) and its two workers (ab_worker.cpp) exchange,
// one implementation for both sides. A worker is a bench of one build running the suite with
// --ab-worker-in FD --ab-worker-out FD: its runner's RoundDriver (runner.hpp) reads the parent's commands
// on the first descriptor and writes its answers on the second.
//
//   worker -> parent  "case<TAB>I<TAB>OPS<TAB>NAME" per case after the pilots (OPS 0: not measured), then "cases"
//   parent -> worker  "ops<TAB>O0<TAB>O1..."   the ops per iteration of every case (0: its own pilot's)
//   worker -> parent  "ready"                  the warm-up rounds are done
//   parent -> worker  "measure<TAB>I"          one measured iteration of case I
//   worker -> parent  "sample<TAB>I<TAB>NS<TAB>CPU_NS" or "failed<TAB>I<TAB>REASON"
//   parent -> worker  "finish"                 the measurement is over
//   worker -> parent  "report<TAB>BYTES" and then its report.json, BYTES long
//
// Errors: values naming the peer and the step; a read has a deadline. Threads: the caller's.
// Ownership: a LineChannel borrows its two descriptors; the owner closes them after it.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/process/child_process.hpp"

namespace ringlab::bench::app {

class LineChannel {
 public:
  // `in`: read from; `out`: written to; `peer`: how errors name the other side; `watch`: a child whose
  // exit ends a read (the parent's side), or null.
  LineChannel(int in, int out, std::string peer, const ChildProcess* watch = nullptr)
      : in_(in), out_(out), peer_(std::move(peer)), watch_(watch) {}

  // Writes `line` and a newline, whole.
  Status send(std::string_view line);
  // Writes `bytes` as they are, whole (a report after its "report" line).
  Status send_raw(std::string_view bytes);
  // The next line without its newline, within `timeout`.
  Result<std::string> receive(std::chrono::milliseconds timeout);
  // Exactly `bytes` bytes after the last line, within `timeout`.
  Result<std::string> receive_bytes(std::size_t bytes, std::chrono::milliseconds timeout);

 private:
  Status fill(ProcessClock::time_point deadline, std::string_view waiting_for);

  int in_;
  int out_;
  std::string peer_;
  const ChildProcess* watch_;
  std::string buffer_;
};

// A line's fields, split at tabs.
[[nodiscard]] std::vector<std::string> split_fields(std::string_view line);

}  // namespace ringlab::bench::app
