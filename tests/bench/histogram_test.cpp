// The log-linear histogram against distributions whose percentiles are known exactly.
#include "ringlab/bench/core/histogram.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace rb = ringlab::bench;

namespace {

// |reported - exact| within the 3-significant-digit bucket width (1/1024 of the value, or 1 below 2048).
bool within_precision(uint64_t reported, uint64_t exact) {
  const uint64_t difference = reported > exact ? reported - exact : exact - reported;
  return difference <= (exact < 2048 ? 0 : exact / 1024 + 1);
}

}  // namespace

TEST_CASE("an empty histogram reports zeros") {
  const rb::Histogram h;
  CHECK(h.count() == 0);
  CHECK(h.max() == 0);
  CHECK(h.value_at_percentile(50) == 0);
  CHECK(h.non_empty_buckets().empty());
  CHECK(rb::latency_from(h).count == 0);
}

TEST_CASE("values below 2048 are counted exactly") {
  rb::Histogram h;
  for (uint64_t v = 1; v <= 1000; ++v) h.record(v);
  CHECK(h.count() == 1000);
  CHECK(h.value_at_percentile(50) == 500);
  CHECK(h.value_at_percentile(90) == 900);
  CHECK(h.value_at_percentile(99) == 990);
  CHECK(h.value_at_percentile(99.9) == 999);
  CHECK(h.value_at_percentile(100) == 1000);
  CHECK(h.min() == 1);
  CHECK(h.max() == 1000);
}

TEST_CASE("percentiles of a uniform distribution over six decades stay within 3 significant digits") {
  // 1, 2, ..., 1,000,000 scaled by 1000: values 1 µs .. 1 s in ns. The exact p-th percentile of
  // k * 1000 for k = 1..n is ceil(p/100 * n) * 1000.
  rb::Histogram h;
  constexpr uint64_t n = 1'000'000;
  for (uint64_t k = 1; k <= n; ++k) h.record(k * 1000);
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    const auto exact = static_cast<uint64_t>(p / 100 * n + 0.5) * 1000;
    const uint64_t reported = h.value_at_percentile(p);
    INFO("p = " << p << ", exact " << exact << ", reported " << reported);
    CHECK(within_precision(reported, exact));
    CHECK(reported >= exact);  // the highest equivalent value, never below
  }
  CHECK(h.max() == n * 1000);
  CHECK(h.value_at_percentile(100) == n * 1000);
}

TEST_CASE("equivalent ranges are 1/1024 of the value wide") {
  const rb::Histogram h;
  CHECK(h.lowest_equivalent(2047) == 2047);
  CHECK(h.highest_equivalent(2047) == 2047);
  CHECK(h.lowest_equivalent(2048) == 2048);
  CHECK(h.highest_equivalent(2048) == 2049);
  CHECK(h.lowest_equivalent(1'000'000) == 999'936);  // in [2^19, 2^20) the width is 2^9
  CHECK(h.highest_equivalent(1'000'000) - h.lowest_equivalent(1'000'000) + 1 == 512);
}

TEST_CASE("a value above the highest trackable is counted in the last bucket and keeps the exact max") {
  rb::Histogram h(1'000'000);
  h.record(5);
  h.record(10'000'000'000);
  CHECK(h.count() == 2);
  CHECK(h.max() == 10'000'000'000);
  CHECK(h.value_at_percentile(100) <= 10'000'000'000);
  const auto buckets = h.non_empty_buckets();
  REQUIRE(buckets.size() == 2);
  CHECK(buckets.back().highest == 10'000'000'000);
}

TEST_CASE("merge adds counts and keeps the exact extremes, across layouts") {
  rb::Histogram a;
  rb::Histogram b(1'000'000'000);
  for (uint64_t v = 1; v <= 500; ++v) a.record(v * 1000);
  for (uint64_t v = 501; v <= 1000; ++v) b.record(v * 1000 + 7);
  a.merge(b);
  CHECK(a.count() == 1000);
  CHECK(a.max() == 1'000'007);
  CHECK(a.min() == 1000);
  CHECK(within_precision(a.value_at_percentile(50), 500'000));
  CHECK(within_precision(a.value_at_percentile(90), 900'007));
}

TEST_CASE("latency_from summarises percentiles, max and the non-empty buckets") {
  rb::Histogram h;
  h.record_n(100, 90);
  h.record_n(10'000, 9);
  h.record(1'000'000);
  const rb::Latency l = rb::latency_from(h);
  CHECK(l.count == 100);
  CHECK(l.p50 == 100);
  CHECK(l.p90 == 100);
  CHECK(within_precision(static_cast<uint64_t>(l.p99), 10'000));
  CHECK(l.p999 == 1'000'000);
  CHECK(l.max == 1'000'000);
  REQUIRE(l.buckets.size() == 3);
  CHECK(l.buckets[0].lowest_ns == 100);
  CHECK(l.buckets[0].count == 90);
  CHECK(l.buckets[2].count == 1);
  CHECK(l.buckets[2].lowest_ns <= 1'000'000);
  CHECK(l.buckets[2].highest_ns >= 1'000'000);
}

TEST_CASE("reset empties the histogram and keeps its buckets") {
  rb::Histogram h;
  h.record(42);
  h.reset();
  CHECK(h.count() == 0);
  CHECK(h.max() == 0);
  h.record(7);
  CHECK(h.value_at_percentile(50) == 7);
}
