#pragma once
// The server's environment as GET /env answers it: one flat JSON object of strings, so that a
// bench on another machine (or another namespace) can put both ends of a run into its report.
// Keys: kernel, os, cpu, cores, compiler, build_type, version, and the options that change what is
// measured (threads, cpu, bind, inline_body_bytes, cache_entries, ...). Read once, at start.
// Pure function of the options and the machine (/proc, uname); no threads.
#include <string>

#include "ringlab/server/server.hpp"

namespace ringlab::server {

[[nodiscard]] std::string describe_environment(const ServerOptions& options);

}  // namespace ringlab::server
