#include "ringlab/server/server.hpp"
#include "ringlab/server/environment.hpp"

#include <future>
#include <thread>
#include <utility>

#include "ringlab/http/url.hpp"
#include "ringlab/net/socket.hpp"
#include "stats_board.hpp"
#include "worker.hpp"

namespace ringlab::server {
namespace {

std::unexpected<Error> fail(std::string message) { return std::unexpected(Error{std::move(message)}); }

bool is_power_of_two(unsigned value) { return value != 0 && (value & (value - 1)) == 0; }

Result<net::Fd> listen_on(const std::string& host, uint16_t port, bool reuse_port) {
  auto where = net::Endpoint::parse(host, port);
  if (!where) return fail("bind address '" + host + "': " + where.error().message());
  auto listener = net::listen_tcp(*where, net::ListenOptions{.reuse_port = reuse_port});
  if (!listener) return fail(listener.error().message());
  return std::move(*listener);
}

constexpr std::pair<BodyStrategy, std::string_view> kBodyStrategies[] = {
    {BodyStrategy::writev, "writev"}, {BodyStrategy::copy, "copy"},         {BodyStrategy::send_zc, "send_zc"},
    {BodyStrategy::fixed, "fixed"},   {BodyStrategy::sendfile, "sendfile"},
};

}  // namespace

std::string_view body_strategy_name(BodyStrategy strategy) noexcept {
  for (const auto& [value, name] : kBodyStrategies) {
    if (value == strategy) return name;
  }
  return "unknown";
}

int worker_cpu(const ServerOptions& options, unsigned worker) noexcept {
  if (options.cpu < 0) return -1;
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>((static_cast<unsigned>(options.cpu) + worker) % cpus);
}

std::optional<BodyStrategy> parse_body_strategy(std::string_view name) noexcept {
  for (const auto& [value, text] : kBodyStrategies) {
    if (text == name) return value;
  }
  return std::nullopt;
}

Status validate(const ServerOptions& options) {
  if (options.threads < 1 || options.threads > 256) return fail("--threads must be from 1 to 256");
  if (!is_power_of_two(options.recv_buffer_count) || options.recv_buffer_count > 32768) {
    return fail("--recv-buffers must be a power of two from 1 to 32768");
  }
  if (options.recv_buffer_bytes < 16 || options.recv_buffer_bytes > (1u << 24)) {
    return fail("--recv-buffer-size must be from 16 bytes to 16 MiB");
  }
  if (options.max_header_bytes < 16) return fail("--max-header must be at least 16 bytes");
  if (options.idle_timeout.count() <= 0) return fail("--idle-timeout must be positive");
  if (options.header_timeout.count() <= 0) return fail("--header-timeout must be positive");
  if (options.body_timeout.count() <= 0) return fail("--body-timeout must be positive");
  if (options.upstream_timeout.count() <= 0) return fail("--upstream-timeout must be positive");
  if (options.shutdown_timeout.count() < 0) return fail("--shutdown-timeout must not be negative");
  if (options.max_connections < 1) return fail("--max-connections must be at least 1");
  if (body_strategy_name(options.body_strategy) == "unknown") return fail("--body-strategy: unknown strategy");
  if (options.body_strategy == BodyStrategy::fixed &&
      (options.fixed_body_bytes < (4u << 10) || options.fixed_body_bytes > (1u << 30))) {
    // 1 GiB: the largest buffer io_uring registers.
    return fail("--fixed-body-bytes must be from 4 KiB to 1 GiB");
  }
  if (options.max_queued_output_bytes < 1) return fail("--max-queued-output must be at least 1 byte");
  if (options.serializer_buffer_bytes > kMaxChunkBytes) return fail("--serializer-buffer must be from 0 to 16 MiB");
  if (!options.upstream.empty()) {
    if (auto url = http::Url::parse(options.upstream); !url) {
      return fail("--upstream '" + options.upstream + "': " + url.error().message());
    }
  }
  return {};
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options) {
  if (auto valid = validate(options); !valid) return std::unexpected(valid.error());
  std::unique_ptr<Server> server(new Server());
  server->options_ = options;
  if (server->options_.environment_json.empty()) server->options_.environment_json = describe_environment(options);
  const ServerOptions& opts = server->options_;

  // The first listener picks the port (port 0: any free one); the others share it by SO_REUSEPORT.
  std::vector<net::Fd> listeners;
  auto first = listen_on(opts.bind, opts.port, true);
  if (!first) return std::unexpected(first.error());
  auto local = net::Endpoint::local_of(first->get());
  if (!local) return fail(local.error().message());
  server->endpoint_ = *local;
  listeners.push_back(std::move(*first));
  for (unsigned i = 1; i < opts.threads; ++i) {
    auto more = listen_on(opts.bind, server->endpoint_.port(), true);
    if (!more) return std::unexpected(more.error());
    listeners.push_back(std::move(*more));
  }

  // No upstream given: one more worker, on its own port, is the upstream (see server.hpp).
  net::Fd upstream_listener;
  if (opts.upstream.empty()) {
    auto listener = listen_on(opts.bind, 0, false);
    if (!listener) return std::unexpected(listener.error());
    auto where = net::Endpoint::local_of(listener->get());
    if (!where) return fail(where.error().message());
    server->upstream_ = "http://" + where->to_string();
    upstream_listener = std::move(*listener);
  } else {
    server->upstream_ = opts.upstream;
  }

  // A worker whose ring fails stops the others, so wait() returns instead of serving on one leg.
  Server* self = server.get();
  auto stop_all = [self] { self->stop(); };
  server->board_ = std::make_unique<StatsBoard>(opts.threads + (upstream_listener.valid() ? 1u : 0u));
  StatsBoard& board = *server->board_;
  for (unsigned i = 0; i < opts.threads; ++i) {
    server->workers_.push_back(std::make_unique<Worker>(opts, std::move(listeners[i]), server->upstream_,
                                                        worker_cpu(opts, i), stop_all, board, i));
  }
  if (upstream_listener.valid()) {
    server->workers_.push_back(std::make_unique<Worker>(opts, std::move(upstream_listener), std::string{}, -1,
                                                        stop_all, board, opts.threads));
  }

  std::vector<std::promise<Status>> ready(server->workers_.size());
  std::vector<std::future<Status>> started;
  for (std::size_t i = 0; i < server->workers_.size(); ++i) {
    started.push_back(ready[i].get_future());
    Worker* worker = server->workers_[i].get();
    std::promise<Status>* promise = &ready[i];
    server->threads_.emplace_back([worker, promise] { worker->run(*promise); });
  }
  Status setup;
  for (auto& future : started) {
    auto status = future.get();
    if (!status && setup) setup = status;
  }
  if (!setup) {
    server->stop();
    (void)server->wait();
    return std::unexpected(setup.error());
  }
  return server;
}

Server::~Server() {
  stop();
  (void)wait();
}

void Server::stop() noexcept {
  for (auto& worker : workers_) worker->request_stop();
}

Status Server::wait() {
  if (!joined_) {
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    joined_ = true;
    for (auto& worker : workers_) {
      if (!worker->result() && result_) result_ = worker->result();
    }
  }
  return result_;
}

ServerStats Server::stats() const {
  if (!joined_) return board_->total();
  ServerStats total;
  for (const auto& worker : workers_) total += worker->stats();
  return total;
}

}  // namespace ringlab::server
