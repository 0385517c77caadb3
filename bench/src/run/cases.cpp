// The identity of a case, the order of interleaved rounds, and the check of every case's checksum
// against its baseline's (runner.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <unordered_map>

#include "case_state.hpp"
#include "ringlab/bench/run/runner.hpp"

namespace ringlab::bench {

std::string case_name(const CaseSpec& spec) {
  const std::string_view strategy = spec.strategy != nullptr ? spec.strategy->name : "?";
  std::string name = fmt::format("{} {} {}", strategy, payload_text(spec.config.payload), spec.config.count);
  if (spec.config.inflight > 1) name += fmt::format(" x{}", spec.config.inflight);
  if (spec.config.client != strategies::Client::pooled) {
    name += spec.config.client == strategies::Client::fresh ? " fresh client" : " in-flight client";
  }
  if (spec.client_threads > 1) name += fmt::format(" t{}", spec.client_threads);
  return name;
}

std::size_t connections_held(std::span<const CaseSpec> cases) noexcept {
  std::size_t held = 0;
  for (const CaseSpec& spec : cases) {
    held += std::max<std::size_t>(spec.config.inflight, 1) * std::max<std::size_t>(spec.client_threads, 1);
  }
  return held;
}

void check_checksums(std::vector<CaseResult>& results) {
  std::unordered_map<std::string, const CaseResult*> baselines;
  for (const CaseResult& r : results) {
    if (r.baseline && r.status == CaseStatus::ok) baselines.emplace(case_key(r), &r);
  }
  for (CaseResult& r : results) {
    if (r.status != CaseStatus::ok || r.baseline || r.partial_checksum) continue;
    const auto found = baselines.find(case_key(r));
    if (found == baselines.end()) continue;
    const CaseResult& base = *found->second;
    if (r.checksum != base.checksum) {
      r.status = CaseStatus::failed;
      r.reason = fmt::format("checksum {:#018x} differs from baseline {}'s {:#018x}: the strategy read "
                             "different data",
                             r.checksum, base.strategy, base.checksum);
    }
  }
}

std::vector<std::size_t> interleave_order(std::size_t n, std::size_t round) {
  std::vector<std::size_t> order(n);
  for (std::size_t position = 0; position < n; ++position) {
    order[position] = (position + n - round % n) % n;
  }
  return order;
}

std::size_t balanced_rounds(std::size_t n, std::size_t at_least) noexcept {
  if (n == 0) return 0;
  return ((at_least + n - 1) / n) * n;
}

}  // namespace ringlab::bench
