#pragma once
// A log-linear latency histogram in HdrHistogram's layout, for the per-op latency distribution of a
// case (P50, P90, P99, P99.9 and max of the ops whose phase timeline is sampled).
//
// Layout: values are integers (nanoseconds here). Bucket 0 holds 0 .. 2047 one by one; every
// further bucket covers twice the range of the one before with the same 1024 sub-buckets, so any
// recorded value is known to within 1 part in 1024: 3 significant decimal digits, whatever its
// magnitude. Values above `highest_trackable` are counted in the last sub-bucket (and the exact max
// is kept apart), so recording never fails.
//
// Cost: record() is a count-leading-zeros, two shifts and an increment into counts preallocated by
// the constructor; it never allocates and never throws, so it may sit next to a timed region.
// With the default highest trackable value (one hour in ns) the counts take about 270 KB.
//
// Percentiles: value_at_percentile(p) is the highest value equivalent (same sub-bucket) to the
// smallest recorded value with at least p % of the count at or below it, as HdrHistogram reports
// it, capped at the exact max. Its relative error is below 1/1024 of the value.
//
// Ownership and threads: a plain value type owning its counts; not synchronised (one recording
// thread, the runner's; merge afterwards).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

class Histogram {
 public:
  static constexpr uint64_t kOneHourNs = 3'600'000'000'000;

  // Preallocates every bucket up to `highest_trackable` (at least 2048).
  explicit Histogram(uint64_t highest_trackable = kOneHourNs);

  // Counts one value. Allocation-free; values above highest_trackable() land in the last bucket.
  void record(uint64_t value) noexcept { record_n(value, 1); }
  void record_n(uint64_t value, uint64_t count) noexcept;

  // Adds every count of `other` (any highest_trackable: values are re-recorded by bucket).
  void merge(const Histogram& other) noexcept;
  void reset() noexcept;

  [[nodiscard]] uint64_t count() const noexcept { return total_; }
  [[nodiscard]] uint64_t max() const noexcept { return max_; }  // 0 when empty
  [[nodiscard]] uint64_t min() const noexcept { return total_ == 0 ? 0 : min_; }
  [[nodiscard]] uint64_t highest_trackable() const noexcept { return highest_trackable_; }
  // p in [0, 100]; 0 when empty.
  [[nodiscard]] uint64_t value_at_percentile(double percentile) const noexcept;

  // The range of values counted together with `value`: [lowest, highest].
  [[nodiscard]] uint64_t lowest_equivalent(uint64_t value) const noexcept;
  [[nodiscard]] uint64_t highest_equivalent(uint64_t value) const noexcept;

  struct Bucket {
    uint64_t lowest = 0;   // smallest value counted here
    uint64_t highest = 0;  // largest value counted here
    uint64_t count = 0;
  };
  // The non-empty buckets, in increasing order of value.
  [[nodiscard]] std::vector<Bucket> non_empty_buckets() const;

 private:
  [[nodiscard]] std::size_t index_of(uint64_t value) const noexcept;
  [[nodiscard]] uint64_t value_at_index(std::size_t index) const noexcept;

  uint64_t highest_trackable_;
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

// The report's summary of a histogram: the percentiles, max, count and non-empty buckets.
[[nodiscard]] Latency latency_from(const Histogram& histogram);

}  // namespace ringlab::bench
