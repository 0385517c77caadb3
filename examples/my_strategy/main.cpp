// my_bench: ringlab's bench with one more strategy. It registers my_strategy, then runs bench's own
// command line, so every option, report format and table of bench works for it too.
#include <cstdio>

#include "my_strategy.hpp"
#include "ringlab/bench/app/cli.hpp"

int main(int argc, char** argv) {
  if (auto registered = ringlab::strategies::register_strategy(my::my_strategy_descriptor()); !registered) {
    std::fprintf(stderr, "my_bench: %s\n", registered.error().message.c_str());
    return 2;
  }
  return ringlab::bench::run_bench(argc, argv);
}
