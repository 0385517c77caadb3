// ServerStats by name: the counter table, sums, and the JSON form GET /stats answers.
#include <cstddef>
#include <string>

#include "ringlab/server/server.hpp"

namespace ringlab::server {

const std::array<ServerCounter, 21> kServerCounters{{
    {"accepted", &ServerStats::accepted},
    {"refused", &ServerStats::refused},
    {"closed", &ServerStats::closed},
    {"requests", &ServerStats::requests},
    {"bad_requests", &ServerStats::bad_requests},
    {"idle_closed", &ServerStats::idle_closed},
    {"recv_rearmed", &ServerStats::recv_rearmed},
    {"accept_errors", &ServerStats::accept_errors},
    {"connection_errors", &ServerStats::connection_errors},
    {"upstream_errors", &ServerStats::upstream_errors},
    {"upstream_retries", &ServerStats::upstream_retries},
    {"upstream_idle_dropped", &ServerStats::upstream_idle_dropped},
    {"cache_hits", &ServerStats::cache_hits},
    {"cache_misses", &ServerStats::cache_misses},
    {"sends", &ServerStats::sends},
    {"read_pauses", &ServerStats::read_pauses},
    {"zc_sends", &ServerStats::zc_sends},
    {"zc_copied", &ServerStats::zc_copied},
    {"fixed_fallbacks", &ServerStats::fixed_fallbacks},
    {"file_fallbacks", &ServerStats::file_fallbacks},
    {"serialized_chunks", &ServerStats::serialized_chunks},
}};

// A counter added to ServerStats but not to the table above would be left out of sums and /stats.
static_assert(sizeof(ServerStats) == kServerCounters.size() * sizeof(uint64_t),
              "every ServerStats counter needs its row in kServerCounters");

ServerStats& operator+=(ServerStats& total, const ServerStats& one) noexcept {
  for (const ServerCounter& counter : kServerCounters) total.*counter.field += one.*counter.field;
  return total;
}

std::string stats_json(const ServerStats& stats) {
  std::string out = "{";
  for (const ServerCounter& counter : kServerCounters) {
    if (out.size() > 1) out += ',';
    out += '"';
    out += counter.name;
    out += "\":";
    out += std::to_string(stats.*counter.field);
  }
  out += '}';
  return out;
}

}  // namespace ringlab::server
