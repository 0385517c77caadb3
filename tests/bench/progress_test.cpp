// Progress: the line text, and what reaches a terminal and a pipe.
#include "ringlab/bench/progress.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace rb = ringlab::bench;

namespace {

rb::ProgressEvent event(rb::Stage stage, unsigned iteration = 0, unsigned iterations = 0, double ns = 0) {
  rb::ProgressEvent e;
  e.case_index = 2;
  e.case_count = 16;
  e.name = "presized weather 100";
  e.stage = stage;
  e.iteration = iteration;
  e.iterations = iterations;
  e.ops_per_iteration = 880;
  e.last_sample_ns = ns;
  return e;
}

// Everything written to a pipe by `feed`.
template <class Feed>
std::string captured(bool tty, Feed feed) {
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  {
    rb::FdProgress progress(fds[1], tty);
    feed(progress);
    progress.finish();
  }
  close(fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  return out;
}

void a_whole_case(rb::FdProgress& p) {
  p.on_progress(event(rb::Stage::setup));
  p.on_progress(event(rb::Stage::pilot, 1));
  p.on_progress(event(rb::Stage::pilot, 2));
  p.on_progress(event(rb::Stage::warmup, 1, 3, 120'000));
  p.on_progress(event(rb::Stage::warmup, 2, 3, 118'000));
  p.on_progress(event(rb::Stage::measure, 1, 100, 113'100));
  p.on_progress(event(rb::Stage::measure, 2, 100, 113'200));
  p.on_progress(event(rb::Stage::done, 15, 0, 113'150));
}

}  // namespace

TEST_CASE("a progress line names the case, its position, the stage and the last per-op time") {
  CHECK(rb::progress_line(event(rb::Stage::measure, 7, 100, 113'100)) ==
        "[ 3/16] presized weather 100  measure 7/100 (880 ops)  113.1 μs/op");
  CHECK(rb::progress_line(event(rb::Stage::pilot, 2)) == "[ 3/16] presized weather 100  pilot 2: 880 ops/iteration");
  CHECK(rb::progress_line(event(rb::Stage::done, 15, 0, 113'150)) ==
        "[ 3/16] presized weather 100  done: 15 iterations of 880 ops, mean 113.2 μs/op");
  auto failed = event(rb::Stage::failed);
  failed.detail = "setup: connect 127.0.0.1:1: Connection refused (ECONNREFUSED)";
  CHECK(rb::progress_line(failed) ==
        "[ 3/16] presized weather 100  failed: setup: connect 127.0.0.1:1: Connection refused (ECONNREFUSED)");
}

TEST_CASE("on a terminal every event redraws one line in place, and a finished case leaves its line") {
  const std::string out = captured(true, a_whole_case);
  CHECK(out.find("\r\033[2K[ 3/16] presized weather 100  pilot 1") != std::string::npos);
  CHECK(out.find("\r\033[2K[ 3/16] presized weather 100  measure 2/100") != std::string::npos);
  CHECK(out.find("done: 15 iterations of 880 ops, mean 113.2 μs/op\n") != std::string::npos);
  // Only the finished case ends a line.
  CHECK(std::count(out.begin(), out.end(), '\n') == 1);
}

TEST_CASE("in a pipe only the lines worth keeping are written, one per line, without control codes") {
  const std::string out = captured(false, a_whole_case);
  CHECK(out ==
        "[ 3/16] presized weather 100  warmup 1/3 (880 ops)  120.0 μs/op\n"
        "[ 3/16] presized weather 100  measure 1/100 (880 ops)  113.1 μs/op\n"
        "[ 3/16] presized weather 100  done: 15 iterations of 880 ops, mean 113.2 μs/op\n");
  CHECK(out.find('\033') == std::string::npos);
}

TEST_CASE("a closed progress fd does not stop anything") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  close(fds[0]);
  close(fds[1]);
  rb::FdProgress progress(fds[1], false);
  progress.on_progress(event(rb::Stage::done, 15, 0, 1));
  progress.finish();
  CHECK(true);  // reaching here is the behaviour: no throw, no signal (EBADF)
}
