// strategies/src/common.cpp: targets, labels, the TIME_WAIT count from /proc/net/tcp text.
#include <doctest/doctest.h>

#include "common.hpp"
#include "ringlab/json/checksum.hpp"

namespace ringlab::strategies::detail {
namespace {

constexpr std::string_view kHeader =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

TEST_CASE("count_time_wait counts state 06 with the port at either end, tcp and tcp6 layouts") {
  struct Row {
    const char* name;
    std::string text;
    uint16_t port;
    std::size_t expected;
  };
  const std::string listen = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 0 1 1\n";
  const std::string client_tw = "   1: 0100007F:C350 0100007F:1F90 06 00000000:00000000 03:00001770 00000000 0 0 0 3\n";
  const std::string server_tw = "   2: 0100007F:1F90 0100007F:C351 06 00000000:00000000 03:00001770 00000000 0 0 0 3\n";
  const std::string other_tw = "   3: 0100007F:C352 0100007F:0050 06 00000000:00000000 03:00001770 00000000 0 0 0 3\n";
  const std::string established = "   4: 0100007F:C353 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 0 0 9 1\n";
  const std::string v6_tw =
      "   0: 00000000000000000000000001000000:D431 00000000000000000000000001000000:1F90 06 "
      "00000000:00000000 03:00001770 00000000 0 0 0 3\n";
  const Row rows[] = {
      {"empty text", "", 8080, 0},
      {"header only", std::string(kHeader), 8080, 0},
      {"a listener is not TIME_WAIT", std::string(kHeader) + listen, 8080, 0},
      {"client side, remote port matches", std::string(kHeader) + client_tw, 8080, 1},
      {"server side, local port matches", std::string(kHeader) + server_tw, 8080, 1},
      {"another port", std::string(kHeader) + other_tw, 8080, 0},
      {"established is not TIME_WAIT", std::string(kHeader) + established, 8080, 0},
      {"all together", std::string(kHeader) + listen + client_tw + server_tw + other_tw + established, 8080, 2},
      {"the other port of the same text", std::string(kHeader) + other_tw, 80, 1},
      {"port 0 counts every TIME_WAIT socket", std::string(kHeader) + listen + client_tw + server_tw + other_tw + established, 0, 3},
      {"tcp6 layout", std::string(kHeader) + v6_tw, 8080, 1},
      {"last line without newline", std::string(kHeader) + client_tw.substr(0, client_tw.size() - 1), 8080, 1},
      {"garbage lines are skipped", std::string(kHeader) + "garbage\n: : :\n   9: zz:zz zz:zz 06\n   8: 0100007F:1F90\n" + client_tw, 8080, 1},
  };
  for (const Row& row : rows) {
    INFO(std::string_view(row.name));
    CHECK(count_time_wait(row.text, row.port) == row.expected);
  }
}

TEST_CASE("count_time_wait reads this namespace's /proc files without failing") {
  // The number depends on the machine; reading must simply work (0 for a port nobody used).
  CHECK(count_time_wait(uint16_t{1}) == 0);
}

TEST_CASE("targets, authorities and labels of a case") {
  CaseConfig config;
  config.port = 8080;
  config.count = 1000;
  CHECK(get_target(config) == "/weather?count=1000");
  CHECK(get_target(config, "&chunked=1") == "/weather?count=1000&chunked=1");
  config.payload = Payload::repos;
  CHECK(get_target(config) == "/repos?count=1000");
  config.server_mode = ServerMode::seed;
  CHECK(get_target(config) == "/repos?count=1000&cache=0&chunked=1&chunk=16384");
  config.server_mode = ServerMode::cached;
  CHECK(authority(config) == "127.0.0.1:8080");
  CHECK(case_label("presized", config) == "presized repos 1000");
  config.payload = Payload::github;
  CHECK(get_target(config, "&format=ndjson") == "/github?count=1000&format=ndjson");
  CHECK(case_label("three_fields", config) == "three_fields github 1000");
  config.inflight = 64;
  CHECK(case_label("epoll", config) == "epoll github 1000 x64");
  config.host = "::1";
  CHECK(authority(config) == "[::1]:8080");
}

TEST_CASE("the expected checksum is the generator's, and a mismatch says both values") {
  CaseConfig config;
  config.count = 10;
  CHECK(expected_checksum(config) == json::checksum_weather(10));
  config.payload = Payload::repos;
  CHECK(expected_checksum(config) == json::checksum_repos(10));
  config.payload = Payload::github;
  CHECK(expected_checksum(config) == json::checksum_github(10));
  CHECK(expected_checksum(config) != json::checksum_github_three_fields(10));
  const std::string text = checksum_mismatch(0x1234, 0xabcd, 10);
  CHECK(text.find("0x1234") != std::string::npos);
  CHECK(text.find("0xabcd") != std::string::npos);
  CHECK(text.find("10 records") != std::string::npos);
}

TEST_CASE("fail() prefixes the label") {
  const auto error = fail("views weather 10", "truncated 127.0.0.1:1: peer closed");
  CHECK(error.error().message == "views weather 10: truncated 127.0.0.1:1: peer closed");
}

TEST_CASE("fail_on_connection names the connection among several, and none when it is the case's only one") {
  const std::string what = "recv 127.0.0.1:8080: Connection reset by peer (ECONNRESET)";
  CHECK(fail_on_connection("epoll weather 10 x64", 2, 64, what).error().message ==
        "epoll weather 10 x64: connection 3 of 64: " + what);
  CHECK(fail_on_connection("epoll weather 10", 0, 1, what).error().message == "epoll weather 10: " + what);
}

}  // namespace
}  // namespace ringlab::strategies::detail
