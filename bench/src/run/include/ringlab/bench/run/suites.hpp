#pragma once
// Suites: named sets of cases (strategy x payload x size) built from the strategy registry.
//
//   headline  the default: the copying baseline, the strategies that remove one copy or allocation
//             each, one library peer, blocking sockets and the two floors x 10, 1000, 10000 x weather;
//             it answers "which copies matter" in minutes
//   get    every GET strategy x sizes 10, 100, 1000, 10000 x weather (the full table)
//   repos  every GET strategy x sizes 10, 100, 1000, 10000 x repos (records of 1-2 KB each)
//   jos    the strategies of jos's Versions x 10, 100, 1000, 10000 x jos (his records, his 3-field DTO)
//   post   every POST strategy x sizes 10, 100, 1000, 10000 x weather bodies
//   proxy  every proxy row x 10, 50, 100 GETs of /proxy per op (the size is the requests per op)
//
// Cases are ordered by size, then by registry order (baseline first), which is the order of the
// table's groups. --filter keeps the strategies whose name matches one of its comma-separated
// globs (fnmatch(3): *, ?, [...]); the baseline is not added back, so a filtered run without it
// shows Ratio "?".
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/run/runner.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::bench {

// The fields in the order a row of the table (suites.cpp) names them, the description last.
struct Suite {
  std::string_view name;
  strategies::Method method = strategies::Method::get;
  strategies::Payload payload = strategies::Payload::weather;
  std::span<const std::size_t> sizes;
  // Every op does the same work whatever the size (echo: one small object): the suite's one size is
  // its only one, and --sizes is refused.
  bool fixed_size = false;
  // The strategies it runs, in this order; empty: every registered strategy of its method, in the
  // registry's order. A name the registry lacks is an error when the cases are built.
  std::span<const std::string_view> strategies = {};
  std::string_view description;
};

[[nodiscard]] std::span<const Suite> suites();
[[nodiscard]] const Suite* find_suite(std::string_view name);

// Whether `name` matches one of the comma-separated globs of `filter` ("*" matches everything).
[[nodiscard]] bool filter_matches(std::string_view filter, std::string_view name);

// "10,100,1000" -> sizes; each a positive integer, no repeats.
[[nodiscard]] Result<std::vector<std::size_t>> parse_sizes(std::string_view list);

// "1,4,64" -> in-flight counts (bench --inflight); each a positive integer, no repeats, none above
// `max_inflight` (each request in flight holds a connection, so a file descriptor, on both sides).
inline constexpr std::size_t kDefaultMaxInflight = 1024;
[[nodiscard]] Result<std::vector<std::size_t>> parse_inflight(std::string_view list,
                                                              std::size_t max_inflight = kDefaultMaxInflight);

// bench --client-threads: at most kMaxClientThreadsLimit whatever --max-client-threads says, and by
// default no more than the CPUs this process may use (each client thread gets a CPU of its own).
inline constexpr std::size_t kMaxClientThreadsLimit = 1024;
[[nodiscard]] std::size_t default_max_client_threads();
// The reason `threads` client threads are refused, or nullopt: above `max_threads`, or with --counters
// (perf_event counters count the runner's thread, which waits while the client threads work).
[[nodiscard]] std::optional<std::string> check_client_threads(std::size_t threads, std::size_t max_threads,
                                                              bool counters);

struct Selection {
  std::string filter = "*";
  std::optional<std::vector<std::size_t>> sizes;  // instead of the suite's
  std::optional<strategies::Payload> payload;     // instead of the suite's
  strategies::Connection connection = strategies::Connection::pooled;  // every case's
  strategies::ServerMode server_mode = strategies::ServerMode::cached;  // every case's
  // Each case is run with each of these clients (bench --client), in this order.
  std::vector<strategies::Client> clients{strategies::Client::pooled};
  // Each size is run at each of these (bench --inflight), in this order; {1}: one request in flight.
  std::vector<std::size_t> inflight{1};
  std::size_t client_threads = 1;  // every case's (bench --client-threads; CaseSpec::client_threads)
  strategies::RingGeometry ring{};  // every case's (bench --ring-buffers, --ring-buffer-bytes)
  std::string host = "127.0.0.1";
  uint16_t port = 0;
};

// The suite's cases from `registry`. Error when nothing is left ("filter 'x' matches no POST
// strategy; POST strategies: send_copy, writev, send_zc").
[[nodiscard]] Result<std::vector<CaseSpec>> build_cases(const Suite& suite,
                                                        std::span<const strategies::Descriptor> registry,
                                                        const Selection& selection);

// What --list prints: the suites, then every strategy with its method, description and mirror.
[[nodiscard]] std::string render_list(std::span<const strategies::Descriptor> registry);

}  // namespace ringlab::bench
