// Built by bench_part_order as a source of bench's core part: report comes after core, so its header
// must not be found there.
#include "ringlab/bench/report/reporters.hpp"

namespace ringlab::bench {
std::string part_order_refused() { return render_legend(); }
}  // namespace ringlab::bench
