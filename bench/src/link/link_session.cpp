#include "ringlab/bench/link/link_session.hpp"

#include "ringlab/bench/process/child_process.hpp"
#include "ringlab/bench/process/server_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ringlab::bench {
namespace {

constexpr std::string_view kNamespacePrefix = "ringlab-";
constexpr const char* kNetnsDirectory = "/run/netns";
constexpr std::chrono::milliseconds kCommandTimeout{10'000};
constexpr std::chrono::milliseconds kWireStopTimeout{5'000};
constexpr int kCapSysAdmin = 21;
constexpr int kCapNetAdmin = 12;

// Runs `ip ARGS...` (found on PATH) to completion; error with what it wrote to stderr.
Status run_ip(std::vector<std::string> arguments) {
  static const std::string ip = [] {
    for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
      const std::string path = std::string(dir) + "/ip";
      if (::access(path.c_str(), X_OK) == 0) return path;
    }
    return std::string("/usr/sbin/ip");
  }();
  auto errors_pipe = make_pipe();
  if (!errors_pipe) return std::unexpected(errors_pipe.error());
  SpawnOptions spawn;
  spawn.executable = ip;
  spawn.arguments = arguments;
  spawn.fds = {{errors_pipe->write.get(), STDERR_FILENO}};
  auto child = ChildProcess::spawn(spawn);
  errors_pipe->write = net::Fd();
  if (!child) return std::unexpected(child.error().wrap("link"));
  const auto deadline = ProcessClock::now() + kCommandTimeout;
  std::string errors;
  for (;;) {
    auto outcome = read_some(errors_pipe->read.get(), errors, deadline, &*child);
    if (!outcome || *outcome != ReadOutcome::data) break;
  }
  const ChildProcess::Stopped stopped = child->terminate(std::chrono::milliseconds(0));
  if (stopped.status.success()) return {};
  std::string command = "ip";
  for (const std::string& a : arguments) command += " " + a;
  while (!errors.empty() && (errors.back() == '\n' || errors.back() == ' ')) errors.pop_back();
  return fail(fmt::format("link: `{}` {}{}", command, stopped.status.describe(), errors.empty() ? "" : ": " + errors));
}

Result<int> open_namespace(const std::string& name) {
  const std::string path = fmt::format("{}/{}", kNetnsDirectory, name);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno_message("open", path, errno));
  return fd;
}

Status enter(int fd, std::string_view which) {
  if (::setns(fd, CLONE_NEWNET) != 0) return fail(errno_message("setns", fmt::format("{} namespace", which), errno));
  return {};
}

// The PID in "ringlab-<pid>-...", if the name has that form.
std::optional<pid_t> owner_of(std::string_view name) {
  if (!name.starts_with(kNamespacePrefix)) return std::nullopt;
  name.remove_prefix(kNamespacePrefix.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc{} || end == name.data() || *end != '-' || pid <= 0) return std::nullopt;
  return pid;
}

// A run is alive while its PID runs a program called bench (a reused PID does not count) and is not
// a zombie: a run killed with SIGKILL whose parent has not reaped it yet is over.
bool run_alive(pid_t pid) {
  std::ifstream stat_file(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!stat_file || !std::getline(stat_file, stat)) return false;
  // "4242 (bench) S 1 ...": the name is between the first '(' and the last ')', the state follows.
  const std::size_t open = stat.find('(');
  const std::size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return stat.substr(open + 1, close - open - 1) == "bench" && state != 'Z' && state != 'X';
}

bool has_capability(int capability) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("CapEff:")) continue;
    uint64_t mask = 0;
    const std::string hex = line.substr(line.find_first_not_of(" \t", 7));
    std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
    return (mask >> capability) & 1u;
  }
  return false;
}

std::string mac(int host) { return fmt::format("02:00:c6:12:00:{:02x}", host); }

}  // namespace

Status check_link_privileges() {
  if (has_capability(kCapSysAdmin) && has_capability(kCapNetAdmin)) return {};
  return fail(
      "--link other than loopback builds network namespaces and veth pairs, which needs root (CAP_SYS_ADMIN and "
      "CAP_NET_ADMIN): run bench as root (sudo), or use --link loopback");
}

Result<std::vector<std::string>> remove_stale_namespaces() {
  std::vector<std::string> removed;
  DIR* dir = ::opendir(kNetnsDirectory);
  if (dir == nullptr) {
    if (errno == ENOENT) return removed;
    return fail(errno_message("opendir", kNetnsDirectory, errno));
  }
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    const auto pid = owner_of(name);
    if (pid && !run_alive(*pid)) stale.push_back(name);
  }
  ::closedir(dir);
  std::sort(stale.begin(), stale.end());
  for (const std::string& name : stale) {
    if (auto deleted = run_ip({"netns", "delete", name}); !deleted) return std::unexpected(deleted.error());
    removed.push_back(name);
  }
  return removed;
}

