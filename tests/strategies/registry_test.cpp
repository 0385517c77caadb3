// The registry: what bench knows the strategies by.
#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <span>
#include <string>
#include <vector>
#include <string_view>
#include <tuple>

#include "recipe.hpp"
#include "ringlab/strategies/strategy.hpp"
#include "../support/same_fields.hpp"

namespace ringlab::strategies {
namespace {

// The built-in rows are the recipe table's (strategies/src/registry.cpp), one Descriptor per recipe in
// the same order: the table is read here, never copied into a list of names.
TEST_CASE("the registry lists every recipe once, in table order, with a description and a seed pattern") {
  const std::span<const detail::Recipe> recipes = detail::recipes();
  REQUIRE(registry().size() >= recipes.size());
  CHECK(recipes.size() > 40);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    const detail::Recipe& recipe = recipes[i];
    const Descriptor& descriptor = registry()[i];
    INFO(recipe.name);
    ringlab::testing::check_same_fields(
        [](const auto& row) {
          return std::tie(row.name, row.description, row.mirrors, row.method, row.baseline, row.peer, row.reference,
                          row.partial_checksum);
        },
        descriptor, recipe);
    CHECK(names.insert(descriptor.name).second);
    CHECK_FALSE(descriptor.name.empty());
    CHECK_FALSE(descriptor.description.empty());
    CHECK_FALSE(descriptor.mirrors.empty());
    REQUIRE(static_cast<bool>(descriptor.make));
    CHECK(descriptor.make() != nullptr);
  }
}

// docs/strategies.md is written by hand; this holds it to the recipe table. A strategy's row names it in
// backquotes in the first cell of a table row ("| `presized` (mirrors) | ...").
std::set<std::string, std::less<>> names_in_first_cells(std::string_view page) {
  std::set<std::string, std::less<>> names;
  std::istringstream lines{std::string(page)};
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| ") || line.starts_with("|---")) continue;
    const std::string_view cell = std::string_view(line).substr(1, line.find('|', 1) - 1);
    for (std::size_t open = cell.find('`'); open != std::string_view::npos; open = cell.find('`', open)) {
      const std::size_t close = cell.find('`', open + 1);
      if (close == std::string_view::npos) break;
      const std::string_view name = cell.substr(open + 1, close - open - 1);
      const bool identifier = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                                                   std::string_view::npos;
      if (identifier) names.emplace(name);
      open = close + 1;
    }
  }
  return names;
}

TEST_CASE("docs/strategies.md has a row for every recipe and names no strategy the table lacks") {
  std::ifstream file(RINGLAB_SOURCE_DIR "/docs/strategies.md");
  REQUIRE(file.good());
  std::ostringstream page;
  page << file.rdbuf();
  const auto on_page = names_in_first_cells(page.str());
  std::set<std::string, std::less<>> in_table;
  for (const detail::Recipe& recipe : detail::recipes()) {
    in_table.emplace(recipe.name);
    CHECK_MESSAGE(on_page.contains(recipe.name), "docs/strategies.md has no row for ", recipe.name);
  }
  for (const std::string& name : on_page) {
    CHECK_MESSAGE(in_table.contains(name), "docs/strategies.md has a row for ", name, ", which no recipe is");
  }
  // The reader itself: a row naming two strategies, a code span that is no name, a line outside a table.
  CHECK(names_in_first_cells("| `a_b`, `c` with `--inflight N` | x `d` |\n|---|---|\ntext `e`\n") ==
        std::set<std::string, std::less<>>{"a_b", "c"});
}

TEST_CASE("table order: by method, then ringlab's stack, the peers and the reference rows") {
  auto rank = [](const Descriptor& descriptor) {
    const int group = descriptor.reference ? 2 : descriptor.peer ? 1 : 0;
    return static_cast<int>(descriptor.method) * 3 + group;
  };
  const std::span<const detail::Recipe> recipes = detail::recipes();
  for (std::size_t i = 1; i < recipes.size(); ++i) {
    INFO(registry()[i].name);
    CHECK(rank(registry()[i - 1]) <= rank(registry()[i]));
  }
}

