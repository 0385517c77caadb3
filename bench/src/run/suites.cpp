#include "ringlab/bench/run/suites.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>
#include <fmt/format.h>

#include "ringlab/base/cpus.hpp"
#include "ringlab/bench/core/list.hpp"
#include "case_state.hpp"

namespace ringlab::bench {
namespace {

constexpr std::array<std::size_t, 4> kWeatherSizes{10, 100, 1000, 10000};
// Up to 10,000 repository records (about 15 MB), as jos measured.
constexpr std::array<std::size_t, 4> kReposSizes{10, 100, 1000, 10000};
// jos's GitHub dummy API answered 10, 100, 1,000 and 10,000 of its flat records (about 1 KB each).
constexpr std::array<std::size_t, 4> kGithubSizes{10, 100, 1000, 10000};
// jos's own records (GET /profiles: 21 keys, a tags array, two floats) at the sizes of his tables.
constexpr std::array<std::size_t, 4> kJosSizes{10, 100, 1000, 10000};
// The strategies his Versions map onto (bench/src/seeds/jos.hpp), each once, in the order of the first
// Version that uses it: string_copy (Versions 0-5: GetStringAsync + DeserializeObject; 0 and 1 with
// --client fresh), buffered_stream (6: ResponseContentRead, the content buffered), presized_fresh (7 and 9:
// ResponseHeadersRead, read from the stream into fresh objects), token_loop (8: the hand-written token
// loop), rapidjson_fresh (10: another library over the same stream as 9).
constexpr std::array<std::string_view, 5> kJosStrategies{"string_copy", "buffered_stream", "presized_fresh",
                                                         "token_loop", "rapidjson_fresh"};
// Requests per op of the proxy suite: the article's cycles.
constexpr std::array<std::size_t, 3> kProxyCycles{10, 50, 100};
// The echo suite posts one 17-byte object per op: its size column says 1.
constexpr std::array<std::size_t, 1> kEchoSize{1};

// The default run: which copies, allocations and system calls matter, in minutes rather than the
// full table's half hour. Each row after the baseline removes one thing: presized the string's
// growth, views the models' copies, provided_buffers the per-connection receive buffer, streaming the
// whole-body buffer; libcurl is the library peer, blocking_sockets the plain-socket one, and the
// floors bound what any strategy can reach.
constexpr std::array<std::size_t, 3> kHeadlineSizes{10, 1000, 10000};
constexpr std::array<std::string_view, 9> kHeadlineStrategies{
    "string_copy", "presized", "views", "provided_buffers", "streaming",
    "libcurl", "blocking_sockets", "floor_transfer", "floor_parse"};

constexpr std::array kSuites{
    Suite{.name = "headline", .sizes = kHeadlineSizes, .strategies = kHeadlineStrategies,
          .description = "GET /weather: the baseline, one-copy-less strategies, libcurl, blocking sockets and the floors "
                         "at 10, 1000 and 10000 records (default)"},
    Suite{.name = "get", .sizes = kWeatherSizes,
          .description = "GET /weather: every GET strategy at 10, 100, 1000 and 10000 records (the full table)"},
    Suite{.name = "repos", .payload = strategies::Payload::repos, .sizes = kReposSizes,
          .description = "GET /repos: every GET strategy at 10, 100, 1000 and 10000 repository records of 1-2 KB"},
    Suite{.name = "github", .payload = strategies::Payload::github, .sizes = kGithubSizes,
          .description = "GET /github: jos's flat 22-field repository records at 10, 100, 1000, 10000"},
    Suite{.name = "jos", .payload = strategies::Payload::profiles, .sizes = kJosSizes, .strategies = kJosStrategies,
          .description = "GET /profiles: jos's records (21 keys, tags, floats) read into his 3-field DTO by the strategies "
                         "of his Versions 0-10, at 10, 100, 1000, 10000"},
    Suite{.name = "post", .method = strategies::Method::post, .sizes = kWeatherSizes,
          .description = "POST /echo: every POST strategy sending 10, 100, 1000 and 10000 weather records"},
    Suite{.name = "proxy", .method = strategies::Method::proxy, .sizes = kProxyCycles,
          .description = "GET /proxy 10, 50 and 100 times per op: the server fetches from its upstream, pooled or fresh, "
                         "by hand or through its typed client"},
    Suite{.name = "echo", .method = strategies::Method::echo, .sizes = kEchoSize, .fixed_size = true,
          .description = "POST {\"lorem\":\"ipsum\"} (17 bytes) to /echo?chunked=1, answer read as a string: net-http-perf"},
};

// "get, repos, github": the suites that run a method's strategies, in the table's order.
std::string suites_of(strategies::Method method) {
  std::string names;
  for (const Suite& s : kSuites) {
    if (s.method == method) names += (names.empty() ? "" : ", ") + std::string(s.name);
  }
  return names;
}

}  // namespace

std::span<const Suite> suites() { return kSuites; }

const Suite* find_suite(std::string_view name) {
  for (const Suite& s : kSuites) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool filter_matches(std::string_view filter, std::string_view name) {
  const std::string subject(name);
  std::size_t pos = 0;
  while (pos <= filter.size()) {
    std::size_t comma = filter.find(',', pos);
    if (comma == std::string_view::npos) comma = filter.size();
    const std::string glob(filter.substr(pos, comma - pos));
    if (!glob.empty() && ::fnmatch(glob.c_str(), subject.c_str(), 0) == 0) return true;
    pos = comma + 1;
  }
  return false;
}

namespace {

// A comma-separated list of positive whole numbers, none repeated; `what` names one ("size", "in-flight
// count") and `unit` what it counts, for the errors.
Result<std::vector<std::size_t>> parse_counts(std::string_view list, std::string_view what, std::string_view unit) {
  std::vector<std::size_t> out;
  for (std::string_view item : split_list(list)) {
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value == 0) {
      return fail(fmt::format("{} '{}' is not a positive whole number of {}", what, item, unit));
    }
    if (std::find(out.begin(), out.end(), value) != out.end()) return fail(fmt::format("{} {} given twice", what, value));
    out.push_back(value);
  }
  return out;
}

}  // namespace

Result<std::vector<std::size_t>> parse_sizes(std::string_view list) { return parse_counts(list, "size", "records"); }

Result<std::vector<std::size_t>> parse_inflight(std::string_view list, std::size_t max_inflight) {
  auto counts = parse_counts(list, "in-flight count", "requests");
  if (!counts) return counts;
  for (const std::size_t n : *counts) {
    if (n > max_inflight) {
      return fail(fmt::format("in-flight count {} is above --max-inflight {} (one connection, so one file descriptor, "
                              "per request in flight)",
                              n, max_inflight));
    }
  }
  return counts;
}

std::size_t default_max_client_threads() { return std::max<std::size_t>(1, base::allowed_cpus().size()); }

std::optional<std::string> check_client_threads(std::size_t threads, std::size_t max_threads, bool counters) {
  if (threads > max_threads) {
    return fmt::format("{} is above --max-client-threads {} (default: the {} CPUs this process may use; client threads "
                       "beyond them share CPUs with each other and with the server)",
                       threads, max_threads, default_max_client_threads());
  }
  if (threads > 1 && counters) {
    return std::string("--counters reads perf_event counters of the runner's thread, which waits while the client "
                       "threads work: it does not combine with --client-threads above 1");
  }
  return std::nullopt;
}

Result<std::vector<CaseSpec>> build_cases(const Suite& suite, std::span<const strategies::Descriptor> registry,
                                          const Selection& selection) {
  std::vector<const strategies::Descriptor*> chosen;
  std::vector<std::string_view> of_method;
  const auto add = [&](const strategies::Descriptor& d) {
    of_method.push_back(d.name);
    if (filter_matches(selection.filter, d.name)) chosen.push_back(&d);
  };
  if (suite.strategies.empty()) {
    for (const strategies::Descriptor& d : registry) {
      if (d.method == suite.method) add(d);
    }
  } else {
    for (std::string_view name : suite.strategies) {
      const auto found = std::find_if(registry.begin(), registry.end(), [&](const strategies::Descriptor& d) {
        return d.name == name && d.method == suite.method;
      });
      if (found == registry.end()) {
        return fail(fmt::format("suite {} names {}, which is no registered {} strategy", suite.name, name,
                                method_text(suite.method)));
      }
      add(*found);
    }
  }
  if (chosen.empty()) {
    std::string names;
    for (std::string_view n : of_method) names += (names.empty() ? "" : ", ") + std::string(n);
    return fail(fmt::format("filter '{}' matches no {} strategy of suite {}; {} strategies: {}", selection.filter,
                            method_text(suite.method), suite.name, method_text(suite.method),
                            names.empty() ? "none registered" : names));
  }
  const std::vector<std::size_t> own_sizes(suite.sizes.begin(), suite.sizes.end());
  if (suite.fixed_size && selection.sizes && *selection.sizes != own_sizes) {
    return fail(fmt::format("suite {} does the same work at every op (size {}): --sizes does not apply", suite.name,
                            suite.sizes.front()));
  }
  const std::vector<std::size_t> sizes = selection.sizes ? *selection.sizes : own_sizes;
  if (selection.inflight.empty()) return fail("no in-flight count given");
  if (selection.connection == strategies::Connection::fresh &&
      std::any_of(selection.inflight.begin(), selection.inflight.end(), [](std::size_t n) { return n > 1; })) {
    return fail("--inflight above 1 keeps its connections alive between rounds: it does not combine with --connection "
                "fresh");
  }
  if (selection.clients.empty()) return fail("no client given");
  const bool many_in_flight =
      std::any_of(selection.inflight.begin(), selection.inflight.end(), [](std::size_t n) { return n > 1; });
  const auto asked = [&selection](strategies::Client client) {
    return std::find(selection.clients.begin(), selection.clients.end(), client) != selection.clients.end();
  };
  if (asked(strategies::Client::inflight) && many_in_flight) {
    return fail("--client inflight runs the N-in-flight form with one request in flight: with --inflight above 1 "
                "every pooled client is that form already");
  }
  if (asked(strategies::Client::fresh)) {
    if (many_in_flight) {
      return fail("--client fresh builds a client for one request per op: it does not combine with --inflight above "
                  "1");
    }
    // A fresh client's connection lives as long as the client, one request: --connection fresh would
    // only change the request's Connection header, and name one setting twice.
    if (selection.connection == strategies::Connection::fresh) {
      return fail("--client fresh already opens a new connection per request (the client's own): it does not "
                  "combine with --connection fresh");
    }
    if (selection.client_threads > 1) {
      return fail("--client fresh builds its client on the runner's thread: it does not combine with --client-threads "
                  "above 1");
    }
  }
  std::vector<CaseSpec> cases;
  for (std::size_t size : sizes) {
    for (std::size_t inflight : selection.inflight) {
      for (const strategies::Client client : selection.clients) {
        for (const strategies::Descriptor* d : chosen) {
          CaseSpec spec;
          spec.strategy = d;
          spec.config.host = selection.host;
          spec.config.port = selection.port;
          spec.config.payload = selection.payload.value_or(suite.payload);
          spec.config.connection = selection.connection;
          spec.config.server_mode = selection.server_mode;
          spec.config.count = size;
          spec.config.inflight = inflight;
          spec.config.client = client;
          spec.config.ring = selection.ring;
          spec.client_threads = std::max<std::size_t>(1, selection.client_threads);
          cases.push_back(std::move(spec));
        }
      }
    }
  }
  return cases;
}

std::string render_list(std::span<const strategies::Descriptor> registry) {
  std::string out = "Suites\n";
  for (const Suite& s : kSuites) out += fmt::format("  {:<6} {}\n", s.name, s.description);
  // One section per method, in the order the suite table first names it.
  std::vector<strategies::Method> listed;
  for (const Suite& suite : kSuites) {
    const strategies::Method method = suite.method;
    if (std::find(listed.begin(), listed.end(), method) != listed.end()) continue;
    listed.push_back(method);
    out += fmt::format("\n{} strategies (suite {})\n", method_text(method), suites_of(method));
    for (const strategies::Descriptor& d : registry) {
      if (d.method != method) continue;
      std::string tags;
      if (d.baseline) tags += " [baseline]";
      if (d.peer) tags += " [peer]";
      out += fmt::format("  {}{}\n      {}\n      mirrors: {}\n", d.name, tags, d.description, d.mirrors);
    }
  }
  return out;
}

}  // namespace ringlab::bench
