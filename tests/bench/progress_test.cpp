// Progress: the line text, and what reaches a terminal and a pipe.
#include "ringlab/bench/run/progress.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>

#include "text_checks.hpp"

namespace rb = ringlab::bench;
using ringlab::bench::testing::check_contains;

namespace {

rb::ProgressEvent event(rb::Stage stage, unsigned iteration = 0, unsigned iterations = 0, double ns = 0) {
  return {.case_index = 2, .case_count = 16, .name = "presized weather 100", .stage = stage, .iteration = iteration,
          .iterations = iterations, .ops_per_iteration = 880, .last_sample_ns = ns, .detail = {}};
}

// Everything written to a pipe by `feed` (with `plan`: the lines end with the times elapsed and left).
template <class Feed>
std::string captured(bool tty, Feed feed, std::optional<rb::ProgressPlan> plan = std::nullopt) {
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  {
    rb::FdProgress progress(fds[1], tty, plan);
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
  check_contains(out, {"\r\033[2K[ 3/16] presized weather 100  pilot 1",
                       "\r\033[2K[ 3/16] presized weather 100  measure 2/100",
                       "done: 15 iterations of 880 ops, mean 113.2 μs/op\n"});
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

TEST_CASE("in a pipe, interleaved rounds write one line per case and stage, not one per round") {
  const std::string out = captured(false, [](rb::FdProgress& p) {
    for (std::size_t round = 1; round <= 50; ++round) {
      for (std::size_t index : {2u, 3u}) {
        rb::ProgressEvent e = event(rb::Stage::measure, round, 100, 113'000);
        e.case_index = index;
        p.on_progress(e);
      }
    }
  });
  INFO(out);
  CHECK(std::count(out.begin(), out.end(), '\n') == 2);
}

TEST_CASE("a write the fd refuses drops that line only: the next event is written whole") {
  // Progress is best effort: a failed write must neither stop the run nor hold the line back to
  // write it later, and it must not leave the sink unable to write the next line.
  const rb::ProgressEvent dropped = event(rb::Stage::done, 15, 0, 113'150);
  rb::ProgressEvent next = event(rb::Stage::done, 16, 0, 113'150);
  next.case_index = 3;
  const std::string next_line = rb::progress_line(next) + "\n";
  int fds[2];
  REQUIRE(pipe2(fds, O_NONBLOCK) == 0);
  char buffer[65536];

  SUBCASE("a closed descriptor (EBADF), then a pipe under the same number") {
    // Opened first, so that neither of its ends takes the closed number.
    int again[2];
    REQUIRE(pipe2(again, O_NONBLOCK) == 0);
    const int number = fds[1];
    REQUIRE(close(number) == 0);
    rb::FdProgress progress(number, false);
    progress.on_progress(dropped);
    REQUIRE(dup2(again[1], number) == number);
    close(again[1]);
    progress.on_progress(next);
    progress.finish();
    close(number);
    const ssize_t n = read(again[0], buffer, sizeof buffer);
    REQUIRE(n > 0);
    CHECK(std::string(buffer, static_cast<std::size_t>(n)) == next_line);
    close(again[0]);
  }
  SUBCASE("a full pipe (EAGAIN), then drained") {
    std::size_t filler = 0;
    const std::string block(4096, 'x');
    for (ssize_t n; (n = write(fds[1], block.data(), block.size())) > 0;) filler += static_cast<std::size_t>(n);
    for (ssize_t n; (n = write(fds[1], "x", 1)) > 0;) filler += static_cast<std::size_t>(n);
    REQUIRE(errno == EAGAIN);
    rb::FdProgress progress(fds[1], false);
    progress.on_progress(dropped);
    std::string drained;
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) drained.append(buffer, static_cast<std::size_t>(n));
    // Only the filler: no piece of the refused line.
    CHECK(drained.size() == filler);
    CHECK(drained.find_first_not_of('x') == std::string::npos);
    progress.on_progress(next);
    progress.finish();
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    REQUIRE(n > 0);
    CHECK(std::string(buffer, static_cast<std::size_t>(n)) == next_line);
    close(fds[1]);
  }
  close(fds[0]);
}

namespace {

rb::ProgressEvent at(std::size_t index, std::size_t count, rb::Stage stage, unsigned iteration = 0, uint64_t ops = 0,
                     double ns = 0) {
  return {.case_index = index, .case_count = count, .name = "case", .stage = stage, .iteration = iteration,
          .ops_per_iteration = ops, .last_sample_ns = ns, .detail = {}};
}

}  // namespace

TEST_CASE("durations read as minutes and seconds, hours when there are any") {
  CHECK(rb::duration_text(0) == "0:00");
  CHECK(rb::duration_text(42.4) == "0:42");
  CHECK(rb::duration_text(190) == "3:10");
  CHECK(rb::duration_text(3725) == "1:02:05");
  CHECK(rb::duration_text(-3) == "0:00");
}

TEST_CASE("one after another: the time left is the pilots, warm-ups and iterations still to run at the op time seen") {
  // 3 cases, 2 warm-up and 4 measured iterations each; iterations planned at 100 ms.
  rb::Eta eta(rb::ProgressPlan{100, 2, 4, false});
  CHECK_FALSE(eta.remaining_s().has_value());
  eta.observe(at(0, 3, rb::Stage::setup), 10.0);
  eta.observe(at(0, 3, rb::Stage::pilot, 1, 100), 10.5);
  // Nothing seen yet: 3 pilots of 5 iteration times (0.5 s), 3 × 6 iterations of 0.1 s; at the most,
  // 100 measured iterations each (the plan's default --max-iterations).
  CHECK(*eta.remaining_s() == doctest::Approx(3 * 0.5 + 3 * 6 * 0.1));
  CHECK(*eta.remaining_max_s() == doctest::Approx(3 * 0.5 + 3 * 102 * 0.1));
  eta.observe(at(0, 3, rb::Stage::pilot, 2, 1000), 11.0);
  // The pilot took 1 s; each iteration of case 0 lasts 1000 ops × 200 μs = 0.2 s.
  eta.observe(at(0, 3, rb::Stage::warmup, 1, 1000, 200'000), 11.2);
  CHECK(eta.elapsed_s(11.2) == doctest::Approx(1.2));
  // Case 0: 1 warm-up and 4 iterations at 0.2 s; cases 1 and 2: a 1 s pilot and 6 iterations of 0.1 s.
  CHECK(*eta.remaining_s() == doctest::Approx(5 * 0.2 + 2 * (1.0 + 0.6)));
  eta.observe(at(0, 3, rb::Stage::warmup, 2, 1000, 200'000), 11.4);
  for (unsigned i = 1; i <= 4; ++i) eta.observe(at(0, 3, rb::Stage::measure, i, 1000, 200'000), 11.4 + 0.2 * i);
  eta.observe(at(0, 3, rb::Stage::done, 4, 1000, 200'000), 12.2);
  CHECK(*eta.remaining_s() == doctest::Approx(2 * (1.0 + 0.6)));
  eta.observe(at(1, 3, rb::Stage::skipped), 12.2);
  CHECK(*eta.remaining_s() == doctest::Approx(1.0 + 0.6));
  eta.observe(at(2, 3, rb::Stage::setup), 12.2);
  eta.observe(at(2, 3, rb::Stage::pilot, 1, 50), 12.3);
  eta.observe(at(2, 3, rb::Stage::warmup, 1, 50, 1'000'000), 12.9);
  eta.observe(at(2, 3, rb::Stage::warmup, 2, 50, 1'000'000), 13.0);
  eta.observe(at(2, 3, rb::Stage::measure, 1, 50, 1'000'000), 13.1);
  // 3 iterations of 50 ms left.
  CHECK(*eta.remaining_s() == doctest::Approx(3 * 0.05));
  eta.observe(at(2, 3, rb::Stage::failed), 13.1);
  CHECK(*eta.remaining_s() == doctest::Approx(0.0));
}

TEST_CASE("interleaved: every case is piloted first, rounds are whole, and the estimate shrinks round by round") {
  // 2 cases, 1 warm-up, at least 3 measured iterations: 4 rounds (whole rounds of 2 cases).
  rb::Eta eta(rb::ProgressPlan{100, 1, 3, true});
  eta.observe(at(0, 2, rb::Stage::setup), 0.0);
  eta.observe(at(0, 2, rb::Stage::pilot, 1, 10), 0.4);
  eta.observe(at(1, 2, rb::Stage::setup), 0.4);  // case 0's pilot ended: 0.4 s
  eta.observe(at(1, 2, rb::Stage::pilot, 1, 10), 0.6);
  // Case 0: 1 + 4 iterations of 0.1 s; case 1: its pilot has begun, and counts as not done.
  CHECK(*eta.remaining_s() == doctest::Approx(0.5 + 0.4 + 0.5));
  eta.observe(at(0, 2, rb::Stage::warmup, 1, 10, 20'000'000), 0.8);   // 0.2 s iterations
  eta.observe(at(1, 2, rb::Stage::warmup, 1, 10, 5'000'000), 0.85);   // 0.05 s; case 1's pilot took 0.2 s
  CHECK(*eta.remaining_s() == doctest::Approx(4 * 0.2 + 4 * 0.05));
  eta.observe(at(0, 2, rb::Stage::measure, 1, 10, 20'000'000), 1.05);
  eta.observe(at(1, 2, rb::Stage::measure, 1, 10, 5'000'000), 1.1);
  CHECK(*eta.remaining_s() == doctest::Approx(3 * 0.2 + 3 * 0.05));
  // At most 100 iterations: 100 rounds of 2 cases (whole rounds), 99 of them still to run.
  CHECK(*eta.remaining_max_s() == doctest::Approx(99 * 0.2 + 99 * 0.05));
}

TEST_CASE("interleaved rounds are whole at both ends: the minimum rounded up, the maximum down") {
  rb::Eta eta(rb::ProgressPlan{100, 0, 5, true, 20});  // 3 cases: 6 rounds at least, 18 at most
  eta.observe(at(0, 3, rb::Stage::setup), 0.0);
  eta.observe(at(1, 3, rb::Stage::setup), 0.0);
  eta.observe(at(2, 3, rb::Stage::setup), 0.0);
  for (std::size_t i = 0; i < 3; ++i) eta.observe(at(i, 3, rb::Stage::measure, 1, 1, 100'000'000), 1.0);
  CHECK(*eta.remaining_s() == doctest::Approx(3 * 5 * 0.1));
  CHECK(*eta.remaining_max_s() == doctest::Approx(3 * 17 * 0.1));
}

TEST_CASE("with a plan every line ends with the time elapsed and the time left; without one it does not") {
  const std::string with = captured(false, a_whole_case, rb::ProgressPlan{100, 3, 15, false});
  INFO(with);
  // Case 3 of 16 is in its warm-up: 13 more cases to go, the estimate runs to minutes.
  // Between 15 and 100 measured iterations per case: a range.
  check_contains(with, {"warmup 1/3 (880 ops)  120.0 μs/op  [0:00 elapsed, ", " to ", " left]\n"});
  CHECK(std::count(with.begin(), with.end(), '\n') == 3);
  CHECK(captured(false, a_whole_case).find("elapsed") == std::string::npos);
}
