// The registry: what bench knows the strategies by.
#include <doctest/doctest.h>

#include <memory>
#include <set>
#include <string>

#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies {
namespace {

TEST_CASE("the registry lists every strategy of the issue once, with a description and a seed pattern") {
  const char* expected[] = {"string_copy",      "exact_string",     "buffered_stream", "presized",
                            "presized_fresh",   "views",            "three_fields",    "nlohmann",
                            "rapidjson",
                            "arena",            "arena_pool",       "mimalloc_heap",   "provided_buffers",
                            "fixed_buffers",    "streaming",        "streaming_array", "chunked",
                            "fresh_connection", "libcurl",          "blocking_sockets", "epoll",
                            "libcurl_multi",    "cpp_httplib",      "beast",           "cpprest",
                            "curlpp",           "floor_transfer",   "floor_parse",     "send_copy",
                            "writev",           "send_zc",          "libcurl_multi_post", "cpp_httplib_post",
                            "beast_post",       "cpprest_post",     "curlpp_post",     "proxy_pooled",
                            "proxy_fresh",      "proxy_pooled_body", "proxy_fresh_body", "echo",
                            "echo_fresh",       "libcurl_echo",     "libcurl_multi_echo", "cpp_httplib_echo",
                            "beast_echo",       "cpprest_echo",     "curlpp_echo",     "single_enter"};
  std::set<std::string_view> names;
  for (const Descriptor& descriptor : registry()) {
    INFO(descriptor.name);
    CHECK(names.insert(descriptor.name).second);
    CHECK_FALSE(descriptor.description.empty());
    CHECK_FALSE(descriptor.mirrors.empty());
    REQUIRE(static_cast<bool>(descriptor.make));
    CHECK(descriptor.make() != nullptr);
  }
  for (const char* name : expected) {
    INFO(std::string_view(name));
    CHECK(names.contains(name));
  }
  CHECK(names.size() == std::size(expected));
}

TEST_CASE("the floors are GET reference rows, and nothing else is") {
  for (const Descriptor& descriptor : registry()) {
    INFO(descriptor.name);
    const bool floor = descriptor.name.starts_with("floor_");
    CHECK(descriptor.reference == floor);
    if (floor) {
      CHECK(descriptor.method == Method::get);
      CHECK_FALSE(descriptor.baseline);
    }
  }
}

TEST_CASE("each method has exactly one baseline, listed before the method's other strategies") {
  for (const Method method : {Method::get, Method::post, Method::proxy, Method::echo}) {
    bool seen_other = false;
    int baselines = 0;
    for (const Descriptor& descriptor : registry()) {
      if (descriptor.method != method) continue;
      INFO(descriptor.name);
      if (descriptor.baseline) {
        ++baselines;
        CHECK_FALSE(seen_other);
      } else {
        seen_other = true;
      }
    }
    CHECK(baselines == 1);
  }
  CHECK(find("string_copy")->baseline);
  CHECK(find("send_copy")->baseline);
  CHECK(find("proxy_pooled")->baseline);
  CHECK(find("echo")->baseline);
}

TEST_CASE("find() returns the row of a name and null for an unknown one") {
  const Descriptor* presized = find("presized");
  REQUIRE(presized != nullptr);
  CHECK(presized->name == "presized");
  CHECK(find("") == nullptr);
  CHECK(find("Presized") == nullptr);
  CHECK(find("no_such_strategy") == nullptr);
}

TEST_CASE("peers are flagged; POST strategies are the three of /echo and the library peers' POST rows; echo rows") {
  for (const Descriptor& descriptor : registry()) {
    INFO(descriptor.name);
    const std::string_view name = descriptor.name;
    bool library_peer = false;
    bool library_post = false;
    bool library_echo = false;
    for (const std::string_view library : {"libcurl_multi", "cpp_httplib", "beast", "cpprest", "curlpp"}) {
      library_peer = library_peer || name == library;
      library_post = library_post || (name.starts_with(library) && name.substr(library.size()) == "_post");
      library_echo = library_echo || (name.starts_with(library) && name.substr(library.size()) == "_echo");
    }
    library_echo = library_echo || name == "libcurl_echo";
    CHECK(descriptor.peer == (name == "libcurl" || name == "blocking_sockets" || name == "epoll" || library_peer ||
                              library_post || library_echo));
    CHECK((descriptor.method == Method::echo) == (name == "echo" || name == "echo_fresh" || library_echo));
    CHECK((descriptor.method == Method::post) ==
          (name == "send_copy" || name == "writev" || name == "send_zc" || library_post));
    CHECK((descriptor.method == Method::proxy) == name.starts_with("proxy_"));
  }
}

TEST_CASE("payload names read back") {
  for (const Payload payload : {Payload::weather, Payload::repos, Payload::github}) {
    INFO(payload_name(payload));
    CHECK(parse_payload(payload_name(payload)) == payload);
  }
  CHECK(payload_name(Payload::weather) == "weather");
  CHECK(payload_name(Payload::repos) == "repos");
  CHECK(payload_name(Payload::github) == "github");
  CHECK_FALSE(parse_payload("Weather").has_value());
  CHECK_FALSE(parse_payload("").has_value());
}

TEST_CASE("skip reasons name the missing kernel feature") {
  const net::RingFeatures none{};
  for (const char* name : {"provided_buffers", "fixed_buffers", "send_zc"}) {
    INFO(std::string_view(name));
    auto strategy = find(name)->make();
    const auto reason = strategy->skip_reason(none);
    REQUIRE(reason.has_value());
    CHECK(reason->find("kernel lacks") != std::string::npos);
  }
  net::RingFeatures all{};
  all.send_zc = all.send_zc_report_usage = all.recv_multishot = all.provided_buffer_ring = all.fixed_buffers = true;
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.name == "mimalloc_heap") continue;  // depends on the library, not the kernel
    INFO(descriptor.name);
    CHECK_FALSE(descriptor.make()->skip_reason(all).has_value());
  }
}