TEST_CASE("a library peer's rows are one library's GET, POST and echo, made by the same maker") {
  for (const std::string_view library : {"libcurl_multi", "cpp_httplib", "beast", "cpprest", "curlpp"}) {
    INFO(library);
    const detail::Recipe* rows[3] = {};
    for (const detail::Recipe& recipe : detail::recipes()) {
      if (recipe.name == library) rows[0] = &recipe;
      if (recipe.name.starts_with(library) && recipe.name.substr(library.size()) == "_post") rows[1] = &recipe;
      if (recipe.name.starts_with(library) && recipe.name.substr(library.size()) == "_echo") rows[2] = &recipe;
    }
    REQUIRE((rows[0] != nullptr && rows[1] != nullptr && rows[2] != nullptr));
    CHECK(rows[0]->method == Method::get);
    CHECK(rows[1]->method == Method::post);
    CHECK(rows[2]->method == Method::echo);
    CHECK((rows[0]->make != nullptr));
    CHECK((rows[1]->make == rows[0]->make));
    CHECK((rows[2]->make == rows[0]->make));
  }
}

TEST_CASE("only three_fields has a partial checksum") {
  for (const Descriptor& descriptor : registry()) {
    INFO(descriptor.name);
    CHECK(descriptor.partial_checksum == (descriptor.name == "three_fields"));
  }
}

// bench --inflight N > 1 makes a case's strategy with Descriptor::make_inflight; a null one shows the case as
// not applicable. Only a row marked `inflight` has one, and that one makes a strategy: a peer's its own
// maker, a row of ringlab's stack InflightRecipeStrategy (so it names no maker) unless the row has code
// of its own (the streaming rows' InflightStreamingStrategy).
TEST_CASE("only the rows marked inflight have a many-in-flight factory") {
  const std::span<const detail::Recipe> recipes = detail::recipes();
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    const Descriptor& descriptor = registry()[i];
    INFO(descriptor.name);
    CHECK((descriptor.make_inflight != nullptr) == recipes[i].inflight);
    if (recipes[i].peer) CHECK(recipes[i].inflight == (recipes[i].make_inflight != nullptr));
    if (!recipes[i].peer && recipes[i].make == nullptr) CHECK((recipes[i].make_inflight == nullptr));
    if (descriptor.make_inflight != nullptr) CHECK(descriptor.make_inflight() != nullptr);
  }
  // The peers that run N in flight: epoll (one instance), libcurl_multi (one multi), blocking_sockets (N
  // worker threads) and beast's GET row (one io_context); their POST and echo rows one at a time.
  for (const std::string_view many :
       {"string_copy", "presized", "views", "provided_buffers", "provided_bundles", "provided_incremental",
        "provided_incremental_own", "fixed_buffers", "streaming",
        "streaming_array", "streaming_array_fresh", "epoll", "libcurl_multi", "blocking_sockets", "beast"}) {
    INFO(many);
    const Descriptor* descriptor = find(many);
    REQUIRE(descriptor != nullptr);
    REQUIRE((descriptor->make_inflight != nullptr));
    CHECK(descriptor->make_inflight() != nullptr);
  }
  for (const std::string_view one_at_a_time : {"single_enter", "pooled_string", "three_fields", "libcurl",
                                               "libcurl_multi_post", "libcurl_multi_echo", "beast_post", "beast_echo"}) {
    INFO(one_at_a_time);
    REQUIRE(find(one_at_a_time) != nullptr);
    CHECK((find(one_at_a_time)->make_inflight == nullptr));
  }
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
  for (const Payload payload : {Payload::weather, Payload::repos, Payload::github, Payload::profiles}) {
    INFO(payload_name(payload));
    CHECK(parse_payload(payload_name(payload)) == payload);
  }
  CHECK(payload_name(Payload::weather) == "weather");
  CHECK(payload_name(Payload::repos) == "repos");
  CHECK(payload_name(Payload::github) == "github");
  CHECK(payload_name(Payload::profiles) == "profiles");
  CHECK_FALSE(parse_payload("Weather").has_value());
  CHECK_FALSE(parse_payload("").has_value());
}

