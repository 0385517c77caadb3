// docs/strategies.md's "Body copies" table held to what every GET row counts (IoCounters' body_* fields):
// each row, and its many-in-flight form where it has one, runs against the server binary at 10,000
// records, and the body bytes the kernel copied and those ringlab's code copied, per op and per body,
// must be what its line of the table says. Every GET row has a line; a row the table calls n/a (a
// library peer) counts nothing. The rows that need a kernel feature run in the feature-gated suite.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "ringlab/http/body_sink.hpp"
#include "ringlab/net/mapped_region.hpp"
#include "ringlab/net/ring.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr std::size_t kRecords = 10'000;
constexpr std::size_t kRuns = 2;  // timed runs after setup's verified one
// "+ head": the body bytes that came with the head and were copied from there: at most the head's receive,
// kHeadReceiveBytes for a sink that receives in place (the client's and the socket peers' alike).
constexpr double kHeadBytes = http::kHeadReceiveBytes;
// What a documented figure may be off by, in bodies: a chunked body's framing, an NDJSON body's size.
constexpr double kSlack = 0.01;

// One line of the table: the rows it names and what they copy, in bodies.
struct Documented {
  std::vector<std::string> names;
  bool counted = true;  // "n/a": the row counts nothing
  double kernel = 0;
  double mapped = 0;
  double ringlab_low = 0;
  double ringlab_high = 0;
  bool plus_head = false;
};

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(' ') - first + 1));
}

// "3.0–3.3", "2", "0 + head" (the range's dash is an en dash).
void parse_ringlab(const std::string& cell, Documented& line) {
  std::string figure = cell;
  if (const auto plus = figure.find(" + head"); plus != std::string::npos) {
    line.plus_head = true;
    figure = figure.substr(0, plus);
  }
  const std::string dash = "\u2013";
  if (const auto at = figure.find(dash); at != std::string::npos) {
    line.ringlab_low = std::stod(figure.substr(0, at));
    line.ringlab_high = std::stod(figure.substr(at + dash.size()));
  } else {
    line.ringlab_low = line.ringlab_high = std::stod(figure);
  }
}

