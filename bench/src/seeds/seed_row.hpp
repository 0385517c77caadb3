#pragma once
// SeedRow: one method of a seed (a published benchmark ringlab reproduces), mapped to the ringlab
// strategy and flags that stand for it, with the seed's own figures. Constant data for the seeds page.
#include <array>
#include <string_view>

namespace ringlab::bench::seeds {

struct SeedRow { std::string_view method; std::string_view strategy; std::string_view flags; std::array<double,4> published_ratio; std::array<double,4> published_alloc_ratio; bool beyond_seed; std::string_view same; std::string_view differs; };

}  // namespace ringlab::bench::seeds
