#include "ringlab/bench/allocators.hpp"

#include "ringlab/bench/child_process.hpp"

#include <dlfcn.h>
#include <link.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

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

// One object of the process as the dynamic linker loaded it, in load order: the main program, the
// LD_PRELOAD libraries, then the dependencies. That is also the order in which a symbol reference is
// bound, so the first object that defines malloc is the one every call goes to.
struct LoadedObject {
  std::string name;  // as loaded ("" for the main program)
  bool main = false;
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;  // [begin, end) of each PT_LOAD
};

std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto& out = *static_cast<std::vector<LoadedObject>*>(data);
        LoadedObject object;
        object.name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        object.main = out.empty();  // the main program is always reported first
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          object.segments.emplace_back(begin, begin + ph.p_memsz);
        }
        out.push_back(std::move(object));
        return 0;
      },
      &objects);
  return objects;
}

std::string main_program_path() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("main program") : path.string();
}

// `name` as defined by `object` itself, or nullptr. A handle's dlsym also searches the object's
// dependencies (and the main program's handle the whole global scope), so the address found is
// checked to lie in the object's own segments.
void* symbol_in(void* handle, const LoadedObject& object, const char* name) {
  void* sym = dlsym(handle != nullptr ? handle : RTLD_DEFAULT, name);
  if (sym == nullptr) return nullptr;
  const auto address = reinterpret_cast<uintptr_t>(sym);
  for (const auto& [begin, end] : object.segments) {
    if (address >= begin && address < end) return sym;
  }
  return nullptr;
}

std::string mimalloc_version(void* sym) {
  const int v = reinterpret_cast<int (*)()>(sym)();
  // mi_version() encodes major.minor.patch as major*100 + minor*10 + patch (2.0.9 -> 209).
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string((v / 10) % 10) + "." + std::to_string(v % 10);
}

std::string jemalloc_version(void* sym) {
  using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  const char* version = nullptr;
  std::size_t length = sizeof(version);
  if (reinterpret_cast<Mallctl>(sym)("version", static_cast<void*>(&version), &length, nullptr, 0) != 0 ||
      version == nullptr) {
    return "jemalloc (version unknown: mallctl(\"version\") failed)";
  }
  return std::string("jemalloc ") + version;
}

std::string tcmalloc_version(void* sym) {
  using TcVersion = const char* (*)(int*, int*, const char**);
  int major = 0;
  int minor = 0;
  const char* patch = nullptr;
  const char* text = reinterpret_cast<TcVersion>(sym)(&major, &minor, &patch);
  return text != nullptr ? std::string(text) : "gperftools " + std::to_string(major) + "." + std::to_string(minor);
}

