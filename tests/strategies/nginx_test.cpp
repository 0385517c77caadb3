// GET weather against nginx serving the same bytes as static files (format=ndjson maps to the NDJSON
// file of the same records): every GET strategy's checksum
// equals the generator's ground truth when the body comes from another server (another head layout,
// another way of writing to the socket), not only from ringlab's own.
//
// nginx runs in the foreground as one process (master_process off: no worker that drops privileges,
// so the test's temporary folder stays readable), on a port that was free a moment before, with its
// pid file, logs and temporary folders in the test's folder; killed by PID at the end. Without an
// nginx binary the test says so and checks nothing else.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "fixtures.hpp"
#include "ringlab/json/checksum.hpp"
#include "../support/feature_gate.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr const char* kNginx = "/usr/sbin/nginx";

std::string nginx_config(const e2e::TempDir& dir, uint16_t port) {
  const std::string d = dir.path();
  return "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         "error_log " + d + "/error.log;\npid " + d + "/nginx.pid;\n"
         "events { worker_connections 64; }\n"
         "http {\n"
         "  access_log off;\n"
         "  client_body_temp_path " + d + "/body;\n  proxy_temp_path " + d + "/proxy;\n"
         "  fastcgi_temp_path " + d + "/fastcgi;\n  uwsgi_temp_path " + d + "/uwsgi;\n"
         "  scgi_temp_path " + d + "/scgi;\n"
         "  server {\n"
         "    listen 127.0.0.1:" + std::to_string(port) + ";\n"
         "    root " + d + "/www;\n"
         "    location = /weather {\n"
         "      default_type application/json;\n"
         "      try_files /weather-$arg_count$arg_format.json =404;\n"
         "    }\n"
         "  }\n"
         "}\n";
}

TEST_CASE("every GET strategy reads the generator's weather records from nginx" * doctest::test_suite(ringlab::testing::kFeatureGated)) {
  if (!ringlab::testing::feature_available("nginx", std::filesystem::exists(kNginx), "nginx not installed, nothing to compare against")) return;
  e2e::TempDir dir;
  std::filesystem::create_directory(dir.file("www"));
  const std::size_t counts[] = {0, 1, 10, 1000};
  for (const std::size_t count : counts) {
    e2e::write_file(dir.file("www/weather-" + std::to_string(count) + ".json"),
                    ringlab::testing::generated_body(Payload::weather, count));
    // format=ndjson (the streaming strategy)
    e2e::write_file(dir.file("www/weather-" + std::to_string(count) + "ndjson.json"),
                    ringlab::testing::generated_body(Payload::weather, count, true));
  }
  const uint16_t port = e2e::unused_port();
  e2e::write_file(dir.file("nginx.conf"), nginx_config(dir, port));
  e2e::Child nginx({kNginx, "-p", dir.path(), "-c", dir.file("nginx.conf"), "-e", dir.file("error.log")}, {},
                   dir.file("stderr.log"));
  bool up = false;
  for (int i = 0; i < 250 && !up; ++i) {  // at most 5 s
    up = e2e::accepts_connections(port);
    if (!up) ::usleep(20'000);
  }
  REQUIRE_MESSAGE(up, "nginx did not start: " << e2e::read_file(dir.file("error.log")));

  for (const Descriptor& descriptor : registry()) {
    if (descriptor.method != Method::get) continue;
    for (const std::size_t count : counts) {
      CaseConfig config;
      config.port = port;
      config.count = count;
      INFO("strategy " << descriptor.name << ", " << count << " records from nginx");
      const Outcome outcome = run_strategy(descriptor, config, 2);
      if (outcome.skipped) continue;
      REQUIRE_MESSAGE(!outcome.error, outcome.error.value_or(""));
      REQUIRE(outcome.checksums.size() == 2);
      for (const uint64_t checksum : outcome.checksums) CHECK(checksum == json::checksum_weather(count));
    }
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing
