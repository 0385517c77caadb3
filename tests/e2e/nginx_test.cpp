// Our client against nginx serving the same /weather bytes as static files: a real peer must give
// exactly what our server gives.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <thread>

#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/server/body_cache.hpp"
#include "../support/http.hpp"
#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

constexpr const char* kNginx = "/usr/sbin/nginx";
constexpr uint32_t kCounts[] = {0, 1, 10, 1000, 10000};

bool accepts_connections(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// nginx with one worker on a free port, serving weather_N.json from a temporary folder.
class Nginx {
 public:
  Nginx() {
    REQUIRE_MESSAGE(::access(kNginx, X_OK) == 0, kNginx,
                    " is missing: the nginx peer test needs nginx (install nginx-light; tools/setup does)");
    const std::string www = dir_.file("www");
    REQUIRE(::mkdir(www.c_str(), 0755) == 0);
    for (uint32_t count : kCounts) {
      write_file(www + "/weather_" + std::to_string(count) + ".json",
                 server::generate_body({server::Route::weather, server::Format::json, count}).bytes);
    }
    port_ = unused_port();
    const std::string d = dir_.path();
    std::string config;
    // Started as root, nginx drops its worker to an unprivileged user unless told otherwise.
    if (::geteuid() == 0) config += "user root;\n";
    config += "daemon off;\nmaster_process on;\nworker_processes 1;\n";
    config += "pid " + d + "/nginx.pid;\nerror_log " + d + "/error.log warn;\n";
    config += "events { worker_connections 128; }\n";
    config += "http {\n  access_log off;\n  default_type application/json;\n  keepalive_requests 100000;\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
      config += std::string("  ") + temp + "_temp_path " + d + "/" + temp + ";\n";
    }
    config += "  server {\n    listen 127.0.0.1:" + std::to_string(port_) + ";\n    root " + www +
              ";\n    location / { }\n  }\n}\n";
    write_file(dir_.file("nginx.conf"), config);
    child_ = std::make_unique<Child>(
        std::vector<std::string>{kNginx, "-p", d, "-c", dir_.file("nginx.conf"), "-e", dir_.file("error.log")});
    for (int attempt = 0; attempt < 1000 && !accepts_connections(port_); ++attempt) {
      if (auto exited = child_->wait(10ms)) {
        FAIL("nginx exited with ", *exited, ": ", read_file(dir_.file("error.log")));
      }
    }
    REQUIRE_MESSAGE(accepts_connections(port_), "nginx did not start listening on port ", port_);
  }

  [[nodiscard]] std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }

 private:
  TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<Child> child_;  // SIGTERM to the master (it stops its worker), by PID, always
};

// The body of a GET that must answer 200.
std::string fetch(http::Client& client, const std::string& url_text) {
  const ringlab::testing::Fetched fetched = ringlab::testing::fetch(client, url_text);
  CHECK(fetched.status == 200);
  return fetched.body;
}

}  // namespace

TEST_CASE("http::Client gets identical /weather bytes from nginx and from our server") {
  Nginx nginx;
  TestServer ours;
  auto ring = net::Ring::create();
  REQUIRE_MESSAGE(ring.has_value(), (ring ? std::string() : ring.error().message()));
  for (const ringlab::testing::ClientConfiguration& configuration : ringlab::testing::every_client_configuration()) {
    http::Client client(**ring, configuration.options);
    for (uint32_t count : kCounts) {
      INFO("count ", count, " ", configuration.label);
      const std::string from_nginx = fetch(client, nginx.url("/weather_" + std::to_string(count) + ".json"));
      const std::string from_ours = fetch(client, ours.url("/weather?count=" + std::to_string(count)));
      const std::string from_ours_chunked =
          fetch(client, ours.url("/weather?chunked=1&count=" + std::to_string(count)));
      CHECK(from_nginx.size() == from_ours.size());
      CHECK(from_nginx == from_ours);
      CHECK(from_nginx == from_ours_chunked);
      CHECK(json_array_size(from_nginx) == count);
    }
  }
}

TEST_CASE("our server's /proxy can use nginx as its upstream") {
  Nginx nginx;
  // nginx serves files, not /weather?count=N, so this checks the error path on a real peer: a
  // 404 from the upstream becomes our 502.
  TestServer ours(proxying_to(nginx.url("")));
  RawClient client(ours.port());
  CHECK(error_answer(client, "/proxy?count=10", 502).find("404") != std::string::npos);
}
