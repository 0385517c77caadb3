// Suites: which cases a suite, a filter and a size list make, in which order.
#include "ringlab/bench/run/suites.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

namespace rb = ringlab::bench;
namespace rs = ringlab::strategies;

namespace {

std::unique_ptr<rs::Strategy> make_nothing() { return nullptr; }

const rs::Descriptor kRegistry[] = {
    {"string_copy", "copies", "GetAsync + ReadAsStringAsync", rs::Method::get, true, false, &make_nothing},
    {"presized", "in place", "ResponseHeadersRead", rs::Method::get, false, false, &make_nothing},
    {"views", "views", "ResponseHeadersRead", rs::Method::get, false, false, &make_nothing},
    {"libcurl", "peer", "WebRequest", rs::Method::get, false, true, &make_nothing},
    {"send_copy", "post copy", "POST with body", rs::Method::post, true, false, &make_nothing},
    {"send_zc", "post zc", "POST with body", rs::Method::post, false, false, &make_nothing},
};

std::vector<std::string> names(const std::vector<rb::CaseSpec>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(rb::case_name(c));
  return out;
}

}  // namespace

TEST_CASE("the suites exist with their methods, payloads and sizes") {
  const rb::Suite* get = rb::find_suite("get");
  REQUIRE(get != nullptr);
  CHECK(get->method == rs::Method::get);
  CHECK(get->payload == rs::Payload::weather);
  CHECK(std::vector<std::size_t>(get->sizes.begin(), get->sizes.end()) == std::vector<std::size_t>{10, 100, 1000, 10000});
  REQUIRE(rb::find_suite("repos") != nullptr);
  CHECK(rb::find_suite("repos")->payload == rs::Payload::repos);
  const rb::Suite* github = rb::find_suite("github");
  REQUIRE(github != nullptr);
  CHECK(github->method == rs::Method::get);
  CHECK(github->payload == rs::Payload::github);
  CHECK(std::vector<std::size_t>(github->sizes.begin(), github->sizes.end()) ==
        std::vector<std::size_t>{10, 100, 1000, 10000});
  CHECK(std::string_view(github->description).find("22-field") != std::string_view::npos);
  REQUIRE(rb::find_suite("post") != nullptr);
  CHECK(rb::find_suite("post")->method == rs::Method::post);
  REQUIRE(rb::find_suite("proxy") != nullptr);
  CHECK(rb::find_suite("proxy")->method == rs::Method::proxy);
  CHECK(std::vector<std::size_t>(rb::find_suite("proxy")->sizes.begin(), rb::find_suite("proxy")->sizes.end()) ==
        std::vector<std::size_t>{10, 50, 100});
  const rb::Suite* echo = rb::find_suite("echo");
  REQUIRE(echo != nullptr);
  CHECK(echo->method == rs::Method::echo);
  CHECK(echo->fixed_size);
  CHECK(std::vector<std::size_t>(echo->sizes.begin(), echo->sizes.end()) == std::vector<std::size_t>{1});
  CHECK(rb::find_suite("nope") == nullptr);
}

TEST_CASE("a suite of fixed size refuses other sizes, and takes its own") {
  const rs::Descriptor registry[] = {
      {"echo", "echo", "HttpClient", rs::Method::echo, true, false, &make_nothing},
      {"echo_fresh", "echo fresh", "HttpWebRequest", rs::Method::echo, false, false, &make_nothing},
  };
  const rb::Suite& echo = *rb::find_suite("echo");
  const auto cases = rb::build_cases(echo, registry, rb::Selection{});
  REQUIRE(cases);
  CHECK(names(*cases) == std::vector<std::string>{"echo weather 1", "echo_fresh weather 1"});
  rb::Selection same;
  same.sizes = std::vector<std::size_t>{1};
  CHECK(rb::build_cases(echo, registry, same));
  rb::Selection other;
  other.sizes = std::vector<std::size_t>{10, 1};
  const auto refused = rb::build_cases(echo, registry, other);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("--sizes does not apply") != std::string::npos);
}

TEST_CASE("filters are comma-separated globs on the strategy name") {
  struct Row {
    const char* filter;
    const char* name;
    bool matches;
  };
  const Row rows[] = {
      {"*", "presized", true},          {"presized", "presized", true}, {"pre*", "presized", true},
      {"pre", "presized", false},       {"*copy*", "string_copy", true}, {"views,presized", "presized", true},
      {"views,libcurl", "presized", false}, {"", "presized", false},      {"?iews", "views", true},
      {"[pv]*", "views", true},
  };
  for (const Row& row : rows) {
    INFO("filter '" << row.filter << "' on " << row.name);
    CHECK(rb::filter_matches(row.filter, row.name) == row.matches);
  }
}

