#pragma once
// What the tests that drive http::Client against a real server share: the client configurations
// every fetch is tried with, and one GET into a string that fails the test when the exchange fails.
//
// Lifetimes: fetch() parses the URL into views of `url_text`, which it holds for the call only.
// Threads: the test's thread.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ringlab/http/client.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/http/url.hpp"

namespace ringlab::testing {

struct ClientConfiguration {
  http::ClientOptions options;
  std::string label;  // "fresh=0 provided=1", for INFO
};

// Kept-alive and fresh connections, each with the client's own receive buffer and with
// kernel-provided buffers: the four ways the client reads a response.
inline std::vector<ClientConfiguration> every_client_configuration() {
  std::vector<ClientConfiguration> out;
  for (auto policy : {http::ConnectionPolicy::keep_alive, http::ConnectionPolicy::fresh_per_request}) {
    for (auto mode : {http::ReceiveMode::own_buffer, http::ReceiveMode::provided_buffers}) {
      ClientConfiguration configuration;
      configuration.options.connection = policy;
      configuration.options.receive = mode;
      configuration.label = std::string("fresh=") + (policy == http::ConnectionPolicy::fresh_per_request ? "1" : "0") +
                            " provided=" + (mode == http::ReceiveMode::provided_buffers ? "1" : "0");
      out.push_back(std::move(configuration));
    }
  }
  return out;
}

struct Fetched {
  int status = 0;
  std::string body;
};

// GET `url_text` through `client`, the body into a string. The URL must parse and the exchange must
// succeed (REQUIRE); any status is returned for the caller to check.
inline Fetched fetch(http::Client& client, const std::string& url_text) {
  auto url = http::Url::parse(url_text);
  REQUIRE_MESSAGE(url.has_value(), url_text);
  Fetched fetched;
  http::StringSink sink(fetched.body);
  auto response = client.get(*url, sink);
  REQUIRE_MESSAGE(response.has_value(), url_text, ": ", (response ? std::string() : response.error().message()));
  fetched.status = response->status;
  return fetched;
}

}  // namespace ringlab::testing