TEST_CASE("skip reasons name the missing kernel feature") {
  const net::RingFeatures none{};
  for (const char* name : {"provided_buffers", "provided_bundles", "provided_incremental", "provided_incremental_own",
                           "fixed_buffers", "send_zc"}) {
    INFO(std::string_view(name));
    auto strategy = find(name)->make();
    const auto reason = strategy->skip_reason(none);
    REQUIRE(reason.has_value());
    CHECK(reason->find("kernel lacks") != std::string::npos);
  }
  // Everything but bundle receives (and incremental rings): only the bundle row and the incremental row are
  // skipped, the bundle row's reason naming bundles.
  net::RingFeatures all{};
  all.send_zc = all.send_zc_report_usage = all.recv_multishot = all.provided_buffer_ring = all.fixed_buffers = true;
  const auto no_bundles = find("provided_bundles")->make()->skip_reason(all);
  REQUIRE(no_bundles.has_value());
  CHECK(no_bundles->find("IORING_RECVSEND_BUNDLE") != std::string::npos);
  all.recv_bundle = true;
  // And without incremental buffer rings: the incremental rows alone, named for them.
  for (const char* name : {"provided_incremental", "provided_incremental_own"}) {
    const auto no_incremental = find(name)->make()->skip_reason(all);
    REQUIRE(no_incremental.has_value());
    CHECK(no_incremental->find("IOU_PBUF_RING_INC") != std::string::npos);
  }
  all.provided_buffer_ring_incremental = true;
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
  config.payload = Payload::profiles;  // every row reads jos's 3-field DTO there
  const auto profiles_reason = strategy->skip_case(config);
  REQUIRE(profiles_reason.has_value());
  CHECK(profiles_reason->find("3-field DTO") != std::string::npos);
  CHECK(strategy->notes().find("stargazers_count, name and url only") != std::string::npos);
  // Every other row runs every payload, but floor_parse_minimal, the reader's yardstick, which reads weather
  // only, and token_loop, jos's Version 8 loop, which reads jos only.
  for (const Descriptor& descriptor : registry()) {
    if (descriptor.name == "three_fields" || descriptor.name == "floor_parse_minimal" ||
        descriptor.name == "token_loop") {
      continue;
    }
    INFO(descriptor.name);
    for (const Payload payload : {Payload::weather, Payload::repos, Payload::github, Payload::profiles}) {
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

  // The limit: rows added up to kMaxRegisteredStrategies, then a refusal; the rows never moved.
  const std::span<const Descriptor> before = registry();
  const Descriptor* const first_added = find("outside");
  static std::vector<std::string> names;  // the descriptors' names must outlive the registry
  names.reserve(kMaxRegisteredStrategies + 1);
  for (std::size_t i = 1; i <= kMaxRegisteredStrategies; ++i) {
    names.push_back("outside_" + std::to_string(i));
    const Descriptor extra{names.back(), "d", "m", Method::get, false, false, &make_outside};
    const Status status = register_strategy(extra);
    if (i < kMaxRegisteredStrategies) {
      REQUIRE(status.has_value());
    } else {
      REQUIRE_FALSE(status.has_value());
      CHECK(status.error().message.find("at most 64") != std::string::npos);
    }
  }
  CHECK(registry().size() == built_in + kMaxRegisteredStrategies);
  CHECK(registry().data() == before.data());
  CHECK(find("outside") == first_added);
}

}  // namespace
}  // namespace ringlab::strategies
