#pragma once
// The seeds' mapping as data: for each .NET write-up ringlab grew out of (docs/seeds.md), one SeedRow per
// method it measured, named as the write-up names it, with the ringlab strategy and bench flags that do
// what that method does with the bytes, and the figures the write-up published. The seeds page's command
// runs the rows under the seed's conditions (Seed::server_mode, fresh objects) and prints the published
// figures beside ringlab's.
//
// Header-only constant data: every string is a literal and every table lives for the program. No
// dependency on bench's parts or on strategies: a test checks that every strategy named is registered.
#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>

namespace ringlab::bench::seeds {

// A published figure the seed does not give (a size it did not run, a column it has not).
inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

struct SeedRow {
  std::string_view method = {};    // as the seed names it
  std::string_view strategy = {};  // the ringlab strategy (a registered name)
  std::string_view flags = {};     // extra bench flags, e.g. "--client fresh"; empty for none
  // Per size, in the seed's order (Seed::sizes); kNone where the seed has no figure.
  std::array<double, 4> published_ratio{kNone, kNone, kNone, kNone};
  std::array<double, 4> published_alloc_ratio{kNone, kNone, kNone, kNone};
  bool beyond_seed = false;  // the row does something no method of the seed does (models reused, ...)
  std::string_view same = {};     // what the ringlab row does as the seed's method does
  std::string_view differs = {};  // what it does otherwise, and where a published figure was derived
};

struct Seed {
  std::string_view name = {};
  std::string_view suite = {};  // the bench suite its rows run in
  // The sizes (records per request, or the suite's fixed size) the published figures are for, in the
  // seed's order; 0 for a slot the seed has no size in.
  std::array<std::size_t, 4> sizes{};
  std::string_view server_mode = {};  // strategies::parse_server_mode's names: "seed" for the seeds' conditions
  std::span<const SeedRow> rows = {};
  std::string_view baseline_method = {};  // the row the seed's ratios are against
};

}  // namespace ringlab::bench::seeds
