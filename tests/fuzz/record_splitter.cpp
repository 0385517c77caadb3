// Fuzz target: json::RecordSplitter (the streaming strategy's record finder), whole against split.
// The body is scanned once whole and once as it would arrive: a prefix that grows at the cut points
// (cuts.hpp), each prefix a fresh allocation of exactly its size with the previous one freed, since
// the splitter promises to keep offsets, never pointers (a pointer kept into a freed prefix is an
// ASan report). The two scans must return the same records and the same error text, and finish()
// must agree. Every record returned must also hold what the header promises: in order, inside the
// prefix, '{' to '}', not overlapping the one before, and counted by records(). Any difference
// aborts: a finding.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuts.hpp"
#include "ringlab/json/record_splitter.hpp"

namespace {

using ringlab::json::RecordSpan;
using ringlab::json::RecordSplitter;

struct Scan {
  std::vector<RecordSpan> records;
  std::string error;   // next()'s error text, empty if none
  std::string finish;  // finish()'s error text, "ok", or empty when next() failed
  bool operator==(const Scan&) const = default;
};

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "record splitter: %s\n", what);
  std::abort();
}

// Takes every record complete in `prefix`; false once next() failed (recorded).
bool drain(RecordSplitter& splitter, std::string_view prefix, Scan& scan) {
  while (true) {
    auto record = splitter.next(prefix);
    if (!record) {
      scan.error = record.error().message;
      return false;
    }
    if (!*record) return true;
    const RecordSpan& span = **record;
    if (span.index != scan.records.size()) finding("record index out of order");
    if (span.length < 2 || span.offset + span.length > prefix.size()) finding("record outside the prefix");
    if (prefix[span.offset] != '{' || prefix[span.offset + span.length - 1] != '}') {
      finding("record does not run from '{' to '}'");
    }
    if (!scan.records.empty()) {
      const RecordSpan& last = scan.records.back();
      if (span.offset < last.offset + last.length) finding("record overlaps the one before");
    }
    scan.records.push_back(span);
    if (splitter.records() != scan.records.size()) finding("records() disagrees with the records returned");
  }
}

Scan scan(std::string_view body, const std::vector<std::size_t>& ends) {
  RecordSplitter splitter;
  Scan result;
  std::unique_ptr<char[]> prefix;
  for (std::size_t end : ends) {
    // The grown body in a new allocation of exactly its size; the old one is freed.
    auto grown = std::make_unique<char[]>(end);
    if (end > 0) std::memcpy(grown.get(), body.data(), end);
    prefix = std::move(grown);
    if (!drain(splitter, std::string_view(prefix.get(), end), result)) return result;
    if (splitter.scanned() > end) finding("scanned() past the prefix");
  }
  auto done = splitter.finish(std::string_view(prefix.get(), body.size()));
  result.finish = done ? "ok" : done.error().message;
  if (done && !splitter.closed()) finding("finish() accepted a body whose array is not closed");
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  std::vector<std::size_t> ends = ringlab::fuzz::cut_points(body);
  ends.push_back(body.size());
  const Scan whole = scan(body, {body.size()});
  const Scan split = scan(body, ends);
  if (!(whole == split)) {
    std::fprintf(stderr, "whole and split differ: %zu vs %zu records, error '%s' vs '%s', finish '%s' vs '%s'\n",
                 whole.records.size(), split.records.size(), whole.error.c_str(), split.error.c_str(),
                 whole.finish.c_str(), split.finish.c_str());
    std::abort();
  }
  return 0;
}