std::string default_wire_path(const std::string& bench_executable) {
  if (auto bundled = bin_dir_program("wire")) return *bundled;
  const std::filesystem::path dir = std::filesystem::path(bench_executable).parent_path();
  return (dir / "wire").string();
}

Result<LinkSession> LinkSession::create(const Options& options) {
  if (auto allowed = check_link_privileges(); !allowed) return std::unexpected(allowed.error());
  if (auto stale = remove_stale_namespaces(); !stale) return std::unexpected(stale.error().wrap("link: removing stale namespaces"));
  if (::access(options.wire_executable.c_str(), X_OK) != 0)
    return fail(errno_message("link: wire binary", options.wire_executable, errno));

  LinkSession session;
  session.prefix_ = fmt::format("{}{}-", kNamespacePrefix, ::getpid());
  session.original_ns_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (session.original_ns_ < 0) return fail(errno_message("open", "/proc/thread-self/ns/net", errno));

  const std::string client = session.prefix_ + "client";
  const std::string wire = session.prefix_ + "wire";
  const std::string server = session.prefix_ + "server";
  const std::string mtu = std::to_string(options.spec.mtu);
  session.namespaces_made_ = true;  // from here on close() removes whatever exists
  const std::vector<std::vector<std::string>> commands = {
      {"netns", "add", client},
      {"netns", "add", wire},
      {"netns", "add", server},
      {"link", "add", "rl-client", "netns", client, "address", mac(1), "mtu", mtu, "type", "veth", "peer", "name",
       "wire-c", "netns", wire, "mtu", mtu},
      {"link", "add", "rl-server", "netns", server, "address", mac(2), "mtu", mtu, "type", "veth", "peer", "name",
       "wire-s", "netns", wire, "mtu", mtu},
      // No IPv6 link-local addresses: no router solicitations or DAD crossing the wire.
      {"-n", client, "link", "set", "rl-client", "addrgenmode", "none"},
      {"-n", server, "link", "set", "rl-server", "addrgenmode", "none"},
      {"-n", wire, "link", "set", "wire-c", "addrgenmode", "none"},
      {"-n", wire, "link", "set", "wire-s", "addrgenmode", "none"},
      {"-n", client, "addr", "add", std::string(kLinkClientAddress) + "/30", "dev", "rl-client"},
      {"-n", server, "addr", "add", std::string(kLinkServerAddress) + "/30", "dev", "rl-server"},
      {"-n", client, "link", "set", "lo", "up"},
      {"-n", server, "link", "set", "lo", "up"},
      {"-n", wire, "link", "set", "wire-c", "up", "promisc", "on"},
      {"-n", wire, "link", "set", "wire-s", "up", "promisc", "on"},
      {"-n", client, "link", "set", "rl-client", "up"},
      {"-n", server, "link", "set", "rl-server", "up"},
      // Static neighbours: no ARP exchange inside a measured request.
      {"-n", client, "neigh", "replace", std::string(kLinkServerAddress), "lladdr", mac(2), "dev", "rl-client", "nud",
       "permanent"},
      {"-n", server, "neigh", "replace", std::string(kLinkClientAddress), "lladdr", mac(1), "dev", "rl-server", "nud",
       "permanent"},
  };
  for (const auto& command : commands) {
    if (auto done = run_ip(command); !done) return std::unexpected(done.error());
  }
  if (!options.spec.gso_enabled()) {
    // One segment per skb: the wire then sees (and drops) single MTU-sized packets.
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"-n", client, "link", "set", "rl-client", "gso_max_segs", "1"},
             {"-n", server, "link", "set", "rl-server", "gso_max_segs", "1"}}) {
      if (auto done = run_ip(command); !done) return std::unexpected(done.error());
    }
  }
  auto client_fd = open_namespace(client);
  if (!client_fd) return std::unexpected(client_fd.error());
  session.client_ns_ = *client_fd;
  auto server_fd = open_namespace(server);
  if (!server_fd) return std::unexpected(server_fd.error());
  session.server_ns_ = *server_fd;
  auto wire_fd = open_namespace(wire);
  if (!wire_fd) return std::unexpected(wire_fd.error());

  // The wire starts inside its namespace, dies with bench (a wire left behind would keep its
  // namespace's interfaces alive) and says on its stdout when it forwards.
  auto output = make_pipe();
  if (!output) return std::unexpected(output.error());
  SpawnOptions spawn;
  spawn.executable = options.wire_executable;
  spawn.arguments = {"--client-interface", "wire-c", "--server-interface", "wire-s", "--link", options.spec.canonical()};
  spawn.cpu = options.wire_cpu;
  spawn.network_namespace_fd = *wire_fd;
  spawn.parent_death_signal = SIGKILL;
  spawn.ignore_interrupt = true;  // bench stops it after the server, with SIGTERM
  spawn.fds = {{output->write.get(), STDOUT_FILENO}};
  auto child = ChildProcess::spawn(spawn);
  ::close(*wire_fd);
  output->write = net::Fd();
  if (!child) return std::unexpected(child.error().wrap("link"));
  session.wire_ = std::move(*child);
  session.wire_stdout_ = std::move(output->read);

  std::string line;
  const auto deadline = ProcessClock::now() + options.start_timeout;
  while (line.find('\n') == std::string::npos) {
    auto outcome = read_some(session.wire_stdout_.get(), line, deadline, &session.wire_);
    if (!outcome || *outcome != ReadOutcome::data) break;
  }
  if (const std::size_t at = line.find("; scheduling "); at != std::string::npos) {
    session.wire_scheduling_ = line.substr(at + 13, line.find('\n', at) - at - 13);
  }
  if (!line.starts_with("wire ready")) {
    return fail(fmt::format("link: {} (pid {}) did not report ready within {} ms{}", options.wire_executable,
                            session.wire_.pid(), options.start_timeout.count(),
                            line.empty() ? " (see its error above)" : ": " + line));
  }
  return session;
}

