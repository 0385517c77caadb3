#pragma once
// One iteration of a case: its timed ops between two clock readings, and the verified ops (the full
// checksum, outside the clock) before them and at a random place among them. The runner
// (runner.cpp) decides how many iterations of how many ops each case gets and in which order;
// this is what one of them does. Internal to bench/src/run.
//
// Errors: a failed op, a checksum or a consumption fold that differs from the case's first one
// returns nullopt (or false) with CaseState::failure saying which iteration and op. Threads: the
// runner's thread. Lifetimes: holds the RunContext by pointer; it must outlive this object.
#include <cstdint>
#include <optional>
#include <string_view>

#include "case_state.hpp"
#include "ringlab/bench/run/runner.hpp"

namespace ringlab::bench {

class IterationRunner {
 public:
  // `phases`: stamp the phase timeline of sampled ops; `memory`: count allocations around the timed
  // ops of measured iterations (the memory diagnoser is interposed).
  IterationRunner(const RunContext& context, bool phases, bool memory);

  // One iteration of `ops` timed calls. Verification runs outside the clock on extra ops: one before
  // the timed ones and, when there are two or more, one between them at a random place, so a strategy
  // that reads wrong data fails its case whichever op goes wrong. Returns the timed ticks, or nullopt
  // with s.failure set. `measured`: the iteration's allocations, page faults, I/O and hooks count.
  std::optional<uint64_t> run(CaseState& s, uint64_t ops, bool measured, std::string_view stage, unsigned number);

 private:
  bool verified_op(CaseState& s, bool measured, std::string_view stage, unsigned number);
  bool check_consumed(CaseState& s, uint64_t consumed, std::string_view stage, unsigned number, uint64_t op);
  std::optional<uint64_t> timed_segment(CaseState& s, uint64_t first, uint64_t last, bool measured,
                                        std::string_view stage, unsigned number);
  // The same with client threads (CaseState::threads): `ops` on every thread at once.
  std::optional<uint64_t> threaded_segment(CaseState& s, uint64_t ops, bool measured, std::string_view stage,
                                           unsigned number);

  const RunContext* context_;
  bool phases_;
  bool memory_;
};

}  // namespace ringlab::bench
