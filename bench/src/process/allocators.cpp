// Allocators by name and which one serves malloc in this process: what an allocator job's child
// runs to prove its allocator (the allocator_probe test program compiles this file alone). The
// parent side, which starts the jobs, is allocator_jobs.cpp.
#include "ringlab/bench/process/allocators.hpp"

#include <dlfcn.h>
#include <link.h>
#include <gnu/libc-version.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ringlab::bench::alloc {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
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
  if (error) return "main program";
  // Run by a dynamic loader named on the command line (a bundle's launcher), /proc/self/exe is the
  // loader; the loader passes the program's own path as argv[0].
  if (path.filename().string().starts_with("ld-") && program_invocation_name != nullptr) return program_invocation_name;
  return path.string();
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
  std::string message = "allocator job " + std::string(allocator_name(expected)) + " runs on " + detected.describe();
  if (expected != Allocator::system) {
    const char* preload = std::getenv("LD_PRELOAD");
    message += ": LD_PRELOAD=";
    message += preload != nullptr ? preload : "(unset)";
    // A bundle's launcher hands RINGLAB_PRELOAD to its loader instead (allocator_jobs.cpp).
    if (const char* launcher_preload = std::getenv(kLauncherPreloadVariable); launcher_preload != nullptr) {
      message += std::string(", ") + kLauncherPreloadVariable + "=" + launcher_preload;
    }
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

}  // namespace ringlab::bench::alloc
