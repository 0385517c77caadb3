// bench: the measurement harness's executable. Everything it does lives in the ringlab_bench
// library (cli.hpp), where it is tested; this file only hands over the arguments.
#include "ringlab/bench/app/cli.hpp"

int main(int argc, char** argv) { return ringlab::bench::run_bench(argc, argv); }
