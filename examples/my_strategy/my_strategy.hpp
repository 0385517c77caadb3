#pragma once
// my_strategy: a strategy written outside ringlab's tree, against its installed headers only.
#include "ringlab/strategies/strategy.hpp"

namespace my {

// The row bench lists it by; main() registers it with ringlab::strategies::register_strategy().
[[nodiscard]] const ringlab::strategies::Descriptor& my_strategy_descriptor();

}  // namespace my
