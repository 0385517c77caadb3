// The parent side of allocator jobs: which jobs can run, the child's arguments, running one
// (a ChildProcess) and checking what it reports. Detection, which the child runs, is allocators.cpp.
#include "ringlab/bench/process/allocators.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "ringlab/bench/process/child_process.hpp"
#include "ringlab/bench/process/server_process.hpp"

// Paths of the allocator libraries, fixed by CMake at configure time (see bench/CMakeLists.txt).
#ifndef RINGLAB_MIMALLOC_SO
#define RINGLAB_MIMALLOC_SO ""
#endif
#ifndef RINGLAB_JEMALLOC_SO
#define RINGLAB_JEMALLOC_SO ""
#endif
#ifndef RINGLAB_TCMALLOC_SO
#define RINGLAB_TCMALLOC_SO ""
#endif

namespace ringlab::bench::alloc {

namespace {

// CMake writes "<VAR>-NOTFOUND" for a library it did not find.
std::string configured(std::string_view path) {
  if (path.empty() || path.ends_with("-NOTFOUND")) return {};
  return std::string(path);
}

std::string_view package_of(Allocator allocator) {
  switch (allocator) {
    case Allocator::system: return "libc6";
    case Allocator::mimalloc: return "libmimalloc-dev";
    case Allocator::jemalloc: return "libjemalloc-dev";
    case Allocator::tcmalloc: return "libgoogle-perftools-dev";
  }
  return "";
}

std::string job_name(Allocator allocator, pid_t pid = 0) {
  std::string out = "allocator job ";
  out += allocator_name(allocator);
  if (pid > 0) out += " (pid " + std::to_string(pid) + ")";
  return out;
}

std::string head_of(std::string_view output) {
  constexpr std::size_t kShown = 2000;
  if (output.empty()) return "nothing";
  std::string out = "\"";
  out += output.substr(0, kShown);
  if (output.size() > kShown) out += "...";
  out += "\"";
  return out;
}

}  // namespace

LibraryPaths configured_libraries() {
  if (const char* dir = std::getenv(kAllocatorDirVariable); dir != nullptr && *dir != '\0') {
    const std::string base = std::string(dir) + "/";
    return LibraryPaths{base + "libmimalloc.so.2", base + "libjemalloc.so.2", base + "libtcmalloc_minimal.so.4"};
  }
  return LibraryPaths{configured(RINGLAB_MIMALLOC_SO), configured(RINGLAB_JEMALLOC_SO),
                      configured(RINGLAB_TCMALLOC_SO)};
}

std::vector<Job> plan_jobs(std::span<const Allocator> allocators, const LibraryPaths& libraries) {
  std::vector<Job> jobs;
  for (Allocator allocator : allocators) {
    Job job{allocator, {}, std::nullopt};
    std::string path;
    switch (allocator) {
      case Allocator::system: break;
      case Allocator::mimalloc: path = libraries.mimalloc; break;
      case Allocator::jemalloc: path = libraries.jemalloc; break;
      case Allocator::tcmalloc: path = libraries.tcmalloc; break;
    }
    if (allocator != Allocator::system) {
      if (path.empty()) {
        job.missing = std::string(allocator_name(allocator)) +
                      ": shared library not found when ringlab was configured (install " +
                      std::string(package_of(allocator)) + ", then re-run cmake)";
      } else if (::access(path.c_str(), R_OK) != 0) {
        job.missing = std::string(allocator_name(allocator)) + ": " + errno_message("access", path, errno) +
                      " (install " + std::string(package_of(allocator)) + ")";
      } else {
        job.preload = path;
      }
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<std::string> child_arguments(std::span<const std::string> parent_args, Allocator allocator) {
  // The options the parent owns.
  constexpr std::array<std::string_view, 3> kParentOptions{"--allocators", "--job-output-fd", "--job-allocator"};
  std::vector<std::string> out = arguments_without(parent_args, kParentOptions);
  out.insert(out.end(), {"--job-output-fd", std::to_string(kJobOutputFd), "--job-allocator",
                         std::string(allocator_name(allocator))});
  return out;
}

ChildOptions launch_options(const std::string& self) {
  ChildOptions options;
  if (auto launcher = bin_dir_program("bench")) {
    options.executable = std::move(*launcher);
    options.preload_variable = kLauncherPreloadVariable;
  } else {
    options.executable = self;
  }
  return options;
}

Result<std::string> run_job(const Job& job, const ChildOptions& options) {
  if (job.missing) return fail(job_name(job.allocator) + ": missing: " + *job.missing);
  auto output_pipe = make_pipe();
  if (!output_pipe) return std::unexpected(output_pipe.error().wrap(job_name(job.allocator)));

  SpawnOptions spawn;
  spawn.executable = options.executable;
  spawn.arguments = options.arguments;
  spawn.environment = environment_with(options.preload_variable,
                                       job.preload.empty() ? std::nullopt : std::optional<std::string_view>(job.preload));
  spawn.fds = {{output_pipe->write.get(), kJobOutputFd}};
  // Its own process group, so that a kill at the timeout reaches everything the job started; and
  // killed with the parent (Ctrl-C reaches only the terminal's foreground group, which the job
  // has just left).
  spawn.own_process_group = true;
  spawn.parent_death_signal = SIGKILL;
  auto child = ChildProcess::spawn(spawn);
  if (!child) return std::unexpected(child.error().wrap(job_name(job.allocator)));
  output_pipe->write.reset();
  const int output_fd = output_pipe->read.get();

  const std::string who = job_name(job.allocator, child->pid());
  const auto deadline = ProcessClock::now() + options.timeout;
  const auto too_much = [&] {
    return who + ": wrote more than " + std::to_string(options.max_output_bytes) + " bytes of output";
  };
  std::string output;
  for (bool done = false; !done;) {
    auto outcome = read_some(output_fd, output, deadline, &*child);
    if (!outcome) return std::unexpected(outcome.error().wrap(who + " output"));
    switch (*outcome) {
      case ReadOutcome::data:
        if (output.size() > options.max_output_bytes) return fail(too_much() + "; killed");
        break;
      case ReadOutcome::end_of_file:
        if (!child->wait_for(std::chrono::milliseconds(poll_timeout_ms(deadline)))) {
          return fail(who + ": no result within " + std::to_string(options.timeout.count()) + " ms; killed");
        }
        done = true;
        break;
      case ReadOutcome::timed_out:
        return fail(who + ": no result within " + std::to_string(options.timeout.count()) + " ms; killed");
      case ReadOutcome::child_exited:
        // Something the child started may still hold the pipe: take what is there now and stop,
        // rather than wait for a grandchild.
        for (;;) {
          auto rest = read_some(output_fd, output, ProcessClock::now());
          if (!rest || *rest != ReadOutcome::data) break;
          if (output.size() > options.max_output_bytes) return fail(too_much());
        }
        done = true;
        break;
    }
  }
  // The returns above leave the child to ~ChildProcess, which kills its group and reaps it.
  // It has exited (or closed its output and then exited): this reaps it at once.
  const auto status = child->wait_for(std::chrono::seconds(1));
  if (!status) return fail(who + ": still running after its output ended; killed");
  if (!status->success()) return fail(who + ": " + status->describe() + "; it wrote " + head_of(output));
  return output;
}

Result<Report> job_report(const Job& job, std::string_view output) {
  auto report = parse_report(output);
  if (!report) return fail(report.error().wrap(job_name(job.allocator) + ": report").message);
  const std::string_view expected = allocator_name(job.allocator);
  for (const CaseResult& c : report->cases) {
    if (c.allocator != expected) {
      return fail(job_name(job.allocator) + ": case " + c.strategy + " " + case_key(c) + " ran on '" + c.allocator +
                  "'");
    }
  }
  return report;
}

std::optional<double> ratio_to_system(const Report& report, const CaseResult& c) {
  if (c.status != CaseStatus::ok) return std::nullopt;
  for (const CaseResult& base : report.cases) {
    if (base.allocator != allocator_name(Allocator::system) || base.strategy != c.strategy ||
        base.method != c.method || base.payload != c.payload || base.size != c.size) {
      continue;
    }
    if (base.status != CaseStatus::ok || !(base.stats.mean > 0)) return std::nullopt;
    return c.stats.mean / base.stats.mean;
  }
  return std::nullopt;
}

}  // namespace ringlab::bench::alloc