TEST_CASE("sizes parse as positive whole numbers without repeats") {
  CHECK(*rb::parse_sizes("10,100, 1000") == std::vector<std::size_t>{10, 100, 1000});
  for (const char* bad : {"", "0", "-1", "ten", "10,,100", "10,10", "1.5"}) {
    INFO("sizes '" << bad << "'");
    CHECK_FALSE(rb::parse_sizes(bad).has_value());
  }
}

TEST_CASE("in-flight counts parse as positive whole numbers without repeats, none above the limit") {
  CHECK(*rb::parse_inflight("1,4, 64") == std::vector<std::size_t>{1, 4, 64});
  CHECK(*rb::parse_inflight("1024") == std::vector<std::size_t>{1024});
  for (const char* bad : {"", "0", "-4", "four", "1,,4", "4,4", "2.5", "1025"}) {
    INFO("inflight '" << bad << "'");
    CHECK_FALSE(rb::parse_inflight(bad).has_value());
  }
  CHECK(rb::parse_inflight("1025").error().message ==
        "in-flight count 1025 is above --max-inflight 1024 (one connection, so one file descriptor, per request in "
        "flight)");
  CHECK(*rb::parse_inflight("1025", 2048) == std::vector<std::size_t>{1025});
  CHECK(rb::parse_inflight("64", 16).error().message.starts_with("in-flight count 64 is above --max-inflight 16"));
}

TEST_CASE("each size runs at each in-flight count, in the order given; counts above 1 refuse fresh connections") {
  rb::Selection selection;
  selection.sizes = std::vector<std::size_t>{10, 1000};
  selection.filter = "string_copy,views";
  selection.inflight = {1, 16};
  const auto cases = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE(cases.has_value());
  CHECK(names(*cases) == std::vector<std::string>{"string_copy weather 10", "views weather 10",
                                                 "string_copy weather 10 x16", "views weather 10 x16",
                                                 "string_copy weather 1000", "views weather 1000",
                                                 "string_copy weather 1000 x16", "views weather 1000 x16"});
  CHECK((*cases)[0].config.inflight == 1);
  CHECK((*cases)[2].config.inflight == 16);
  selection.connection = rs::Connection::fresh;
  const auto refused = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("--connection fresh") != std::string::npos);
  selection.inflight = {1};
  CHECK(rb::build_cases(*rb::find_suite("get"), kRegistry, selection).has_value());
}

TEST_CASE("the ring asked for (--ring-buffers, --ring-buffer-bytes) is every case's") {
  rb::Selection selection;
  selection.sizes = std::vector<std::size_t>{10, 1000};
  selection.filter = "string_copy,views";
  selection.inflight = {1, 16};
  selection.ring = {.buffers = 16, .buffer_bytes = 262144};
  const auto cases = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE(cases.has_value());
  REQUIRE(cases->size() == 8);
  for (const rb::CaseSpec& c : *cases) {
    CHECK(c.config.ring.buffers == 16);
    CHECK(c.config.ring.buffer_bytes == 262144);
  }
}

TEST_CASE("--client fresh is every case's, and refuses more than one in flight and --connection fresh") {
  rb::Selection selection;
  selection.sizes = std::vector<std::size_t>{10};
  selection.filter = "string_copy,views";
  selection.clients = {rs::Client::fresh};
  const auto cases = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE(cases.has_value());
  CHECK(names(*cases) == std::vector<std::string>{"string_copy weather 10 fresh client", "views weather 10 fresh client"});
  for (const rb::CaseSpec& c : *cases) CHECK(c.config.client == rs::Client::fresh);
  selection.inflight = {1, 4};
  const auto many = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE_FALSE(many.has_value());
  CHECK(many.error().message ==
        "--client fresh builds a client for one request per op: it does not combine with --inflight above 1");
  selection.inflight = {1};
  selection.connection = rs::Connection::fresh;
  const auto fresh_connection = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE_FALSE(fresh_connection.has_value());
  CHECK(fresh_connection.error().message ==
        "--client fresh already opens a new connection per request (the client's own): it does not combine with "
        "--connection fresh");
}

TEST_CASE("--client pooled,inflight: every row under each client in turn, the in-flight form at one request only") {
  rb::Selection selection;
  selection.sizes = std::vector<std::size_t>{10};
  selection.filter = "string_copy,views";
  selection.clients = {rs::Client::pooled, rs::Client::inflight};
  const auto cases = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE(cases.has_value());
  CHECK(names(*cases) == std::vector<std::string>{"string_copy weather 10", "views weather 10",
                                                  "string_copy weather 10 in-flight client",
                                                  "views weather 10 in-flight client"});
  selection.inflight = {1, 4};
  const auto many = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE_FALSE(many.has_value());
  CHECK(many.error().message.find("--client inflight") != std::string::npos);
  selection.inflight = {1};
  selection.clients.clear();
  CHECK_FALSE(rb::build_cases(*rb::find_suite("get"), kRegistry, selection).has_value());
}

