// Abuse of the `server` binary by one client: each case gets the answer nginx would give (or the
// documented limit), and the server's resident memory and open descriptors, read from /proc before,
// during and after the case, stay bounded and come back once the connections are closed.
//
// The server runs as a child process so that /proc measures it alone. Under ASan its allocator keeps
// freed memory in a quarantine; the child is started with a small one (see kChildAsanOptions), so
// that "after" means what the server holds, not what the sanitizer holds back.
//
// The bounds are loose enough for the sanitizer's own overhead and tight enough that each case's old
// behaviour (hundreds of MB for unread pipelined echoes, six bytes of memory per body byte for
// chunk=1, 1.3 GB for a HEAD of count=1000000, an abort for a huge Content-Length) fails them.
// Each case prints its figures on stderr ("abuse: ..."), which ctest shows on failure.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;
// RSS after a case may exceed the value before it by this much (the bound).
constexpr uint64_t kAfterSlack = 10 * kMiB;

// Quarantine off, freed memory returned to the kernel promptly: otherwise ASan alone would keep
// every freed byte resident (harmless, ignored without ASan).
constexpr const char* kChildAsanOptions = "quarantine_size_mb=0:allocator_release_to_os_interval_ms=100";

// The server's resident bytes and open descriptors before, during and after a case.
struct Figures {
  uint64_t rss_before = 0, rss_during = 0, rss_after = 0;
  std::size_t fds_before = 0, fds_during = 0, fds_after = 0;
};

// One server per case, with the given flags, and its /proc figures.
class Subject {
 public:
  // `asan`: more ASAN_OPTIONS for this server (ignored by a build without ASan).
  explicit Subject(std::vector<std::string> flags, std::string_view asan = {})
      : server_(start(std::move(flags), asan)) {
    // The first answers warm the worker (ring, buffers, a connection object): not the case's cost.
    {
      RawClient warm(port());
      CHECK(warm.get("/health").status == 200);
    }
    // Its socket is closed (the server saw the EOF) by the time the case starts measuring.
    std::this_thread::sleep_for(200ms);
  }

  [[nodiscard]] uint16_t port() const { return server_.port; }
  [[nodiscard]] pid_t pid() const { return server_.child.pid(); }
  [[nodiscard]] uint64_t rss() const { return resident_bytes(server_.child.pid()); }
  [[nodiscard]] std::size_t fds() const { return open_fds(server_.child.pid()); }

  // The server's figures settle within a tick of the connections closing (pools are trimmed and
  // memory handed back at the tick, at most a second apart): polls until RSS is within 1 MiB of
  // `before` or 2 s passed. The caller checks the bound it promises.
  uint64_t settled_rss(uint64_t before) const {
    uint64_t now = rss();
    for (int i = 0; i < 20 && now > before + kMiB; ++i) {
      std::this_thread::sleep_for(100ms);
      now = rss();
    }
    return now;
  }
  std::size_t settled_fds(std::size_t before) const {
    std::size_t now = fds();
    for (int i = 0; i < 30 && now > before; ++i) {
      std::this_thread::sleep_for(100ms);
      now = fds();
    }
    return now;
  }

  // The figures before the case: what it is measured against.
  [[nodiscard]] Figures figures_before() const {
    Figures f;
    f.rss_before = rss();
    f.fds_before = fds();
    return f;
  }
  // The figures while the case's connections are open.
  void take_during(Figures& f) const {
    f.rss_during = rss();
    f.fds_during = fds();
  }
  // The figures once they settled, descriptors down to `fds_expected` (those the case keeps open).
  void take_after(Figures& f, std::size_t fds_expected) const {
    f.rss_after = settled_rss(f.rss_before);
    f.fds_after = settled_fds(fds_expected);
  }
  void take_after(Figures& f) const { take_after(f, f.fds_before); }

  // Still serving: /health answered on a new connection.
  void check_serving() const {
    RawClient client(port());
    CHECK(client.get("/health").status == 200);
  }

 private:
  static ServerBinary start(std::vector<std::string> flags, std::string_view extra) {
    std::string asan = kChildAsanOptions;
    if (!extra.empty()) asan += ":" + std::string(extra);
    if (const char* inherited = std::getenv("ASAN_OPTIONS"); inherited != nullptr && *inherited != '\0') {
      asan = std::string(inherited) + ":" + asan;
    }
    ::setenv("ASAN_OPTIONS", asan.c_str(), 1);
    flags.insert(flags.end(), {"--threads", "1"});
    return start_server_binary(RINGLAB_SERVER_BINARY, flags);
  }
  ServerBinary server_;
};

