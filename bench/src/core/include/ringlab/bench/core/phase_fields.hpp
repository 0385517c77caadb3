#pragma once
// The timed fields of a case's Phases (results.hpp) as one list, in declaration order, for the code
// that treats every phase alike: the runner's medians (its Phase enum follows this order) and the
// phase table's one unit. Constant data; no state.
#include <array>
#include <optional>

#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench {

inline constexpr std::array<std::optional<double> Phases::*, 12> kPhaseFields{
    &Phases::connect, &Phases::send, &Phases::wait, &Phases::head, &Phases::body, &Phases::deserialize,
    &Phases::other, &Phases::first_body, &Phases::last_body, &Phases::client_free, &Phases::client_setup,
    &Phases::client_teardown};

}  // namespace ringlab::bench