TEST_CASE("three_fields: jos's Version 8, a GET row that reads github (and repos) records and skips weather") {
  const Descriptor* three = find("three_fields");
  REQUIRE(three != nullptr);
  CHECK(three->method == Method::get);
  CHECK_FALSE(three->baseline);
  CHECK_FALSE(three->peer);
  CHECK(three->mirrors.find("Version 8") != std::string_view::npos);
  CHECK(three->description.find("three fields") != std::string_view::npos);
  auto strategy = three->make();
  CaseConfig config;
  config.payload = Payload::weather;
  const auto reason = strategy->skip_case(config);
  REQUIRE(reason.has_value());
  CHECK(reason->find("three_fields reads jos's github records only") != std::string::npos);
  config.payload = Payload::github;
  CHECK_FALSE(strategy->skip_case(config).has_value());
  config.payload = Payload::repos;
  CHECK_FALSE(strategy->skip_case(config).has_value());
  CHECK(strategy->notes().find("stargazers_count, name and url only") != std::string::npos);
  // Every other row runs every payload.
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.name == "three_fields") continue;
    INFO(descriptor.name);
    for (const Payload payload : {Payload::weather, Payload::repos, Payload::github}) {
      config.payload = payload;
      CHECK_FALSE(descriptor.make()->skip_case(config).has_value());
    }
  }
}

// A strategy from outside the tree: what register_strategy() adds. It never runs here.
class Outside final : public Strategy {
 public:
  Status setup(const CaseConfig&) override { return {}; }
  Result<Outcome> run(http::Timeline*, Check) override { return Outcome{}; }
};
std::unique_ptr<Strategy> make_outside() { return std::make_unique<Outside>(); }

// Last in this file: the rows it registers stay for the rest of the process.
TEST_CASE("register_strategy adds a row after the built-in ones, and refuses what would break the table") {
  const std::size_t built_in = registry().size();
  const Descriptor outside{"outside", "a strategy registered at run time", "(none)", Method::get, false, false,
                           &make_outside};
  REQUIRE(register_strategy(outside).has_value());
  REQUIRE(registry().size() == built_in + 1);
  CHECK(registry().back().name == "outside");
  REQUIRE(find("outside") != nullptr);
  CHECK(find("outside")->make() != nullptr);
  CHECK(find("string_copy") == &registry().front());  // the built-in rows keep their order

  struct Row {
    Descriptor descriptor;
    std::string_view reason;
  };
  const Row refused[] = {
      {Descriptor{"", "d", "m", Method::get, false, false, &make_outside}, "needs a name"},
      {Descriptor{"no_make", "d", "m", Method::get, false, false, nullptr}, "no_make has no make()"},
      {Descriptor{"outside", "d", "m", Method::get, false, false, &make_outside}, "outside is already registered"},
      {Descriptor{"presized", "d", "m", Method::get, false, false, &make_outside}, "presized is already registered"},
      {Descriptor{"second_baseline", "d", "m", Method::get, true, false, &make_outside}, "cannot be a baseline"},
  };
  for (const Row& row : refused) {
    INFO(row.descriptor.name);
    const Status status = register_strategy(row.descriptor);
    REQUIRE_FALSE(status.has_value());
    CHECK(status.error().message.find(row.reason) != std::string::npos);
  }
  CHECK(registry().size() == built_in + 1);
}

}  // namespace
}  // namespace ringlab::strategies
