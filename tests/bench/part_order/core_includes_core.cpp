// Built by bench_part_order as a source of bench's core part: a core header must compile there.
#include "ringlab/bench/core/table.hpp"

namespace ringlab::bench {
std::string part_order_allowed() { return format_number(1234.5, 1); }
}  // namespace ringlab::bench
