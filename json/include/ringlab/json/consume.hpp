#pragma once
// Consumption: what a benchmark's consumer does with the records it was handed, inside the clock.
//
// Every strategy folds the records it deserialized through the same Consumer, so the work after the
// parse is identical whatever the strategy, and cheap next to the parse: per record a few integer
// fields and the lengths of a few strings (no string bytes are read). Its only job is to make the
// records observable, so that the parse cannot be optimised away and a strategy cannot skip building
// them; it proves nothing about their content. Content is proved by the full checksum (checksum.hpp),
// which bench computes with the clock stopped on sampled ops.
//
// The value depends on the form: a view's string length is its raw (escaped) length, an owning
// string's its decoded length. Compare values only between runs of the same strategy.
//
// Threads: plain value type; no shared state.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::json {

class Consumer {
 public:
  void add(const WeatherForecast& record) noexcept {
    put(static_cast<uint64_t>(record.temperature_c) + record.summary.size() + record.date.size());
  }
  void add(const WeatherView& record) noexcept {
    put(static_cast<uint64_t>(record.temperature_c) + record.summary.raw.size() + record.date.raw.size());
  }
  void add(const Repository& record) noexcept {
    put(static_cast<uint64_t>(record.id) + static_cast<uint64_t>(record.stargazers_count) + record.name.size() +
        record.topics.size());
  }
  void add(const RepositoryView& record) noexcept {
    put(static_cast<uint64_t>(record.id) + static_cast<uint64_t>(record.stargazers_count) + record.name.raw.size() +
        record.topics.size());
  }

  void add(const GithubRepository& record) noexcept {
    put(static_cast<uint64_t>(record.id) + static_cast<uint64_t>(record.stargazers_count) + record.name.size() +
        record.url.size());
  }
  void add(const GithubRepositoryView& record) noexcept {
    put(static_cast<uint64_t>(record.id) + static_cast<uint64_t>(record.stargazers_count) + record.name.raw.size() +
        record.url.raw.size());
  }
  // jos's Version 8 class holds only these three: its fold is what the others' would be without the id.
  void add(const GithubStars& record) noexcept {
    put(static_cast<uint64_t>(record.stars) + record.name.size() + record.url.size());
  }
  void add(const GithubStarsView& record) noexcept {
    put(static_cast<uint64_t>(record.stars) + record.name.raw.size() + record.url.raw.size());
  }

  // jos's DTO (every jos Version's): the same three as GithubStars.
  void add(const ProfileStars& record) noexcept {
    put(static_cast<uint64_t>(record.stars) + record.name.size() + record.url.size());
  }
  void add(const ProfileStarsView& record) noexcept {
    put(static_cast<uint64_t>(record.stars) + record.name.raw.size() + record.url.raw.size());
  }

  [[nodiscard]] uint64_t value() const noexcept { return state_ ^ records_; }
  [[nodiscard]] std::size_t records() const noexcept { return records_; }

 private:
  // A multiply-add chain: order-dependent, one multiply per record.
  void put(uint64_t word) noexcept {
    state_ = state_ * 0x9E3779B97F4A7C15ULL + word;
    ++records_;
  }

  uint64_t state_ = 0;
  std::size_t records_ = 0;
};

template <class Record>
[[nodiscard]] uint64_t consume(std::span<const Record> records) noexcept {
  Consumer consumer;
  for (const Record& record : records) consumer.add(record);
  return consumer.value();
}

}  // namespace ringlab::json
