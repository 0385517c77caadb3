#pragma once
// The report of `bench load`: one row per server variant and target, each with its rounds, in the
// formats of the suites' reports (markdown table, csv, json with the histograms).
//
// A row's req/s is the median over its rounds (each round listed too); its percentiles are read
// from the histogram of every round's measured requests merged. The json keeps, per round, the
// non-empty buckets of the histogram as [lowest_ns, highest_ns, count] triples, so the full
// distribution can be plotted or merged again.
#include <string>
#include <vector>

#include "ringlab/bench/load/load.hpp"

namespace ringlab::bench {

inline constexpr int kLoadSchemaVersion = 1;

struct LoadRow {
  std::string server;          // "ours (writev)", "http://127.0.0.1:8080" ...
  std::string body_strategy;   // the server's, from its /env; empty when unknown
  std::string target;          // "/weather?count=10"
  std::vector<LoadResult> rounds;

  [[nodiscard]] double median_requests_per_second() const;
  [[nodiscard]] Histogram merged_latency() const;
};

struct LoadReport {
  std::string mode;        // "closed loop, 32 connections" or "open loop, 20000 req/s, 32 connections"
  std::string placement;   // "load threads on CPU 0; server on CPU 1"
  std::string environment; // host, kernel, date
  LoadSpec spec;           // the settings every row shares (host, port and target aside)
  std::vector<LoadRow> rows;
};

// The percentiles every format shows, in percent.
inline constexpr double kLoadPercentiles[] = {50, 90, 99, 99.9, 99.99};

[[nodiscard]] std::string render_load_markdown(const LoadReport& report);
[[nodiscard]] std::string render_load_csv(const LoadReport& report);
[[nodiscard]] std::string render_load_json(const LoadReport& report);

}  // namespace ringlab::bench
