// curl (the command-line client) against the server: every route, and /echo with files up to 16 MiB.
#include <unistd.h>

#include <doctest/doctest.h>

#include <fstream>

#include "ringlab/server/body_cache.hpp"
#include "support.hpp"
#include "../support/feature_gate.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

constexpr const char* kCurl = "/usr/bin/curl";

struct CurlResult {
  std::string status_and_type;  // "%{http_code} %{content_type}"
  std::string body;
};

CurlResult curl(const TempDir& dir, std::vector<std::string> extra, const std::string& url) {
  REQUIRE_MESSAGE(::access(kCurl, X_OK) == 0, kCurl, " is missing: install curl (tools/setup does)");
  std::vector<std::string> argv = {kCurl, "-sS", "--max-time", "60", "-o", dir.file("body"), "-w",
                                   "%{http_code} %{content_type}"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(url);
  auto exit_code = run(argv, dir.file("out"), dir.file("err"), 90s);
  REQUIRE_MESSAGE(exit_code == 0, "curl ", url, " exited with ", exit_code.value_or(-1), ": ", read_file(dir.file("err")));
  return {read_file(dir.file("out")), read_file(dir.file("body"))};
}

std::string generated(server::Route route, server::Format format, uint32_t count) {
  return server::generate_body({route, format, count}).bytes;
}

}  // namespace

TEST_CASE("curl gets every route with the right status, type and bytes") {
  TestServer server;
  TempDir dir;
  struct Row {
    std::string target;
    std::string status_and_type;
    long records;  // -1: not a JSON array
    std::string body;
  };
  using server::Format;
  using server::Route;
  const std::vector<Row> rows = {
      {"/weather?count=10", "200 application/json", 10, generated(Route::weather, Format::json, 10)},
      {"/weather?count=10000", "200 application/json", 10000, generated(Route::weather, Format::json, 10000)},
      {"/weather?count=0", "200 application/json", 0, "[]"},
      {"/weather?count=6&format=ndjson", "200 application/x-ndjson", -1, generated(Route::weather, Format::ndjson, 6)},
      {"/repos?count=100", "200 application/json", 100, generated(Route::repos, Format::json, 100)},
      {"/plaintext", "200 text/plain", -1, "Hello, World!"},
      {"/health", "200 application/json", -1, "{\"status\":\"ok\"}"},
      {"/proxy?count=25", "200 application/json", 25, generated(Route::weather, Format::json, 25)},
      {"/proxy?count=25&conn=fresh", "200 application/json", 25, generated(Route::weather, Format::json, 25)},
      {"/nothing", "404 application/json", -1, ""},
      {"/weather?count=1000001", "400 application/json", -1, ""},
  };
  for (const Row& row : rows) {
    for (std::string suffix : {"", "chunked=1&chunk=333"}) {
      std::string url = server.url(row.target);
      if (!suffix.empty()) url += (row.target.find('?') == std::string::npos ? "?" : "&") + suffix;
      INFO(url);
      CurlResult result = curl(dir, {}, url);
      CHECK(result.status_and_type == row.status_and_type);
      if (row.records >= 0) CHECK(json_array_size(result.body) == row.records);
      if (!row.body.empty()) {
        CHECK(result.body == row.body);
      } else {
        CHECK(json_error(result.body).has_value());
      }
    }
  }
}

TEST_CASE("curl --data-binary @file to /echo returns the file byte for byte, 1 B to 16 MiB") {
  TestServer server;
  TempDir dir;
  for (std::size_t size : {std::size_t{1}, std::size_t{1024}, std::size_t{1} << 20, std::size_t{16} << 20}) {
    INFO(size, " bytes");
    const std::string file = dir.file("upload-" + std::to_string(size));
    const std::string bytes = pattern_bytes(size, static_cast<unsigned>(size));
    write_file(file, bytes);
    for (std::string target : {"/echo", "/echo?chunked=1"}) {
      INFO(target);
      CurlResult result =
          curl(dir, {"--data-binary", "@" + file, "-H", "Content-Type: application/octet-stream"}, server.url(target));
      CHECK(result.status_and_type == "200 application/octet-stream");
      CHECK(result.body.size() == bytes.size());
      CHECK(result.body == bytes);
    }
  }
}

TEST_CASE("curl uploads with chunked coding and over HTTP/1.0 are echoed") {
  TestServer server;
  TempDir dir;
  const std::string file = dir.file("upload");
  const std::string bytes = pattern_bytes(300000);
  write_file(file, bytes);
  CurlResult chunked = curl(dir, {"--data-binary", "@" + file, "-H", "Transfer-Encoding: chunked", "-H",
                                  "Content-Type: text/x-chunked"},
                            server.url("/echo"));
  CHECK(chunked.status_and_type == "200 text/x-chunked");
  CHECK(chunked.body == bytes);
  CurlResult old = curl(dir, {"--http1.0", "--data-binary", "@" + file}, server.url("/echo?chunked=1"));
  CHECK(old.status_and_type.rfind("200 ", 0) == 0);
  CHECK(old.body == bytes);
}

TEST_CASE("curl reuses one connection for several requests") {
  TestServer server;
  TempDir dir;
  std::vector<std::string> argv = {kCurl, "-sS", "--max-time", "30", "-o", "/dev/null", "-o", "/dev/null",
                                   "-o", "/dev/null", "-w", "%{num_connects}\\n",
                                   server.url("/weather?count=3"), server.url("/plaintext"), server.url("/health")};
  auto exit_code = run(argv, dir.file("out"), dir.file("err"));
  REQUIRE_MESSAGE(exit_code == 0, read_file(dir.file("err")));
  CHECK(read_file(dir.file("out")) == "1\n0\n0\n");
  CHECK(server.stop().accepted == 1);
}

TEST_CASE("the server listens on IPv6 loopback, and /proxy reaches its built-in upstream there" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  std::ifstream ipv6("/proc/net/if_inet6");
  std::string line;
  bool has_loopback = false;
  while (std::getline(ipv6, line)) has_loopback = has_loopback || line.rfind("00000000000000000000000000000001", 0) == 0;
  if (!ringlab::testing::feature_available("ipv6_loopback", has_loopback, "no IPv6 loopback (::1) on this machine")) return;
  server::ServerOptions options;
  options.bind = "::1";
  TestServer server(options);
  CHECK(server.get().endpoint().to_string() == "[::1]:" + std::to_string(server.port()));
  CHECK(server.get().upstream().rfind("http://[::1]:", 0) == 0);
  TempDir dir;
  const std::string base = "http://[::1]:" + std::to_string(server.port());
  CurlResult weather = curl(dir, {"-g"}, base + "/weather?count=4");
  CHECK(weather.status_and_type == "200 application/json");
  CHECK(json_array_size(weather.body) == 4);
  CurlResult proxied = curl(dir, {"-g"}, base + "/proxy?count=4&conn=fresh");
  CHECK(proxied.status_and_type == "200 application/json");
  CHECK(proxied.body == weather.body);
}
