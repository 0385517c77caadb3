// Bad responses, from a raw-socket server that answers every request with the same canned bytes: a
// body cut short, a Content-Length shorter or longer than the body, bad chunk framing, invalid JSON,
// valid JSON with the wrong records, an error status, a server that stalls. Every strategy (GET and
// POST alike: they all read a response) must return an error that names the case, and never crash,
// hang (every wait is bounded by CaseConfig::timeout) or report a checksum. The strategies that need a
// kernel feature have feature-gated cases of their own (fixtures.hpp's strategies()). rapidjson_strict's
// row refuses invalid UTF-8 that rapidjson's row reads through: the flag reaches the Reader.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fixtures.hpp"
#include "../support/generated_bodies.hpp"

namespace ringlab::strategies::testing {
namespace {

constexpr std::size_t kCount = 3;

std::string weather_body(std::size_t count = kCount) {
  return ringlab::testing::generated_body(Payload::weather, count);
}

// Where the first record's summary text begins in a weather body.
std::size_t first_summary(const std::string& body) {
  const std::size_t key = body.find("\"summary\":\"");
  REQUIRE(key != std::string::npos);
  return key + 11;
}

std::string with_length(std::string_view body, std::size_t content_length, std::string_view extra = {}) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(content_length) +
         "\r\n" + std::string(extra) + "\r\n" + std::string(body);
}

struct BadCase {
  const char* name;
  std::string response;
  bool close_after = true;
  bool stall = false;
  bool ends_by_close = false;  // the server's close, not ringlab's deadline, must end the request
};

bool says_timeout(const std::string& error) {
  return error.find("timed out") != std::string::npos || error.find("timeout") != std::string::npos ||
         error.find("ETIMEDOUT") != std::string::npos;
}

std::vector<BadCase> bad_cases() {
  const std::string body = weather_body();
  std::vector<BadCase> cases;
  cases.push_back({"body cut short, then close", with_length(body.substr(0, body.size() / 2), body.size())});
  cases.push_back({"Content-Length one byte shorter than the body", with_length(body, body.size() - 1)});
  cases.push_back({"Content-Length longer than the body, then close", with_length(body, body.size() + 10)});
  // A body of several pages announced and less than one sent: the mapped row, waiting for whole pages to map,
  // must see the peer go rather than wait for the deadline.
  cases.push_back({"several pages announced, less than one sent, then close", with_length(body, 16 * 4096), true,
                   false, true});
  // Nothing of it sent: the mapped row's mapping call meets the end of the stream (the kernel's EIO), which is
  // the response's truncation, not a failed call.
  cases.push_back({"several pages announced, none sent, then close", with_length("", 16 * 4096), true, false, true});
  cases.push_back({"Content-Length longer than the body, connection held open", with_length(body, body.size() + 10),
                   false});
  cases.push_back({"chunk size that is not hex",
                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + body + "\r\n0\r\n\r\n"});
  cases.push_back({"chunk shorter than its size line says",
                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                       [&] {
                         char size[32];
                         std::snprintf(size, sizeof(size), "%zx", body.size() + 5);
                         return std::string(size);
                       }() +
                       "\r\n" + body + "\r\n0\r\n\r\n"});
  cases.push_back({"chunk data not followed by CRLF",
                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[{X\r\n0\r\n\r\n"});
  cases.push_back({"chunked body that never ends, then close",
                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[{\"da\r\n"});
  const std::string invalid = R"([{"date":"2024-01-01","temperatureC":oops,"summary":"Mild","temperatureF":32}])";
  cases.push_back({"invalid JSON", with_length(invalid, invalid.size()), false});
  const std::string wrong_type = R"([{"date":"2024-01-01","temperatureC":"5","summary":"Mild","temperatureF":32}])";
  cases.push_back({"a field of the wrong type", with_length(wrong_type, wrong_type.size()), false});
  const std::string fewer = weather_body(kCount - 1);
  cases.push_back({"valid JSON with one record fewer (wrong checksum)", with_length(fewer, fewer.size()), false});
  // The right records but for one field: only the full checksum of a verified op can tell.
  std::string altered = body;
  const std::size_t summary = first_summary(altered);
  altered[summary] = altered[summary] == 'X' ? 'Y' : 'X';
  cases.push_back({"one field altered (wrong checksum)", with_length(altered, altered.size()), false});
  const std::string not_json = "Hello, World!";
  cases.push_back({"not JSON at all", with_length(not_json, not_json.size()), false});
  const std::string error = R"({"error":"boom"})";
  cases.push_back({"status 500", "HTTP/1.1 500 Internal Server Error\r\nContent-Length: " +
                                     std::to_string(error.size()) + "\r\n\r\n" + error,
                   false});
  cases.push_back({"not HTTP", "SSH-2.0-OpenSSH_9.2\r\n"});
  cases.push_back({"close without a byte", ""});
  cases.push_back({"server that never answers", "", false, true});
  return cases;
}

void check_bad_responses(Needs group) {
  const std::vector<const Descriptor*> covered = strategies(group);
  for (const BadCase& bad : bad_cases()) {
    CannedServer server(bad.response, bad.close_after, bad.stall);
    for (const Descriptor* strategy : covered) {
      const Descriptor& descriptor = *strategy;
      CaseConfig config;
      config.port = server.port();
      config.count = kCount;
      // Short, so the cases where only the deadline can end the request stay quick.
      config.timeout = std::chrono::milliseconds(300);
      INFO("strategy " << descriptor.name << ", response: " << bad.name);
      const Outcome outcome = run_strategy(descriptor, config, 2);
      if (outcome.skipped) continue;  // a payload it has no way to read (skip_case)
      CHECK(outcome.checksums.empty());
      REQUIRE(outcome.error.has_value());
      INFO("error: " << *outcome.error);
      // Errors name the case.
      CHECK(outcome.error->starts_with(std::string(descriptor.name) + " weather 3: "));
      CHECK(outcome.error->size() > descriptor.name.size() + 12);
      // ringlab's own deadline says ETIMEDOUT (a library's text may name a timeout among the causes it cannot
      // tell apart, as cpp-httplib's does); a call that failed on the closed stream says EIO.
      if (bad.ends_by_close) {
        CHECK(outcome.error->find("ETIMEDOUT") == std::string::npos);
        CHECK(outcome.error->find("EIO") == std::string::npos);
      }
    }
  }
}

void check_stalled_server(Needs group) {
  CannedServer server("", false, true);
  for (const Descriptor* strategy : strategies(group)) {
    const Descriptor& descriptor = *strategy;
    CaseConfig config;
    config.port = server.port();
    config.count = kCount;
    config.timeout = std::chrono::milliseconds(200);
    INFO(descriptor.name);
    const Outcome outcome = run_strategy(descriptor, config, 1);
    if (outcome.skipped) continue;  // a payload it has no way to read (skip_case)
    REQUIRE(outcome.error.has_value());
    INFO(*outcome.error);
    CHECK(says_timeout(*outcome.error));
  }
}

// Both checks over the strategies of `group`, a subcase each.
void check_errors(Needs group) {
  SUBCASE("every bad response is an error, without crash, hang or checksum") { check_bad_responses(group); }
  SUBCASE("a stalled server fails the request with a timeout error") { check_stalled_server(group); }
}

TEST_CASE("every strategy turns bad responses and a stalled server into errors") {
  check_errors(Needs::nothing_of_the_kernel);
}

TEST_CASE("every strategy that needs a kernel feature turns bad responses and a stalled server into errors" *
          doctest::test_suite(ringlab::testing::kFeatureGated)) {
  check_errors(Needs::a_kernel_feature);
}

TEST_CASE("a strategy is usable again after an error: the next request opens a new connection") {
  // The first response is cut short; the server then closes. A strategy that kept the dead connection
  // or a half-parsed state would fail the next case differently or hang; each run must fail the same
  // clean way, with a new connection each time.
  const std::string body = weather_body();
  CannedServer server(with_length(body.substr(0, 10), body.size()));
  for (const char* name : {"presized", "blocking_sockets", "epoll", "libcurl", "streaming", "libcurl_multi",
                           "cpp_httplib", "beast", "cpprest", "curlpp"}) {
    const Descriptor* descriptor = find(name);
    REQUIRE(descriptor != nullptr);
    auto strategy = descriptor->make();
    CaseConfig config;
    config.port = server.port();
    config.count = kCount;
    config.timeout = std::chrono::milliseconds(300);
    INFO(std::string_view(name));
    REQUIRE_FALSE(strategy->setup(config));
    for (int i = 0; i < 2; ++i) {
      const uint64_t opened = strategy->io_counters().connections_opened;
      auto again = strategy->run(nullptr, Check::verify);
      REQUIRE_FALSE(again);
      INFO(again.error().message);
      CHECK(again.error().message.starts_with(std::string(name) + " weather 3: "));
      CHECK(strategy->io_counters().connections_opened == opened + 1);
    }
    strategy->teardown();
  }
}

TEST_CASE("rapidjson_strict's row refuses invalid UTF-8 in a string, which rapidjson's row reads through") {
  // The two rows differ by the Reader's flags alone, and the strict row's time cannot show that its flags
  // reached the Reader: what UTF-8 validation costs moves with the compiler's inlining of rapidjson's
  // validation (a build where it is inlined ran the strict row 20 % faster, validating all the same).
  std::string body = weather_body();
  body.replace(first_summary(body), 1, "\xC3\x28");  // a two-byte sequence whose second byte is not a continuation
  CannedServer server(with_length(body, body.size()), false);
  CaseConfig config;
  config.port = server.port();
  config.count = kCount;
  config.timeout = std::chrono::milliseconds(300);
  const Descriptor* strict = find("rapidjson_strict");
  const Descriptor* fast = find("rapidjson");
  REQUIRE(strict != nullptr);
  REQUIRE(fast != nullptr);
  const Outcome refused = run_strategy(*strict, config, 1);
  REQUIRE(refused.error.has_value());
  INFO(*refused.error);
  CHECK(refused.error->find("Invalid encoding in string") != std::string::npos);
  // The fast row reads the bytes as they are: the records parse, and only the checksum finds the field changed.
  const Outcome read = run_strategy(*fast, config, 1);
  REQUIRE(read.error.has_value());
  INFO(*read.error);
  CHECK(read.error->find("Invalid encoding") == std::string::npos);
  CHECK(read.error->find("checksum") != std::string::npos);
}

TEST_CASE("run() before setup() is an error, not a crash") {
  for (const Descriptor& descriptor : registry()) {
    INFO(descriptor.name);
    auto strategy = descriptor.make();
    auto result = strategy->run(nullptr, Check::consume);
    REQUIRE_FALSE(result);
    CHECK(result.error().message.find("setup") != std::string::npos);
  }
}

}  // namespace
}  // namespace ringlab::strategies::testing