void report(const char* name, int status, const Figures& f) {
  std::fprintf(stderr, "abuse: %-44s answer %3d  RSS before %6.1f MiB  during %6.1f MiB  after %6.1f MiB  fds %zu/%zu/%zu\n",
               name, status, static_cast<double>(f.rss_before) / kMiB, static_cast<double>(f.rss_during) / kMiB,
               static_cast<double>(f.rss_after) / kMiB, f.fds_before, f.fds_during, f.fds_after);
}

// Sends `unit` again and again without reading, until the kernel's buffers are full and the server
// no longer reads (no progress for `quiet`), or `cap` bytes went out. Returns the bytes sent.
std::size_t flood(RawClient& client, const std::string& unit, std::size_t cap, std::chrono::milliseconds quiet) {
  const int flags = ::fcntl(client.fd(), F_GETFL);
  ::fcntl(client.fd(), F_SETFL, flags | O_NONBLOCK);
  std::size_t sent = 0;
  std::size_t offset = 0;
  while (sent < cap) {
    pollfd p{client.fd(), POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(quiet.count())) <= 0) break;  // the server stopped reading
    const ssize_t n = ::send(client.fd(), unit.data() + offset, unit.size() - offset, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) break;  // the server answered and closed
    REQUIRE_MESSAGE(n > 0, "send: ", std::strerror(errno));
    sent += static_cast<std::size_t>(n);
    offset = (offset + static_cast<std::size_t>(n)) % unit.size();
  }
  ::fcntl(client.fd(), F_SETFL, flags);
  return sent;
}

// Reads and discards until `bytes` arrived or the peer closed; returns what arrived, keeping only
// the last `keep` bytes in `tail`.
std::size_t drain(int fd, std::size_t bytes, std::string& tail, std::size_t keep = 64) {
  std::size_t got = 0;
  char buffer[65536];
  while (got < bytes) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(kIoTimeout.count())) <= 0) break;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
    tail.append(buffer, static_cast<std::size_t>(n));
    if (tail.size() > keep) tail.erase(0, tail.size() - keep);
  }
  return got;
}