// The table under "## Body copies" in `page`.
std::vector<Documented> documented_copies(std::string_view page) {
  std::vector<Documented> lines;
  std::istringstream in{std::string(page)};
  bool in_section = false;
  for (std::string text; std::getline(in, text);) {
    if (text.starts_with("## ")) {
      in_section = text.starts_with("## Body copies");
      continue;
    }
    if (!in_section || !text.starts_with("| `")) continue;
    std::vector<std::string> cells;
    for (std::size_t at = 1; at < text.size();) {
      const std::size_t end = text.find('|', at);
      if (end == std::string::npos) break;
      cells.push_back(trim(std::string_view(text).substr(at, end - at)));
      at = end + 1;
    }
    REQUIRE_MESSAGE(cells.size() == 5, text);
    Documented line;
    for (std::size_t open = cells[0].find('`'); open != std::string::npos; open = cells[0].find('`', open)) {
      const std::size_t close = cells[0].find('`', open + 1);
      line.names.push_back(cells[0].substr(open + 1, close - open - 1));
      open = close + 1;
    }
    if (cells[1] == "n/a") {
      line.counted = false;
      CHECK_MESSAGE(cells[2] == "n/a", text);
      CHECK_MESSAGE(cells[3] == "n/a", text);
    } else {
      line.kernel = std::stod(cells[1]);
      line.mapped = std::stod(cells[2]);
      parse_ringlab(cells[3], line);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<Documented> page_copies() {
  std::ifstream file(RINGLAB_SOURCE_DIR "/docs/strategies.md");
  REQUIRE(file.good());
  std::ostringstream page;
  page << file.rdbuf();
  std::vector<Documented> lines = documented_copies(page.str());
  REQUIRE(!lines.empty());
  return lines;
}

const Documented* line_of(const std::vector<Documented>& lines, std::string_view name) {
  for (const Documented& line : lines) {
    for (const std::string& named : line.names) {
      if (named == name) return &line;
    }
  }
  return nullptr;
}

// A case of `strategy` at kRecords: weather, or the first payload it has a case for.
std::optional<CaseConfig> case_for(const Strategy& strategy, uint16_t port, std::size_t inflight) {
  for (const Payload payload : {Payload::weather, Payload::github, Payload::profiles}) {
    CaseConfig config = case_at(port, kRecords, inflight);
    config.payload = payload;
    if (!strategy.skip_case(config)) return config;
  }
  return std::nullopt;
}

// `strategy`'s counts over kRuns timed runs, per op, in bodies of its case's payload, per connection.
struct Measured {
  bool counted = false;
  double kernel = 0;
  double ringlab = 0;
  double mapped = 0;
  double body_bytes = 0;  // of one body: the generator's
};

Measured measure(Strategy& strategy, const CaseConfig& config) {
  const auto set = strategy.setup(config);
  REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().message));
  const IoCounters before = strategy.io_counters();
  for (std::size_t i = 0; i < kRuns; ++i) {
    const auto ran = strategy.run(nullptr, Check::consume);
    REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
  }
  const IoCounters after = strategy.io_counters();
  strategy.teardown();
  Measured m;
  m.counted = after.counts_copies;
  m.body_bytes = static_cast<double>(ringlab::testing::generated_body(config.payload, config.count).size());
  const double bodies = m.body_bytes * static_cast<double>(kRuns * config.inflight);
  m.kernel = static_cast<double>(after.body_kernel_copied - before.body_kernel_copied) / bodies;
  m.ringlab = static_cast<double>(after.body_ringlab_copied - before.body_ringlab_copied) / bodies;
  m.mapped = static_cast<double>(after.body_mapped - before.body_mapped) / bodies;
  return m;
}

// Row `descriptor` (and its many-in-flight form at 4) against `line`.
void holds_to(const Descriptor& descriptor, const Documented& line, uint16_t port) {
  std::vector<std::pair<std::unique_ptr<Strategy>, std::size_t>> forms;
  forms.emplace_back(descriptor.make(), 1);
  if (descriptor.make_inflight != nullptr) forms.emplace_back(descriptor.make_inflight(), 4);
  for (auto& [strategy, inflight] : forms) {
    REQUIRE(strategy != nullptr);
    const auto config = case_for(*strategy, port, inflight);
    REQUIRE_MESSAGE(config.has_value(), descriptor.name << " has no case at " << kRecords << " records");
    INFO(descriptor.name << " x" << inflight << ", " << payload_name(config->payload) << " " << kRecords);
    const Measured m = measure(*strategy, *config);
    INFO("per body: kernel " << m.kernel << ", ringlab " << m.ringlab << ", mapped " << m.mapped);
    CHECK(m.counted == line.counted);
    if (!line.counted) continue;
    CHECK(std::abs(m.kernel - line.kernel) <= kSlack);
    const double head = line.plus_head ? kHeadBytes / m.body_bytes : 0.0;
    CHECK(m.ringlab >= line.ringlab_low - kSlack);
    CHECK(m.ringlab <= line.ringlab_high + head + kSlack);
    CHECK(std::abs(m.mapped - line.mapped) <= kSlack);
    if (line.ringlab_high > 0 && line.ringlab_high <= kSlack && !line.plus_head) {
      // A row that copies only the records cut between pieces (provided_incremental): under one page per body.
      CHECK(m.ringlab * m.body_bytes < static_cast<double>(net::MappedRegion::page_bytes()));
    }
    if (line.kernel == 0 && line.ringlab_high == 0) {
      // A row that copies none of the body (mapped): what it copies after all, the body's last partial page and
      // whatever did not map, stays under one page per body, not one percent of it (770 KB here).
      CHECK((m.kernel + m.ringlab) * m.body_bytes < static_cast<double>(net::MappedRegion::page_bytes()));
    }
  }
}

// Whether the row needs a kernel feature (its skip_reason on a kernel with none).
bool needs_feature(const Descriptor& descriptor) {
  return descriptor.make()->skip_reason(net::RingFeatures{}).has_value();
}

TEST_CASE("the table's reader: names, n/a, a range, + head") {
  const auto lines = documented_copies(
      "## Body copies\n| strategy | k | m | r | what |\n|---|---|---|---|---|\n| `a` | 1 | 0 | 3.0\u20133.3 | x |\n"
      "| `b`, `c` | n/a | n/a | n/a | y |\n| `d` | 0 | 1 | 0 + head | z |\n## Next\n| `e` | 1 | 0 | 1 | w |\n");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].names == std::vector<std::string>{"a"});
  CHECK(lines[0].ringlab_low == 3.0);
  CHECK(lines[0].ringlab_high == 3.3);
  CHECK_FALSE(lines[0].plus_head);
  CHECK(lines[1].names == std::vector<std::string>{"b", "c"});
  CHECK_FALSE(lines[1].counted);
  CHECK(lines[2].plus_head);
  CHECK(lines[2].ringlab_high == 0);
  CHECK(lines[2].kernel == 0);
  CHECK(lines[2].mapped == 1);
}

