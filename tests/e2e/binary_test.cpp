// The built `server` binary: its one stdout line, its flags, and its graceful stop on SIGTERM/SIGINT.
#include <signal.h>

#include <doctest/doctest.h>

#include "support.hpp"

using namespace ringlab;
using namespace ringlab::e2e;

namespace {

ServerBinary start_binary(const std::vector<std::string>& flags) {
  return start_server_binary(RINGLAB_SERVER_BINARY, flags);
}

}  // namespace

TEST_CASE("the binary prints one 'listening on' line, serves, and exits 0 on SIGTERM") {
  auto running = start_binary({});
  CHECK(running.port != 0);
  RawClient client(running.port);
  Response response = client.get("/weather?count=3");
  CHECK(response.status == 200);
  CHECK(json_array_size(response.body) == 3);
  running.child.signal(SIGTERM);
  CHECK(running.child.wait() == 0);
  // Nothing else on stdout.
  CHECK_FALSE(running.child.read_line(1s).has_value());
}

TEST_CASE("SIGINT stops the binary too, with connections open") {
  auto running = start_binary({"--threads", "2"});
  RawClient idle(running.port);
  RawClient used(running.port);
  CHECK(used.get("/health").status == 200);
  running.child.signal(SIGINT);
  CHECK(running.child.wait() == 0);
  CHECK(idle.closed_by_peer(5s));
}

TEST_CASE("the binary's flags reach the server") {
  auto running = start_binary({"--idle-timeout", "300ms", "--max-header", "1KiB", "--max-body", "100",
                               "--threads", "2", "--max-connections", "8", "--cache-entries", "2",
                               "--cache-bytes", "1MiB", "--recv-buffer-size", "1KiB", "--recv-buffers", "64",
                               "--upstream-timeout", "2s", "--shutdown-timeout", "1s", "--inline-body", "0", "--max-queued-output", "64KiB",
                               "--cpu", "0", "--header-timeout", "5s", "--body-timeout", "5s", "--max-count", "5",
                               "--max-answer", "1MiB", "--malloc-mmap-threshold", "2MiB", "--recv-multishot",
                               "--body-strategy", "copy"});
  {
    // A sanitizer's allocator refuses mallopt: the server says so and /env says "dynamic".
    RawClient client(running.port);
    client.send(get_request("/env"));
    const std::string env = client.read_response().body;
    CHECK(env.find(R"("recv":"multishot")") != std::string::npos);
    CHECK(env.find(R"("body_strategy":"copy")") != std::string::npos);
#if defined(__SANITIZE_ADDRESS__)
    CHECK(env.find(R"("malloc_mmap_threshold":"dynamic")") != std::string::npos);
#else
    CHECK(env.find(R"("malloc_mmap_threshold":"2097152")") != std::string::npos);
#endif
  }
  {
    RawClient client(running.port);
    client.send(get_request("/health", "X-Pad: " + std::string(2000, 'p') + "\r\n"));
    CHECK(client.read_response().status == 431);
  }
  {
    RawClient client(running.port);
    client.send(post_request("/echo", std::string(101, 'b'), "text/plain"));
    CHECK(client.read_response().status == 413);
  }
  {
    // --max-count 5: the limit is in the error.
    RawClient client(running.port);
    Response refused = client.get("/weather?count=6");
    CHECK(refused.status == 400);
    CHECK(json_error(refused.body).value_or("").find("from 0 to 5 ") != std::string::npos);
  }
  {
    // --inline-body 0: the body goes out as its own iovec; the bytes are the same.
    RawClient client(running.port);
    client.send(get_request("/weather?count=2"));
    CHECK(json_array_size(client.read_response().body) == 2);
  }
  {
    RawClient client(running.port);
    client.send(post_request("/echo", std::string(100, 'b'), "text/plain"));
    CHECK(client.read_response().status == 200);
    CHECK(client.closed_by_peer(10s));  // the idle timeout
  }
  running.child.signal(SIGTERM);
  CHECK(running.child.wait() == 0);
}

TEST_CASE("a bad command line exits 2, a server that cannot start exits 1, each with a message") {
  TempDir dir;
  struct Row {
    std::vector<std::string> flags;
    int status;
    std::string message;
  };
  // Refused while the command line is read (exit 2), the message naming the first word: a value the flag
  // does not take, or a word that is no flag.
  const std::vector<std::vector<std::string>> unreadable = {
      {"--threads", "0"}, {"--idle-timeout", "soon"}, {"--max-body", "lots"}, {"--body-timeout", "never"},
      {"--max-count", "2000000"}, {"--max-answer", "much"}, {"--malloc-mmap-threshold", "2KiB"},
      {"--malloc-mmap-threshold", "64MiB"}, {"--body-strategy", "zerocopy"}, {"--body-strategy", ""},
      {"--fixed-body-bytes", "lots"}, {"--no-such-flag"}, {"--bogus"}, {"stray"},
  };
  // Read, but the server cannot start with them (exit 1), each with its message.
  SilentListener taken;
  const std::vector<std::pair<std::vector<std::string>, std::string>> unstartable = {
      {{"--header-timeout", "0"}, "--header-timeout"},
      {{"--recv-buffers", "100"}, "--recv-buffers"},
      {{"--upstream", "https://127.0.0.1:1"}, "--upstream"},
      {{"--bind", "example.com"}, "example.com"},
      {{"--port", std::to_string(taken.port()), "--bind", "127.0.0.1"}, "Address already in use"},
      {{"--body-strategy", "fixed", "--fixed-body-bytes", "0"}, "--fixed-body-bytes"},
  };
  std::vector<Row> rows;
  for (const std::vector<std::string>& flags : unreadable) rows.push_back({flags, 2, flags.front()});
  for (const auto& [flags, message] : unstartable) rows.push_back({flags, 1, message});
  for (const Row& row : rows) {
    std::vector<std::string> argv = {RINGLAB_SERVER_BINARY};
    argv.insert(argv.end(), row.flags.begin(), row.flags.end());
    INFO(argv[1]);
    auto exit_code = run(argv, dir.file("out"), dir.file("err"), 30s);
    REQUIRE(exit_code.has_value());
    CHECK(*exit_code == row.status);
    const std::string err = read_file(dir.file("err"));
    CHECK_MESSAGE(err.find(row.message) != std::string::npos, "stderr: ", err);
    CHECK(read_file(dir.file("out")).find("listening on") == std::string::npos);
  }
}

TEST_CASE("--help lists every route with its parameters and limits, and exits 0") {
  TempDir dir;
  auto exit_code = run({RINGLAB_SERVER_BINARY, "--help"}, dir.file("out"), dir.file("err"), 30s);
  REQUIRE(exit_code.has_value());
  CHECK(*exit_code == 0);
  const std::string out = read_file(dir.file("out"));
  INFO(out);
  for (const char* text : {"GET  /weather?count=N[&format=ndjson]", "GET  /repos?count=N[&format=ndjson]", "POST /echo",
                           "GET  /plaintext", "GET  /health", "GET  /proxy?count=N[&conn=pooled|fresh]",
                           "0 to 1,000,000", "chunked=1|0|true|false", "chunk=BYTES", "--max-count", "--max-answer",
                           "Exit status"}) {
    CHECK_MESSAGE(out.find(text) != std::string::npos, text);
  }
}