std::size_t count_answers(const std::string& bytes) {
  std::size_t count = 0;
  for (auto at = bytes.find("HTTP/1.1 "); at != std::string::npos; at = bytes.find("HTTP/1.1 ", at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("pipelined echoes that are never read: bounded by --max-queued-output, and given back") {
  Subject server({"--max-queued-output", "256KiB"});
  Figures f = server.figures_before();
  int status = 0;
  {
    RawClient client(server.port());
    std::string unit;
    for (int i = 0; i < 512; ++i) unit += "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx";
    // 64 MB of requests (over a million echoes) if the server read them all; it stops reading.
    const std::size_t sent = flood(client, unit, 64 * kMiB, 500ms);
    CHECK(sent < 64 * kMiB);
    server.take_during(f);
    server.check_serving();  // other connections are answered meanwhile
    Response first = client.read_response();
    status = first.status;
    CHECK(first.status == 200);
    CHECK(first.body == "x");
  }
  server.take_after(f);
  report("pipelined 1-byte echoes, unread", status, f);
  // What the connection holds: 256 KiB of queued answers and the rest of one receive buffer (the
  // kernel keeps the backlog: one recv per buffer). The slack is the answers' bookkeeping and the
  // allocator's pages; ASan's allocator keeps freed blocks in quarantine, so RSS says less there.
#if defined(__SANITIZE_ADDRESS__)
  CHECK(f.rss_during <= f.rss_before + 32 * kMiB);
#else
  CHECK(f.rss_during <= f.rss_before + 256 * 1024 + 16 * 1024 + kMiB);
#endif
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
  CHECK(f.fds_during == f.fds_before + 1);
  CHECK(f.fds_after == f.fds_before);
}

TEST_CASE("chunk=1 answer never read: memory is the body plus a window, not six bytes per body byte") {
  Subject server({"--max-queued-output", "256KiB", "--cache-bytes", "0"});
  Figures f = server.figures_before();
  constexpr uint32_t kCount = 100'000;  // 7.7 MB of JSON, 46 MB on the wire in 1-byte chunks
  int status = 0;
  {
    RawClient client(server.port());
    client.send(get_request("/weather?count=" + std::to_string(kCount) + "&chunked=1&chunk=1"));
    std::this_thread::sleep_for(1s);  // the server fills what the socket takes, then waits
    server.take_during(f);
    server.check_serving();
    // Then everything arrives, framed right: 6 bytes per body byte plus the last chunk.
    std::string tail;
    const std::size_t got = drain(client.fd(), SIZE_MAX, tail);
    status = 200;
    CHECK(got > 6ull * 7'000'000);
    CHECK(tail.ends_with("\r\n1\r\n]\r\n0\r\n\r\n"));
  }
  server.take_after(f);
  report("GET /weather?count=100000&chunked=1&chunk=1, unread", status, f);
  // The 7.7 MB body itself, two windows of 128 KiB, sanitizer overhead: far below the 46 MB the
  // framing would take if it were built at once.
  CHECK(f.rss_during <= f.rss_before + 24 * kMiB);
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
  CHECK(f.fds_after == f.fds_before);
}

TEST_CASE("HEAD and GET of a huge count: 400 with the limit, no body generated for HEAD") {
  Subject server({});
  Figures f = server.figures_before();
  RawClient client(server.port());
  client.send("HEAD /repos?count=1000000 HTTP/1.1\r\nHost: x\r\n\r\n");
  const int status = client.read_response(true).status;
  CHECK(status == 400);
  Response refused = client.get("/repos?count=1000000");
  CHECK(refused.status == 400);
  auto message = json_error(refused.body);
  REQUIRE(message.has_value());
  CHECK_MESSAGE(message->find("32768") != std::string::npos, "error: ", *message);
  // The largest allowed HEAD is answered at once, without generating its 40 MB body.
  client.send("HEAD /repos?count=32768 HTTP/1.1\r\nHost: x\r\n\r\n");
  Response head = client.read_response(true);
  CHECK(head.status == 200);
  CHECK_FALSE(head.header("Content-Length").has_value());
  server.take_during(f);
  server.check_serving();
  server.take_after(f, f.fds_before + 1);
  report("HEAD /repos?count=1000000", status, f);
  CHECK(f.rss_during <= f.rss_before + 8 * kMiB);
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
}

TEST_CASE("a huge Content-Length under a huge --max-body: nothing reserved, no abort") {
  Subject server({"--max-body", "100GiB"});
  Figures f = server.figures_before();
  {
    RawClient client(server.port());
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 64424509440\r\n\r\n" + std::string(100'000, 'b'));
    std::this_thread::sleep_for(300ms);
    server.take_during(f);
    server.check_serving();
  }
  server.take_after(f);
  report("POST /echo, Content-Length: 64424509440", 0, f);
  CHECK(f.rss_during <= f.rss_before + 8 * kMiB);
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
  CHECK(f.fds_during == f.fds_before + 1);
  CHECK(f.fds_after == f.fds_before);
}

TEST_CASE("a burst of connections: the connection pool is trimmed and the memory given back") {
  Subject server({});
  Figures f = server.figures_before();
  constexpr int kConnections = 600;  // below the usual 1,024 descriptors of a test process
  auto burst = [&] {
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < kConnections; ++i) {
      clients.push_back(std::make_unique<RawClient>(server.port()));
      clients.back()->send(get_request("/health"));
    }
    for (auto& client : clients) CHECK(client->read_response().status == 200);
    server.take_during(f);
  };
  burst();
  const uint64_t after_first = server.settled_rss(f.rss_before);
  burst();  // the same again: nothing may accumulate from one burst to the next
  server.take_after(f);
  report("burst of 600 connections, twice, then closed", 200, f);
  CHECK(f.fds_during == f.fds_before + kConnections);
  CHECK(f.fds_after == f.fds_before);
  CHECK(f.rss_after <= after_first + 4 * kMiB);
#if !defined(__SANITIZE_ADDRESS__)
  // ASan's allocator keeps the small blocks of 600 connection objects for itself (malloc_trim does
  // not reach it); glibc's gives them back at the next tick.
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
#endif
}

#if !defined(__SANITIZE_ADDRESS__)
// An allocation that fails, without exhausting the machine: the server's address space is capped
// (prlimit RLIMIT_AS) a little above what it uses, and an echo body outgrows it. Not under ASan,
// whose allocator reserves terabytes of address space and reports an exhausted one as fatal rather
// than throwing std::bad_alloc; run this with a build without sanitizers.
TEST_CASE("an allocation failure answers 503 and closes that connection; the server lives on") {
  Subject server({"--max-body", "1GiB"});
  const pid_t pid = server.pid();
  const std::string status_text = read_file("/proc/" + std::to_string(pid) + "/status");
  const uint64_t vm_size = std::stoull(status_text.substr(status_text.find("VmSize:") + 7)) * 1024;
  const rlimit cap{vm_size + 48 * kMiB, vm_size + 48 * kMiB};
  REQUIRE_MESSAGE(::prlimit(pid, RLIMIT_AS, &cap, nullptr) == 0, "prlimit: ", std::strerror(errno));
  Figures f = server.figures_before();
  int status = 0;
  {
    RawClient client(server.port());
    const std::string body(128 * kMiB, 'e');  // the echo body outgrows the cap: std::bad_alloc
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n");
    (void)flood(client, body, body.size(), 2s);
    server.take_during(f);
    Response response = client.read_response();
    status = response.status;
    CHECK(response.status == 503);
    CHECK(response.header("Connection") == "close");
    CHECK(client.closed_by_peer(5s));
  }
  server.check_serving();
  server.take_after(f);
  report("echo body past a capped address space", status, f);
  CHECK(f.fds_after == f.fds_before);
  // The body's blocks were mmapped (--malloc-mmap-threshold): they leave with it.
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
}
#endif

TEST_CASE("slow heads: 408 after --header-timeout, slots reclaimed, a new connection never hangs") {
  Subject server({"--header-timeout", "1s", "--max-connections", "4"});
  Figures f = server.figures_before();
  int status = 0;
  {
    std::vector<std::unique_ptr<RawClient>> slow;
    for (int i = 0; i < 4; ++i) {
      slow.push_back(std::make_unique<RawClient>(server.port()));
      slow.back()->send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    }
    std::this_thread::sleep_for(100ms);
    // Every slot is taken: a fifth connection is closed at once, not left waiting.
    {
      RawClient extra(server.port());
      CHECK(extra.closed_by_peer(2s));
    }
    // One byte every 200 ms is progress, but not a head within a second.
    std::vector<int> answers(slow.size(), 0);
    for (int tick = 0; tick < 25; ++tick) {
      std::this_thread::sleep_for(200ms);
      bool all = true;
      for (std::size_t i = 0; i < slow.size(); ++i) {
        if (answers[i] != 0) continue;
        pollfd p{slow[i]->fd(), POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) {
          answers[i] = slow[i]->read_response().status;
        } else {
          ::send(slow[i]->fd(), "a", 1, MSG_NOSIGNAL);
          all = false;
        }
      }
      if (tick == 2) {
        server.take_during(f);
      }
      if (all) break;
    }
    for (int answer : answers) CHECK(answer == 408);
    status = answers[0];
    for (auto& client : slow) CHECK(client->closed_by_peer(5s));
  }
  server.check_serving();  // the slots are free again
  server.take_after(f);
  report("4 slow heads at --max-connections 4", status, f);
  CHECK(f.fds_during == f.fds_before + 4);
  CHECK(f.fds_after == f.fds_before);
  CHECK(f.rss_after <= f.rss_before + kAfterSlack);
}

TEST_CASE("framing a lenient parser would misread gets one 400 and a close, nothing more") {
  struct Row {
    const char* name;
    std::vector<std::string> writes;
    int status;
  };
  const std::string chunked = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string smuggled = "GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string leading(16'400, '\n');  // over the 16 KiB head limit before the request line
  const std::vector<Row> rows = {
      {"CR+X before a second request", {"GET /health HTTP/1.1\r\nHost: x\r\n\rX" + smuggled}, 400},
      {"CR+X in a chunk-size line", {chunked + "1\rXa\r\n0\r\n\r\n" + smuggled}, 400},
      {"CR+X after the last chunk", {chunked + "1\r\na\r\n0\r\n\rX" + smuggled}, 400},
      {"obs-fold hiding a Content-Length", {"POST /echo HTTP/1.1\r\nHost: x\r\nX-A: a\r\n Content-Length: 5\r\n\r\nhello"}, 400},
      {"extension flood (1,000,000 ';')", {chunked + "1" + std::string(1'000'000, ';') + "\r\na\r\n0\r\n\r\n"}, 431},
      {"leading LF over the head limit, one write", {leading + smuggled}, 431},
      {"leading LF over the head limit, two writes", {leading, smuggled}, 431},
  };
  Subject server({});
  for (const Row& row : rows) {
    INFO(row.name);
    Figures f = server.figures_before();
    std::string answers;
    {
      RawClient client(server.port());
      for (const std::string& bytes : row.writes) {
        client.send(bytes);
        std::this_thread::sleep_for(20ms);  // separate receives for the split case
      }
      server.take_during(f);
      answers = client.read_until_close();
    }
    const int status = answers.size() > 12 ? std::atoi(answers.c_str() + 9) : 0;
    CHECK(status == row.status);
    CHECK_MESSAGE(count_answers(answers) == 1, "answers: ", answers.substr(0, 400));
    server.take_after(f);
    report(row.name, status, f);
    CHECK(f.rss_after <= f.rss_before + kAfterSlack);
    CHECK(f.fds_after == f.fds_before);
  }
  // The same head limit whatever the split: just under it, both ways are served.
  const std::string under(16'384 - smuggled.size(), '\n');
  for (bool split : {false, true}) {
    INFO("leading LF up to the limit, split ", split);
    RawClient client(server.port());
    if (split) {
      client.send(under);
      std::this_thread::sleep_for(20ms);
      client.send(smuggled);
    } else {
      client.send(under + smuggled);
    }
    CHECK(client.read_response().status == 200);
  }
}