TEST_CASE("every GET row has a line in docs/strategies.md's Body copies table, and every line a row") {
  const std::vector<Documented> lines = page_copies();
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.method != Method::get) continue;
    CHECK_MESSAGE(line_of(lines, descriptor.name) != nullptr, "no Body copies line for ", descriptor.name);
  }
  for (const Documented& line : lines) {
    for (const std::string& name : line.names) {
      const Descriptor* descriptor = find(name);
      CHECK_MESSAGE(descriptor != nullptr, "the Body copies table names ", name, ", which no row is");
      if (descriptor != nullptr) CHECK(descriptor->method == Method::get);
    }
  }
}

TEST_CASE("every GET row copies what its line says, one request and N in flight") {
  const std::vector<Documented> lines = page_copies();
  ServerProcess server;
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.method != Method::get || needs_feature(descriptor)) continue;
    const Documented* line = line_of(lines, descriptor.name);
    REQUIRE_MESSAGE(line != nullptr, descriptor.name);
    holds_to(descriptor, *line, server.port());
  }
}

TEST_CASE("the rows that need a kernel feature copy what their lines say" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  const std::vector<Documented> lines = page_copies();
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  const net::RingFeatures features = (*ring)->features();
  ServerProcess server;
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.method != Method::get || !needs_feature(descriptor)) continue;
    const auto missing = descriptor.make()->skip_reason(features);
    if (!ringlab::testing::feature_available(std::string(descriptor.name), !missing, missing.value_or(""))) continue;
    const Documented* line = line_of(lines, descriptor.name);
    REQUIRE_MESSAGE(line != nullptr, descriptor.name);
    holds_to(descriptor, *line, server.port());
  }
}

// provided_incremental with one connection: the ring is that connection's alone, so each receive lands
// right after the one before, and a record cut between two pieces is parsed where it lies, across the
// ring's end too (its buffers are mapped twice). Enough bodies to go round the 4 MiB ring three times, and
// on a ring shorter than a body (4 x 64 KiB against 770 KB) each body three times round: nothing copied in
// user space, every body verified.
TEST_CASE("provided_incremental alone on its ring copies no body byte, across the ring's end, however often" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  auto ring = net::Ring::create();
  REQUIRE(ring.has_value());
  const Descriptor* descriptor = nullptr;
  for (const Descriptor& candidate : registry()) {
    if (candidate.name == std::string_view("provided_incremental")) descriptor = &candidate;
  }
  REQUIRE(descriptor != nullptr);
  const auto missing = descriptor->make()->skip_reason((*ring)->features());
  if (!ringlab::testing::feature_available("provided_incremental", !missing, missing.value_or(""))) return;
  ServerProcess server;
  for (const RingGeometry geometry : {RingGeometry{}, RingGeometry{4, 64 * 1024}}) {
    INFO("ring " << geometry.buffers << " x " << geometry.buffer_bytes << " (0: the row's own)");
    const std::unique_ptr<Strategy> strategy = descriptor->make_inflight();
    REQUIRE(strategy != nullptr);
    CaseConfig config = case_at(server.port(), kRecords, 1);
    config.ring = geometry;
    const auto set = strategy->setup(config);
    REQUIRE_MESSAGE(set.has_value(), (set ? "" : set.error().message));
    const IoCounters before = strategy->io_counters();
    constexpr std::size_t kBodies = 16;  // 16 x 770 KB: three times round 4 MiB
    for (std::size_t i = 0; i < kBodies; ++i) {
      const auto ran = strategy->run(nullptr, Check::verify);
      REQUIRE_MESSAGE(ran.has_value(), (ran ? "" : ran.error().message));
    }
    const IoCounters after = strategy->io_counters();
    strategy->teardown();
    const uint64_t copied = after.body_ringlab_copied - before.body_ringlab_copied;
    const std::size_t body = ringlab::testing::generated_body(config.payload, config.count).size();
    CHECK(after.body_kernel_copied - before.body_kernel_copied == kBodies * body);
    CHECK(copied == 0);
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing
