#pragma once
// Allocator jobs: the suite run once per malloc implementation, each in its own child process
// (`bench SUITE --allocators system,mimalloc,jemalloc,tcmalloc`).
//
// The parent plans one Job per requested allocator (plan_jobs), re-executes bench for each with
// LD_PRELOAD of that allocator's shared library (run_job) and merges the children's reports. A child
// proves what it runs on before measuring (verify_allocator) and puts it in its report. The libraries
// are the ones CMake found at configure time (RINGLAB_MIMALLOC_SO, RINGLAB_JEMALLOC_SO,
// RINGLAB_TCMALLOC_SO), or those in RINGLAB_ALLOCATOR_DIR when it is set (a relocatable bundle carries
// its own); an allocator whose library is missing is a Job with `missing` set, which the caller
// reports, never skips silently.
//
// Through a bundle's launchers (RINGLAB_BIN_DIR, server_process.hpp) bench runs under the bundle's
// own dynamic loader: /proc/self/exe is that loader, and LD_PRELOAD would also be loaded by the
// machine's loader into the launcher's shell, whose C library may be older than the allocator needs.
// There the child is "$RINGLAB_BIN_DIR/bench" and the library travels in RINGLAB_PRELOAD, which the
// launcher hands to its loader (--preload); launch_options() makes that choice.
//
// Detection: the allocator is the first loaded object, in the dynamic linker's binding order (main
// program, LD_PRELOAD libraries, dependencies), that defines malloc and is an allocator: it has
// mi_version (mimalloc), mallctl (jemalloc), tc_version (gperftools tcmalloc) or
// gnu_get_libc_version (glibc), and the version comes from that same object. An object that
// defines malloc but is none of these is taken for an interposer that forwards to the next
// definition (bench's memory diagnoser does, via dlsym(RTLD_NEXT)) and is listed as such; a
// sanitizer runtime ends the search as an unknown allocator. Asking whether `mi_version` merely
// resolves somewhere would be wrong: libmimalloc dlopen'ed later for mimalloc heaps has the symbol
// without serving malloc. Note that Debian's libmimalloc.so defines malloc itself:
// linked normally (DT_NEEDED) it replaces malloc for the whole process, and then the `system` job
// fails its verification instead of measuring mimalloc under the name of glibc.
//
// Sanitizers: AddressSanitizer replaces malloc and must be the first library loaded, so preloading
// another allocator into a sanitized bench aborts it. jobs_unsupported_reason() says so and allocator
// jobs need a build without RINGLAB_SANITIZE (tools/bench builds Release).
//
// Child protocol: the child's argv is the parent's without --allocators, plus the hidden options
// `--job-output-fd 3 --job-allocator NAME` (child_arguments). The child writes its whole report as
// JSON to fd 3 (write_report_fd in results.hpp) and exits 0; on failure it exits non-zero and may
// write an error text there instead, which run_job includes in its error. The child should mark fd 3
// close-on-exec as soon as it has parsed its options so that the server it forks does not hold the
// pipe open (run_job copes if it does: it stops reading when the child has exited).
//
// Errors: bench::Error with the whole story ("allocator job jemalloc (pid 4242): no result within
// 600000 ms; killed"). Nothing is retried.
//
// Ownership: everything returned is a value. run_job owns the pipe and the child until it returns;
// it never returns with the child still running.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/bench/core/error.hpp"
#include "ringlab/bench/core/results.hpp"

namespace ringlab::bench::alloc {

enum class Allocator : uint8_t {
  system,    // whatever the C library provides (glibc's ptmalloc on Debian); no LD_PRELOAD
  mimalloc,  // libmimalloc.so.2 (libmimalloc-dev)
  jemalloc,  // libjemalloc.so.2 (libjemalloc-dev)
  tcmalloc,  // libtcmalloc_minimal.so.4 from gperftools (libgoogle-perftools-dev)
};
inline constexpr std::array<Allocator, 4> kAllAllocators = {Allocator::system, Allocator::mimalloc,
                                                            Allocator::jemalloc, Allocator::tcmalloc};

[[nodiscard]] std::string_view allocator_name(Allocator allocator) noexcept;  // "system", "mimalloc", ...
[[nodiscard]] std::optional<Allocator> parse_allocator(std::string_view name) noexcept;

// "system,mimalloc" -> {system, mimalloc}. Spaces around names are ignored; an empty list, an empty
// item, an unknown name or a repeated one is an error naming it (without the option's name: the
// caller adds "--allocators: ").
[[nodiscard]] Result<std::vector<Allocator>> parse_allocator_list(std::string_view list);

// ---- Which allocator serves malloc in this process -----------------------------------------------

struct Detected {
  std::optional<Allocator> allocator;  // nullopt: something else serves malloc (a sanitizer runtime)
  std::string library;                 // file of the object whose malloc does the work
  std::string version;                 // "mimalloc 2.0.9", "jemalloc 5.3.0-0-g54eaed1d", "gperftools 2.10", "glibc 2.36"
  std::vector<std::string> interposers;  // objects whose malloc forwards to this one (bench's diagnoser)

  // "mimalloc 2.0.9 (/usr/lib/x86_64-linux-gnu/libmimalloc.so.2), called through /path/bench"; for
  // the report header.
  [[nodiscard]] std::string describe() const;
  // The short name for CaseResult::allocator and Environment::allocator: the allocator's name
  // ("system" for glibc) or, when unknown, the library's file name.
  [[nodiscard]] std::string name() const;
};

[[nodiscard]] Detected detect_allocator();

// Child side: Detected when this process runs on `expected`, else an error saying what it runs on
// instead ("allocator job mimalloc runs on glibc 2.36 (...libc.so.6): LD_PRELOAD=... did not take").
[[nodiscard]] Result<Detected> verify_allocator(Allocator expected);

// Why this process cannot run allocator jobs (it is sanitized), or nullopt when it can.
[[nodiscard]] std::optional<std::string> jobs_unsupported_reason();

// ---- Planning and running jobs (parent side) -----------------------------------------------------

// Shared libraries found at configure time; empty when CMake did not find one.
struct LibraryPaths {
  std::string mimalloc;
  std::string jemalloc;
  std::string tcmalloc;
};
// RINGLAB_ALLOCATOR_DIR, when set and not empty, replaces the configured paths with
// DIR/libmimalloc.so.2, DIR/libjemalloc.so.2 and DIR/libtcmalloc_minimal.so.4.
inline constexpr const char* kAllocatorDirVariable = "RINGLAB_ALLOCATOR_DIR";
[[nodiscard]] LibraryPaths configured_libraries();

struct Job {
  Allocator allocator = Allocator::system;
  std::string preload;                 // LD_PRELOAD value for the child; empty for system
  std::optional<std::string> missing;  // why the job cannot run: report it as a failed job
};

// One Job per requested allocator, in the order given. A library that was not found at configure
// time, or that is no longer readable, makes its job `missing` with the reason and the package.
[[nodiscard]] std::vector<Job> plan_jobs(std::span<const Allocator> allocators,
                                         const LibraryPaths& libraries = configured_libraries());

inline constexpr int kJobOutputFd = 3;  // the fd a child writes its report to

// The child's arguments (argv without argv[0]): `parent_args` without `--allocators LIST` or
// `--allocators=LIST`, then `--job-output-fd 3 --job-allocator NAME`.
[[nodiscard]] std::vector<std::string> child_arguments(std::span<const std::string> parent_args,
                                                       Allocator allocator);

// The variable a bundle's launcher turns into its loader's --preload.
inline constexpr const char* kLauncherPreloadVariable = "RINGLAB_PRELOAD";

struct ChildOptions {
  std::string executable = "/proc/self/exe";  // bench itself
  std::vector<std::string> arguments;         // argv[1...], e.g. from child_arguments()
  std::string preload_variable = "LD_PRELOAD";  // where the job's library goes in the child's environment
  // Limits, each with a CLI flag in bench (--job-timeout-ms, --job-max-output-mb):
  std::chrono::milliseconds timeout{std::chrono::hours(1)};  // a whole suite runs in the child
  std::size_t max_output_bytes = 256u << 20;                 // the child's report, samples included
};

// How to start bench again for a job: `self` (this bench's own path) and LD_PRELOAD, or under
// RINGLAB_BIN_DIR its launcher there and RINGLAB_PRELOAD. Only executable and preload_variable are set.
[[nodiscard]] ChildOptions launch_options(const std::string& self);

// Runs one job as a ChildProcess (child_process.hpp): puts the write end of a pipe on fd kJobOutputFd,
// sets options.preload_variable to job.preload (removes it for system; the rest of the environment is
// inherited), execs, and reads the pipe until the child exits. Returns what the child wrote when it exited with status 0. Errors:
// the job is missing; fork/exec failed (errno of the exec); timeout (the child is killed with SIGKILL
// and reaped); more output than max_output_bytes (killed, reaped); the child exited non-zero or died
// of a signal (with the first 2000 bytes of what it wrote). stdin, stdout and stderr are inherited.
// The child leads its own process group (a kill ends what it started too) and gets SIGKILL when
// the thread that called run_job exits (PR_SET_PDEATHSIG), so a job never outlives bench.
[[nodiscard]] Result<std::string> run_job(const Job& job, const ChildOptions& options);

// Parses one child's output and checks it: the report must say it ran on the job's allocator
// (environment.allocator and every case's allocator).
[[nodiscard]] Result<Report> job_report(const Job& job, std::string_view output);

// ---- Ratio against the system allocator ----------------------------------------------------------

// mean(c) / mean(same strategy, method, payload and size under "system"); nullopt when that case
// is absent, not ok, or has a zero mean, or when c itself is not ok. For the second Ratio column of
// an allocator table.
[[nodiscard]] std::optional<double> ratio_to_system(const Report& report, const CaseResult& c);

}  // namespace ringlab::bench::alloc
