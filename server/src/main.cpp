// The `server` binary: flags to ServerOptions, one "listening on HOST:PORT" line, serve until
// SIGINT or SIGTERM, then stop gracefully.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <expected>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "ringlab/server/options.hpp"
#include "ringlab/server/routes.hpp"
#include "ringlab/server/server.hpp"

namespace {

using ringlab::server::parse_duration;
using ringlab::server::parse_size;

// CLI11 validator for a duration or size flag, so a bad value is reported like any other bad flag.
template <class Parse>
CLI::Validator unit_validator(Parse parse, std::string description) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        return parse(text) ? std::string{} : "'" + text + "' is not valid here";
      },
      description);
}

// --malloc-mmap-threshold's range, checked by CLI11 like every other flag's (a size that parses).
constexpr uint64_t kMinMmapThreshold = 4u << 10;
constexpr uint64_t kMaxMmapThreshold = 32u << 20;  // glibc's own ceiling for M_MMAP_THRESHOLD
CLI::Validator mmap_threshold_range() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto bytes = parse_size(text);
        if (!bytes || *bytes == 0 || (*bytes >= kMinMmapThreshold && *bytes <= kMaxMmapThreshold)) return {};
        return "must be 0 or from 4KiB to 32MiB";
      },
      "0 or 4KiB..32MiB");
}

// glibc raises its mmap threshold to the size of the largest block freed (up to 32 MiB) and its trim
// threshold to twice that: after one large echo body, later large blocks come from a thread's arena,
// whose top glibc keeps and malloc_trim() does not shrink, so the memory of an abusive request stays
// resident after it. A fixed threshold keeps large blocks mmapped (unmapped on free) and arenas
// trimmed past twice it. Bodies below it are reused (spare buffers), so the common case pays nothing.
std::expected<void, std::string> apply_mmap_threshold(std::size_t bytes) {
  if (bytes == 0) return {};
#if defined(__GLIBC__)
  if (::mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) != 1 ||
      ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * bytes)) != 1) {
    return std::unexpected(std::string("mallopt refused it (not glibc's allocator)"));
  }
  return {};
#else
  return std::unexpected(std::string("only glibc's allocator has it; use 0"));
#endif
}

// The duration and size flags as given: text, checked by their validator while the command line is
// parsed, converted into ServerOptions by apply_units().
struct UnitTexts {
  std::string idle_timeout = "30s";
  std::string header_timeout = "20s";
  std::string body_timeout = "60s";
  std::string max_answer = "64MiB";
  std::string upstream_timeout = "5s";
  std::string shutdown_timeout = "5s";
  std::string max_body = "64MiB";
  std::string max_header = "16384";
  std::string recv_buffer_size = "16KiB";
  std::string cache_bytes = "256MiB";
  std::string inline_body = "1KiB";
  std::string max_queued_output = "4MiB";
  std::string mmap_threshold = "1MiB";
  std::string body_strategy = "writev";
  std::string fixed_body_bytes = "64MiB";
  std::string serializer_buffer = "16KiB";

};