TEST_CASE("a suite's cases go size by size, strategies in registry order, baseline first") {
  rb::Selection selection;
  selection.host = "127.0.0.1";
  selection.port = 40123;
  selection.sizes = std::vector<std::size_t>{10, 1000};
  selection.connection = rs::Connection::fresh;
  const auto cases = rb::build_cases(*rb::find_suite("get"), kRegistry, selection);
  REQUIRE(cases.has_value());
  CHECK(names(*cases) == std::vector<std::string>{"string_copy weather 10", "presized weather 10", "views weather 10",
                                                 "libcurl weather 10", "string_copy weather 1000",
                                                 "presized weather 1000", "views weather 1000",
                                                 "libcurl weather 1000"});
  for (const auto& c : *cases) {
    CHECK(c.config.port == 40123);
    CHECK(c.config.host == "127.0.0.1");
    CHECK(c.config.connection == rs::Connection::fresh);
  }
}

TEST_CASE("the suite's own sizes and payload apply unless overridden") {
  const auto repos = rb::build_cases(*rb::find_suite("repos"), kRegistry, rb::Selection{});
  REQUIRE(repos.has_value());
  CHECK(repos->size() == 4 * 4);  // 4 strategies at 10, 100, 1000 and 10000 records
  CHECK(repos->front().config.payload == rs::Payload::repos);
  CHECK(repos->back().config.count == 10000);
  CHECK(repos->front().config.connection == rs::Connection::pooled);

  rb::Selection selection;
  selection.filter = "presized";
  selection.payload = rs::Payload::weather;
  const auto overridden = rb::build_cases(*rb::find_suite("repos"), kRegistry, selection);
  REQUIRE(overridden.has_value());
  CHECK(overridden->size() == 4);  // the repos suite's four sizes
  CHECK(overridden->front().config.payload == rs::Payload::weather);
}

TEST_CASE("the post suite takes POST strategies only") {
  const auto cases = rb::build_cases(*rb::find_suite("post"), kRegistry, rb::Selection{});
  REQUIRE(cases.has_value());
  CHECK(cases->size() == 2 * 4);
  CHECK(cases->front().strategy->name == "send_copy");
}

TEST_CASE("a filter that leaves nothing is an error that lists what there is") {
  rb::Selection selection;
  selection.filter = "presized";
  const auto cases = rb::build_cases(*rb::find_suite("post"), kRegistry, selection);
  REQUIRE_FALSE(cases.has_value());
  CHECK(cases.error().message ==
        "filter 'presized' matches no POST strategy of suite post; POST strategies: send_copy, send_zc");
}

TEST_CASE("--list shows suites and every strategy with description and mirror") {
  const std::string list = rb::render_list(kRegistry);
  INFO(list);
  for (const char* line : {"get    GET /weather", "string_copy [baseline]", "libcurl [peer]",
                           "mirrors: GetAsync + ReadAsStringAsync", "POST strategies (suite post)"}) {
    INFO(line);
    CHECK(list.find(line) != std::string::npos);
  }
}

TEST_CASE("the headline suite is the default: its own strategies in its order, at 10, 1000 and 10000") {
  const rb::Suite& first = rb::suites().front();
  CHECK(first.name == "headline");
  CHECK(std::vector<std::size_t>(first.sizes.begin(), first.sizes.end()) == std::vector<std::size_t>{10, 1000, 10000});
  // Every name it lists is in the real registry, and its cases follow its order.
  const auto cases = rb::build_cases(first, rs::registry(), rb::Selection{});
  REQUIRE(cases.has_value());
  CHECK(cases->size() == first.strategies.size() * 3);
  for (std::size_t i = 0; i < first.strategies.size(); ++i) CHECK((*cases)[i].strategy->name == first.strategies[i]);
  // A registry that lacks one of them is an error naming it, not a shorter table.
  const auto missing = rb::build_cases(first, kRegistry, rb::Selection{});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message == "suite headline names provided_buffers, which is no registered GET strategy");
}

TEST_CASE("a run holds the sum over its cases of in flight x client threads connections") {
  std::vector<rb::CaseSpec> cases;
  CHECK(rb::connections_held(cases) == 0);
  for (const std::size_t inflight : {1, 4, 16, 64, 256}) {
    rb::CaseSpec spec;
    spec.strategy = &kRegistry[0];
    spec.config.inflight = inflight;
    cases.push_back(spec);
  }
  CHECK(rb::connections_held(cases) == 341);
  cases.back().client_threads = 2;  // 256 connections on each of two threads
  CHECK(rb::connections_held(cases) == 597);
  // Ten rows at those five counts and two sizes, one client thread: docs/measuring.md's sweep, above the
  // server's default of 4,096 connections, which bench raises for such a run.
  cases.back().client_threads = 1;
  std::vector<rb::CaseSpec> sweep;
  for (int rows_and_sizes = 0; rows_and_sizes < 20; ++rows_and_sizes) sweep.insert(sweep.end(), cases.begin(), cases.end());
  CHECK(rb::connections_held(sweep) == 6820);
}
