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

constexpr uint32_t kCounts[] = {0, 1, 10, 1000, 10000};


// The body of a GET that must answer 200.
std::string fetch(http::Client& client, const std::string& url_text) {
  const ringlab::testing::Fetched fetched = ringlab::testing::fetch(client, url_text);
  CHECK(fetched.status == 200);
  return fetched.body;
}

}  // namespace

TEST_CASE("http::Client gets identical /weather bytes from nginx and from our server") {
  Nginx nginx(kCounts);
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
  Nginx nginx(kCounts);
  // nginx serves files, not /weather?count=N, so this checks the error path on a real peer: a
  // 404 from the upstream becomes our 502.
  TestServer ours(proxying_to(nginx.url("")));
  RawClient client(ours.port());
  CHECK(error_answer(client, "/proxy?count=10", 502).find("404") != std::string::npos);
}
