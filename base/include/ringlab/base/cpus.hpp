#pragma once
// The CPUs the calling thread may run on: its affinity mask (inherited from the process, a taskset
// or a cpuset), as CPU numbers. The one place ringlab reads the mask: bench places its client and
// embedded server by it, and the server reports its workers' CPUs by it (GET /env).
//
// Threads: any; each thread reads its own mask. Errors: none; empty when the kernel refuses to tell
// (sched_getaffinity fails), which callers treat as "unknown".
#include <vector>

namespace ringlab::base {

// Ascending.
[[nodiscard]] std::vector<int> allowed_cpus();

}  // namespace ringlab::base