LinkSession::LinkSession(LinkSession&& other) noexcept
    : prefix_(std::move(other.prefix_)),
      original_ns_(std::exchange(other.original_ns_, -1)),
      client_ns_(std::exchange(other.client_ns_, -1)),
      server_ns_(std::exchange(other.server_ns_, -1)),
      wire_(std::move(other.wire_)),
      wire_stdout_(std::move(other.wire_stdout_)),
      wire_scheduling_(std::move(other.wire_scheduling_)),
      namespaces_made_(std::exchange(other.namespaces_made_, false)) {}

LinkSession::~LinkSession() { (void)close(); }

Status LinkSession::enter_client() { return enter(client_ns_, "client"); }
Status LinkSession::enter_server() { return enter(server_ns_, "server"); }
Status LinkSession::leave() { return enter(original_ns_, "original"); }

std::string LinkSession::describe() const {
  return fmt::format(
      "user-space wire (pid {}, AF_PACKET between two veth pairs, scheduling {}) in namespaces {}client (rl-client {}), "
      "{}wire, {}server (rl-server {})",
      wire_.pid(), wire_scheduling_.empty() ? "unknown" : wire_scheduling_, prefix_, kLinkClientAddress, prefix_, prefix_, kLinkServerAddress);
}

Status LinkSession::close(LinkInfo* info) {
  std::vector<std::string> problems;
  if (original_ns_ >= 0) {
    if (auto back = leave(); !back) problems.push_back(back.error().message);
  }
  if (wire_.running()) {
    wire_.signal(SIGTERM);
    const auto deadline = ProcessClock::now() + kWireStopTimeout;
    std::string output;
    for (;;) {
      auto outcome = read_some(wire_stdout_.get(), output, deadline, &wire_);
      if (!outcome || *outcome == ReadOutcome::end_of_file || *outcome == ReadOutcome::timed_out) break;
      if (*outcome == ReadOutcome::child_exited) break;
    }
    const ChildProcess::Stopped stopped = wire_.terminate(std::chrono::milliseconds(0));
    if (!stopped.status.success())
      problems.push_back(fmt::format("link: the wire (pid {}) {}", wire_.pid(), stopped.status.describe()));
    if (info != nullptr) {
      // Its last line is one JSON object of counters per direction.
      const std::size_t start = output.find("{\"to_server\"");
      const auto parsed = nlohmann::json::parse(start == std::string::npos ? std::string{} : output.substr(start),
                                                nullptr, false);
      if (parsed.is_object()) {
        for (const char* direction : {"to_server", "to_client"}) {
          if (!parsed.contains(direction)) continue;
          for (const auto& [key, value] : parsed[direction].items()) {
            if (value.is_number()) info->wire[std::string(direction) + "." + key] = value.get<double>();
          }
        }
        for (const char* key : {"socket_drops", "timer_overshoot_estimate_ns"}) {
          if (parsed.contains(key) && parsed[key].is_number()) info->wire[key] = parsed[key].get<double>();
        }
      }
    }
  }
  wire_stdout_ = net::Fd();
  for (int* fd : {&client_ns_, &server_ns_, &original_ns_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (namespaces_made_) {
    namespaces_made_ = false;
    for (const char* which : {"client", "wire", "server"}) {
      const std::string name = prefix_ + which;
      if (!std::filesystem::exists(std::string(kNetnsDirectory) + "/" + name)) continue;
      if (auto deleted = run_ip({"netns", "delete", name}); !deleted) problems.push_back(deleted.error().message);
    }
  }
  if (problems.empty()) return {};
  std::string all;
  for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
  return fail(all);
}

}  // namespace ringlab::bench