// The command line: every option of ServerOptions, the units as text in `units`; `mmap_threshold_option`
// is the one whose presence apply_units() asks about.
std::unique_ptr<CLI::App> make_command_line(ringlab::server::ServerOptions& options, UnitTexts& units,
                                            CLI::Option*& mmap_threshold_option) {
  std::string description = "ringlab's io_uring HTTP/1.1 server:";
  for (const ringlab::server::RouteEntry& entry : ringlab::server::route_table()) {
    description += " " + std::string(entry.path);
  }
  auto app = std::make_unique<CLI::App>(description);
  app->footer("\n" + ringlab::server::routes_help() +
             "\nExit status: 0 after SIGINT or SIGTERM; 1 when the server cannot start or fails; 2 for a bad\n"
             "command line.");
  const auto duration = unit_validator(parse_duration, "DURATION (30s, 300ms)");
  const auto size = unit_validator(parse_size, "SIZE (64MiB, 16384)");
  // A duration or size flag: read as text, checked by `unit` while the command line is parsed, and
  // converted below.
  const auto unit_option = [&app](std::string name, std::string& text, std::string help, const CLI::Validator& unit) {
    return app->add_option(std::move(name), text, std::move(help))->capture_default_str()->check(unit);
  };
  app->add_option("--port", options.port, "TCP port; 0 picks a free one")->capture_default_str();
  app->add_option("--bind", options.bind, "address to listen on (numeric, or localhost)")->capture_default_str();
  app->add_option("--threads", options.threads, "worker threads, one ring and listener each")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app->add_option("--upstream", options.upstream,
                 "http://host:port that /proxy fetches /weather from (default: this server)");
  unit_option("--upstream-timeout", units.upstream_timeout, "connect and per-read deadline of /proxy's fetch", duration);
  unit_option("--max-body", units.max_body, "largest request body (413 above)", size);
  unit_option("--max-header", units.max_header, "largest request head (431 above)", size);
  unit_option("--idle-timeout", units.idle_timeout,
              "close a connection between requests (or whose answers do not move) after this long without progress",
              duration);
  unit_option("--header-timeout", units.header_timeout,
              "a request head must be complete this long after its first byte (408)", duration);
  unit_option("--body-timeout", units.body_timeout, "longest wait between two receives of a request body (408)", duration);
  app->add_option("--max-count", options.max_count, "largest count= of /weather, /repos, /github, /profiles and /proxy (400 above)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{1'000'000}));
  unit_option("--max-answer", units.max_answer,
              "largest generated answer: lowers the count limit per route so that count records fit (400 above)", size);
  unit_option("--shutdown-timeout", units.shutdown_timeout, "after SIGINT/SIGTERM, close everything after this long",
              duration);
  app->add_option("--max-connections", options.max_connections, "open connections per thread")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  unit_option("--recv-buffer-size", units.recv_buffer_size, "size of each provided receive buffer", size);
  app->add_flag("--recv-multishot", options.recv_multishot,
               "one multishot recv per connection instead of one recv per buffer; a connection that "
               "stops reading then holds what arrived with its last completions (up to the thread's "
               "receive buffers), not one buffer");
  app->add_option("--recv-buffers", options.recv_buffer_count, "provided receive buffers per thread (power of two)")
      ->capture_default_str();
  unit_option("--max-queued-output", units.max_queued_output,
              "memory queued for output per connection (answers and the bodies they hold) beyond which it stops "
              "reading requests",
              size);
  unit_option("--inline-body", units.inline_body, "bodies up to this size are copied next to the head, not referenced", size);
  app->add_option("--body-strategy", units.body_strategy,
                 "how cached /weather, /repos, /github and /profiles bodies reach the kernel: writev (head and body "
                 "as two iovecs), copy (one contiguous buffer), send_zc (IORING_OP_SEND_ZC), fixed "
                 "(SEND_ZC from registered memory), sendfile (spliced from a file)")
      ->capture_default_str()
      ->check(CLI::IsMember({"writev", "copy", "send_zc", "fixed", "sendfile"}));
  unit_option("--fixed-body-bytes", units.fixed_body_bytes,
              "--body-strategy fixed: registered memory per thread that cached bodies are copied into", size);
  unit_option("--serializer-buffer", units.serializer_buffer,
              "cache=0 answers with chunked=1 are serialized into a buffer of this size and sent a chunk "
              "each time it is 90 % full, as System.Text.Json (DefaultBufferSize 16 KiB) writes into "
              "ASP.NET Core's response; 0 serializes the whole body first, then sends chunks of chunk=",
              size);
  app->add_option("--cache-entries", options.cache_entries, "generated bodies kept per thread")->capture_default_str();
  unit_option("--cache-bytes", units.cache_bytes, "bytes of generated bodies kept per thread", size);
  mmap_threshold_option =
      unit_option("--malloc-mmap-threshold", units.mmap_threshold,
                  "glibc: allocations from this size on are mmapped and unmapped when freed, so a large "
                  "body's memory leaves with it (4KiB..32MiB; 0 keeps glibc's dynamic thresholds)",
                  size)
          ->check(mmap_threshold_range());
  app->add_option("--cpu", options.cpu, "pin thread i to CPU (cpu + i); -1 leaves placement to the kernel")
      ->capture_default_str();
  return app;
}

// The unit flags, already validated by the parser, into `options`; the malloc threshold applied.
void apply_units(const UnitTexts& units, bool mmap_threshold_given, ringlab::server::ServerOptions& options) {
  options.idle_timeout = *parse_duration(units.idle_timeout);
  options.header_timeout = *parse_duration(units.header_timeout);
  options.body_timeout = *parse_duration(units.body_timeout);
  options.max_answer_bytes = *parse_size(units.max_answer);
  options.upstream_timeout = *parse_duration(units.upstream_timeout);
  options.shutdown_timeout = *parse_duration(units.shutdown_timeout);
  options.max_body_bytes = *parse_size(units.max_body);
  options.max_header_bytes = static_cast<std::size_t>(*parse_size(units.max_header));
  const uint64_t recv_bytes = *parse_size(units.recv_buffer_size);
  options.recv_buffer_bytes = recv_bytes > (1u << 24) ? 0u : static_cast<unsigned>(recv_bytes);
  options.cache_bytes = static_cast<std::size_t>(*parse_size(units.cache_bytes));
  options.inline_body_bytes = static_cast<std::size_t>(*parse_size(units.inline_body));
  options.max_queued_output_bytes = *parse_size(units.max_queued_output);
  options.body_strategy = *ringlab::server::parse_body_strategy(units.body_strategy);
  options.fixed_body_bytes = static_cast<std::size_t>(*parse_size(units.fixed_body_bytes));
  options.serializer_buffer_bytes = static_cast<std::size_t>(*parse_size(units.serializer_buffer));
  const uint64_t threshold = *parse_size(units.mmap_threshold);
  if (auto applied = apply_mmap_threshold(static_cast<std::size_t>(threshold)); !applied) {
    // Another allocator (a sanitizer's, a preloaded one) owns malloc: /env says "dynamic", and a
    // threshold that was asked for on the command line is said to be ignored (the default is not:
    // a server under ASan or an LD_PRELOADed allocator would print it on every start).
    if (mmap_threshold_given) {
      fmt::print(stderr, "server: note: --malloc-mmap-threshold not applied: {}\n", applied.error());
    }
  } else {
    options.malloc_mmap_threshold = static_cast<std::size_t>(threshold);
  }

}

// Serves until SIGINT or SIGTERM, or until the server stops on its own: the exit status.
int serve(const ringlab::server::ServerOptions& options) {
  // Blocked before any worker starts, so every thread inherits the mask and only the waiter below
  // receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = ringlab::server::Server::start(options);
  if (!server) {
    fmt::print(stderr, "server: {}\n", server.error().message);
    return 1;
  }
  fmt::print("listening on {}\n", (*server)->endpoint().to_string());
  std::fflush(stdout);

  std::atomic<bool> finished{false};
  std::thread waiter([&] {
    // Polls the flag between waits so that it also ends when the server stops on its own.
    const timespec period{0, 200'000'000};
    while (!finished.load(std::memory_order_acquire)) {
      if (sigtimedwait(&stop_signals, nullptr, &period) > 0) {
        (*server)->stop();
        return;
      }
    }
  });
  auto result = (*server)->wait();
  finished.store(true, std::memory_order_release);
  waiter.join();
  if (!result) {
    fmt::print(stderr, "server: {}\n", result.error().message);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ringlab::server::ServerOptions options;
  UnitTexts units;
  CLI::Option* mmap_threshold_option = nullptr;
  const std::unique_ptr<CLI::App> app = make_command_line(options, units, mmap_threshold_option);
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is a ParseError with status 0. Any other is a usage error: 2, as bench and most tools
    // exit, not CLI11's own numbers (105 for a bad value, 109 for an unknown flag).
    return app->exit(e) == 0 ? 0 : 2;
  }
  apply_units(units, mmap_threshold_option->count() > 0, options);
  return serve(options);
}
