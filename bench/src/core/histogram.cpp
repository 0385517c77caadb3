#include "ringlab/bench/core/histogram.hpp"

#include <algorithm>
#include <bit>

namespace ringlab::bench {
namespace {

// 2048 sub-buckets: the smallest power of two above 2 * 10^3, the count that keeps 3 significant
// digits (HdrHistogram's sub_bucket_count for significant_figures = 3, unit magnitude 0).
constexpr unsigned kSubBucketMagnitude = 11;
constexpr uint64_t kSubBucketCount = uint64_t{1} << kSubBucketMagnitude;
constexpr unsigned kSubBucketHalfMagnitude = kSubBucketMagnitude - 1;
constexpr uint64_t kSubBucketHalfCount = kSubBucketCount / 2;
constexpr uint64_t kSubBucketMask = kSubBucketCount - 1;

// Bucket b holds values v with v >> b in [1024, 2048) (bucket 0: every v below 2048).
unsigned bucket_of(uint64_t value) noexcept {
  return static_cast<unsigned>(64 - std::countl_zero(value | kSubBucketMask)) - kSubBucketMagnitude;
}

std::size_t bucket_count_for(uint64_t highest_trackable) noexcept {
  std::size_t buckets = 1;
  uint64_t smallest_untrackable = kSubBucketCount;
  while (smallest_untrackable <= highest_trackable) {
    if (smallest_untrackable > (UINT64_MAX >> 1)) return buckets + 1;
    smallest_untrackable <<= 1;
    ++buckets;
  }
  return buckets;
}

}  // namespace

Histogram::Histogram(uint64_t highest_trackable)
    : highest_trackable_(std::max(highest_trackable, kSubBucketCount)),
      counts_((bucket_count_for(highest_trackable_) + 1) * kSubBucketHalfCount, 0) {}

std::size_t Histogram::index_of(uint64_t value) const noexcept {
  const unsigned bucket = bucket_of(value);
  const uint64_t sub_bucket = value >> bucket;
  const uint64_t index = (uint64_t{bucket + 1} << kSubBucketHalfMagnitude) + (sub_bucket - kSubBucketHalfCount);
  return static_cast<std::size_t>(std::min<uint64_t>(index, counts_.size() - 1));
}

uint64_t Histogram::value_at_index(std::size_t index) const noexcept {
  long bucket = static_cast<long>(index >> kSubBucketHalfMagnitude) - 1;
  uint64_t sub_bucket = (index & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (bucket < 0) {
    sub_bucket -= kSubBucketHalfCount;
    bucket = 0;
  }
  return sub_bucket << bucket;
}

uint64_t Histogram::lowest_equivalent(uint64_t value) const noexcept {
  const unsigned bucket = bucket_of(value);
  return (value >> bucket) << bucket;
}

uint64_t Histogram::highest_equivalent(uint64_t value) const noexcept {
  const unsigned bucket = bucket_of(value);
  const uint64_t lowest = (value >> bucket) << bucket;
  const uint64_t width = uint64_t{1} << bucket;
  return lowest > UINT64_MAX - (width - 1) ? UINT64_MAX : lowest + (width - 1);
}

void Histogram::record_n(uint64_t value, uint64_t count) noexcept {
  if (count == 0) return;
  counts_[index_of(value)] += count;
  total_ += count;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void Histogram::merge(const Histogram& other) noexcept {
  if (other.total_ == 0) return;
  for (std::size_t i = 0; i < other.counts_.size(); ++i) {
    if (other.counts_[i] != 0) counts_[index_of(other.value_at_index(i))] += other.counts_[i];
  }
  total_ += other.total_;
  // The exact extremes travel with the histogram; bucket values would round them.
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

uint64_t Histogram::value_at_percentile(double percentile) const noexcept {
  if (total_ == 0) return 0;
  const double p = std::clamp(percentile, 0.0, 100.0);
  const auto wanted = std::max<uint64_t>(1, static_cast<uint64_t>(p / 100.0 * static_cast<double>(total_) + 0.5));
  uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= wanted) return std::min(highest_equivalent(value_at_index(i)), max_);
  }
  return max_;
}

std::vector<Histogram::Bucket> Histogram::non_empty_buckets() const {
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const uint64_t value = value_at_index(i);
    // The last sub-bucket also holds what was above highest_trackable: its top is the max.
    const uint64_t highest = i + 1 == counts_.size() ? std::max(highest_equivalent(value), max_) : highest_equivalent(value);
    out.push_back({value, highest, counts_[i]});
  }
  return out;
}

Latency latency_from(const Histogram& histogram) {
  Latency latency;
  latency.count = histogram.count();
  if (latency.count == 0) return latency;
  latency.p50 = static_cast<double>(histogram.value_at_percentile(50));
  latency.p90 = static_cast<double>(histogram.value_at_percentile(90));
  latency.p99 = static_cast<double>(histogram.value_at_percentile(99));
  latency.p999 = static_cast<double>(histogram.value_at_percentile(99.9));
  latency.max = static_cast<double>(histogram.max());
  for (const Histogram::Bucket& b : histogram.non_empty_buckets()) {
    latency.buckets.push_back({b.lowest, b.highest, b.count});
  }
  return latency;
}

}  // namespace ringlab::bench