std::string glibc_version(void* sym) {
  const char* v = reinterpret_cast<const char* (*)()>(sym)();
  return std::string("glibc ") + (v != nullptr ? v : "?");
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

std::string_view allocator_name(Allocator allocator) noexcept {
  switch (allocator) {
    case Allocator::system: return "system";
    case Allocator::mimalloc: return "mimalloc";
    case Allocator::jemalloc: return "jemalloc";
    case Allocator::tcmalloc: return "tcmalloc";
  }
  return "system";
}

std::optional<Allocator> parse_allocator(std::string_view name) noexcept {
  for (Allocator a : kAllAllocators) {
    if (allocator_name(a) == name) return a;
  }
  return std::nullopt;
}

Result<std::vector<Allocator>> parse_allocator_list(std::string_view list) {
  std::vector<Allocator> out;
  if (trim(list).empty()) return fail("empty list (choose from system, mimalloc, jemalloc, tcmalloc)");
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item = trim(list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
    if (item.empty()) return fail("'" + std::string(list) + "': empty item");
    const auto allocator = parse_allocator(item);
    if (!allocator) {
      return fail("unknown allocator '" + std::string(item) +
                  "' (choose from system, mimalloc, jemalloc, tcmalloc)");
    }
    if (std::find(out.begin(), out.end(), *allocator) != out.end()) {
      return fail("'" + std::string(item) + "' given twice");
    }
    out.push_back(*allocator);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string Detected::describe() const {
  std::string out = version.empty() ? std::string("unknown allocator") : version;
  out += " (";
  out += library.empty() ? std::string("?") : library;
  out += ")";
  for (const std::string& interposer : interposers) out += ", called through " + interposer;
  return out;
}

std::string Detected::name() const {
  if (allocator) return std::string(allocator_name(*allocator));
  if (library.empty()) return "unknown";
  return std::filesystem::path(library).filename().string();
}

Detected detect_allocator() {
  Detected detected;
  const std::vector<LoadedObject> objects = loaded_objects();
  for (const LoadedObject& object : objects) {
    void* handle = nullptr;
    if (!object.main) {
      // The vDSO is the one object without a path, and it defines no malloc.
      if (object.name.find('/') == std::string::npos) continue;
      handle = dlopen(object.name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
      if (handle == nullptr) continue;  // an object loaded under another name
    }
    const auto find = [&](const char* name) { return symbol_in(handle, object, name); };
    std::optional<std::string> version;
    if (find("malloc") != nullptr) {
      const std::string& file = object.main ? main_program_path() : object.name;
      if (void* mi = find("mi_version")) {
        detected.allocator = Allocator::mimalloc;
        version = mimalloc_version(mi);
      } else if (void* je = find("mallctl")) {
        detected.allocator = Allocator::jemalloc;
        version = jemalloc_version(je);
      } else if (void* tc = find("tc_version")) {
        detected.allocator = Allocator::tcmalloc;
        version = tcmalloc_version(tc);
      } else if (void* libc = find("gnu_get_libc_version")) {
        detected.allocator = Allocator::system;
        version = glibc_version(libc);
      } else if (find("__asan_init") != nullptr || find("__tsan_init") != nullptr ||
                 find("__msan_init") != nullptr || find("__lsan_ignore_object") != nullptr) {
        // A sanitizer runtime is an allocator of its own: it does not forward to the next malloc.
        version = "sanitizer runtime";
      } else {
        // Defines malloc but is no allocator ringlab knows: taken for an interposer that forwards to
        // the next definition (bench's own memory diagnoser does, through dlsym(RTLD_NEXT)).
        detected.interposers.push_back(file);
      }
      if (version) {
        detected.library = file;
        detected.version = std::move(*version);
      }
    }
    if (handle != nullptr) dlclose(handle);
    if (version) return detected;
  }
  detected.version = "unknown allocator";
  return detected;
}

Result<Detected> verify_allocator(Allocator expected) {
  Detected detected = detect_allocator();
  if (detected.allocator == expected) return detected;
  std::string message = job_name(expected) + " runs on " + detected.describe();
  if (expected != Allocator::system) {
    const char* preload = std::getenv("LD_PRELOAD");
    message += ": LD_PRELOAD=";
    message += preload != nullptr ? preload : "(unset)";
    message += " did not take";
  }
  return fail(std::move(message));
}

std::optional<std::string> jobs_unsupported_reason() {
#if defined(__SANITIZE_ADDRESS__)
  return std::string(
      "bench is built with AddressSanitizer, whose malloc must be loaded first: preloading another "
      "allocator would abort the child; build without RINGLAB_SANITIZE (tools/bench builds Release)");
#else
  const Detected detected = detect_allocator();
  if (!detected.allocator) {
    return "malloc in this process is served by " + detected.describe() +
           ", not by the C library: preloading another allocator would not replace it";
  }
  return std::nullopt;
#endif
}

LibraryPaths configured_libraries() {
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
        job.missing = std::string(allocator_name(allocator)) + ": shared library not found when ringlab was configured (install " +
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
  std::vector<std::string> out;
  for (std::size_t i = 0; i < parent_args.size(); ++i) {
    const std::string& arg = parent_args[i];
    // Options the parent owns, with a separate value...
    if (arg == "--allocators" || arg == "--job-output-fd" || arg == "--job-allocator") {
      ++i;
      continue;
    }
    // ...or an attached one.
    if (arg.starts_with("--allocators=") || arg.starts_with("--job-output-fd=") ||
        arg.starts_with("--job-allocator=")) {
      continue;
    }
    out.push_back(arg);
  }
  out.insert(out.end(), {"--job-output-fd", std::to_string(kJobOutputFd), "--job-allocator",
                         std::string(allocator_name(allocator))});
  return out;
}

Result<std::string> run_job(const Job& job, const ChildOptions& options) {
  if (job.missing) return fail(job_name(job.allocator) + ": missing: " + *job.missing);
  auto output_pipe = make_pipe();
  if (!output_pipe) return std::unexpected(output_pipe.error().wrap(job_name(job.allocator)));

  SpawnOptions spawn;
  spawn.executable = options.executable;
  spawn.arguments = options.arguments;
  spawn.environment = environment_with("LD_PRELOAD", job.preload.empty() ? std::nullopt
                                                                         : std::optional<std::string_view>(job.preload));
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
