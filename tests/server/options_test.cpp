#include "ringlab/server/options.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string_view>

#include "ringlab/server/server.hpp"

using namespace ringlab::server;
using namespace std::chrono_literals;

TEST_CASE("parse_duration reads seconds by default and the usual units") {
  struct Row {
    std::string_view text;
    std::optional<std::chrono::milliseconds> value;
  };
  const Row rows[] = {
      {"30", 30s},        {"30s", 30s},         {"300ms", 300ms},       {"1.5s", 1500ms},
      {"2m", 120s},       {"2min", 120s},       {"1500us", 2ms},        {"0", 0ms},
      {"0.0005s", 1ms},   {"", std::nullopt},   {"s", std::nullopt},    {"-1s", std::nullopt},
      {"1h", std::nullopt}, {" 1s", std::nullopt}, {"1s ", std::nullopt}, {"1e3ms", std::nullopt},
      {".5s", std::nullopt}, {"1..5s", std::nullopt}, {"100000000s", std::nullopt},
  };
  for (const Row& row : rows) {
    INFO("text: '", row.text, "'");
    CHECK(parse_duration(row.text) == row.value);
  }
}

TEST_CASE("parse_size reads bytes by default and binary multiples") {
  struct Row {
    std::string_view text;
    std::optional<uint64_t> value;
  };
  const Row rows[] = {
      {"16384", 16384},          {"16KiB", 16384},           {"16K", 16384},
      {"16k", 16384},            {"64MiB", 64ull << 20},     {"64M", 64ull << 20},
      {"1GiB", 1ull << 30},      {"1.5KiB", 1536},           {"0", 0},
      {"512B", 512},             {"1.5", std::nullopt},      {"", std::nullopt},
      {"-1", std::nullopt},      {"1TiB", std::nullopt},     {"MiB", std::nullopt},
      {"99999999999G", std::nullopt},
  };
  for (const Row& row : rows) {
    INFO("text: '", row.text, "'");
    CHECK(parse_size(row.text) == row.value);
  }
}

TEST_CASE("validate names the flag of each option out of range") {
  struct Row {
    const char* what;
    void (*change)(ServerOptions&);
    std::string_view flag;
  };
  const Row rows[] = {
      {"no threads", [](ServerOptions& o) { o.threads = 0; }, "--threads"},
      {"buffer count not a power of two", [](ServerOptions& o) { o.recv_buffer_count = 100; }, "--recv-buffers"},
      {"buffer count zero", [](ServerOptions& o) { o.recv_buffer_count = 0; }, "--recv-buffers"},
      {"buffers too small", [](ServerOptions& o) { o.recv_buffer_bytes = 8; }, "--recv-buffer-size"},
      {"header limit too small", [](ServerOptions& o) { o.max_header_bytes = 4; }, "--max-header"},
      {"no idle timeout", [](ServerOptions& o) { o.idle_timeout = 0ms; }, "--idle-timeout"},
      {"no upstream timeout", [](ServerOptions& o) { o.upstream_timeout = 0ms; }, "--upstream-timeout"},
      {"negative shutdown timeout", [](ServerOptions& o) { o.shutdown_timeout = -1ms; }, "--shutdown-timeout"},
      {"no connections", [](ServerOptions& o) { o.max_connections = 0; }, "--max-connections"},
      {"no output queue", [](ServerOptions& o) { o.max_queued_output_bytes = 0; }, "--max-queued-output"},
      {"https upstream", [](ServerOptions& o) { o.upstream = "https://127.0.0.1:1"; }, "--upstream"},
      {"not a url", [](ServerOptions& o) { o.upstream = "127.0.0.1:1"; }, "--upstream"},
  };
  CHECK(validate(ServerOptions{}).has_value());
  for (const Row& row : rows) {
    INFO(row.what);
    ServerOptions options;
    row.change(options);
    auto status = validate(options);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.find(row.flag) != std::string::npos);
  }
}
