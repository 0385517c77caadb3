#pragma once
// Strategy: one way of fetching and deserializing a response, and the registry bench knows them by.
//
// A strategy owns one whole request: it picks a connection (pooled or fresh), sends through the
// http::Client over a net::Ring (or, for peers, through client libraries, blocking sockets or epoll), decides
// where the body lands through its BodySink, deserializes with json/ and consumes the records (the
// same cheap fold for all, json/consume.hpp). Strategies differ only in body sink, connection policy,
// send mode and deserialization, so that a difference in the table is a difference in those.
//
// Life of a strategy in a benchmark case:
//   make()                  untimed
//   skip_reason(features)   a kernel feature it needs is missing -> the case is shown as skipped
//   skip_case(config)       a case it has no meaningful way to run (a payload whose records lack the
//                           fields it reads) -> skipped too, with the reason
//   setup(config)           untimed: ring, client, buffers, first connection
//                           (--client fresh: the whole life runs inside every timed op instead, below)
//   run(timeline, consume)  timed, many times; must not allocate unless the strategy is about allocating
//   run(timeline, verify)   untimed, on sampled ops: the same request, then the full checksum
//   io_counters()           read before and after the timed iterations
//   held_memory()           read once after the case's pilot: what it keeps per connection while idle
//   teardown()              untimed
//
// Checks: what runs inside the clock is the request, the deserialization and the consumption; the
// proof of content runs outside it. setup() computes the checksum the generator's records must give
// (json::checksum_weather / checksum_repos / checksum_github; a strategy that reads only some fields,
// three_fields, the checksum of those) and makes one verified request (not with CaseConfig::client
// fresh: there setup() builds the client only, and bench's verified ops prove it). bench verifies at least one
// op of every iteration (Check::verify, clock stopped): the strategy deserializes as always, then
// computes the full checksum of every field (json/checksum.hpp) of the records that op produced and
// compares it with the generator's. A mismatch is an error naming both values, never a number in the
// table; bench also compares each strategy's checksum with its method's baseline's.
//
// Errors: a Result whose Error says which step failed, for which case ("presized weather 1000:
// truncated 127.0.0.1:8080: peer closed after 512 of 77123 body bytes"). After an error the strategy
// stays usable (its connection is closed; the next run() opens a new one); nothing is retried.
//
// Registration: an explicit constant table in strategies/src/registry.cpp (the peers' rows in
// peer_recipes.hpp), one row per strategy with named fields (strategies/src/recipe.hpp). A strategy of ringlab's own stack is its row alone: the
// client's connection policy, receive and send modes and io_uring enters, the sink the body lands in and
// the models it is parsed into, run by one generic client strategy; a row whose code differs (streaming,
// the floors, proxy, the memory resources, the JSON libraries, the peers) names the maker of its class,
// defined in that class's source file. The Descriptor rows below are made from that table at compile
// time. No static initialisers and no linker tricks: the table is constant data, and a strategy that is
// not in it does not exist for bench. Code outside the tree adds its own with register_strategy() before
// bench runs (examples/my_strategy: its main() registers, then hands over to bench::run_bench).
//
// A fresh client (CaseConfig::client fresh, bench --client fresh): bench makes, sets up, runs once and
// tears down a new strategy inside every op, timed (bench/src/run/fresh_client.hpp), so that the whole
// client (ring or event loop, client object, pool, buffers, connection) is built and destroyed per
// request, as a new HttpClient per request is; the JSON parser is the thread's, lent to each client, as
// .NET keeps its serializer per process. setup() then does nothing but build: no verified request,
// no sizing request, no count read from /proc; a strategy that cannot be built without a request (one
// that sizes memory from a real body, the floors that fetch theirs once) says so in skip_case().
//
// Threads: a strategy (its ring, client, buffers) is used by the thread that called setup() only. One
// that runs its requests on threads of its own besides (blocking_sockets with N in flight: a worker per
// connection) starts and joins them itself and reports their CPU time (IoCounters' worker_* fields).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ringlab/http/client.hpp"
#include "ringlab/net/ring.hpp"

namespace ringlab::strategies {

// github: flat 22-field repository records (GET /github), GitHub's repository object without its nested
// parts. jos: the records of jos's own GitHub dummy API (GET /profiles: 21 keys with a tags array and two
// floats, json/profiles.hpp), read into his 3-field DTO {name, url, stars} by every strategy, as every one of
// his Versions does; its checksum covers those three fields (json::checksum_profiles).
enum class Payload { weather, repos, github, profiles };
// proxy: GET /proxy, several per op (bench proxy); its own method, so its rows stay out of the get suite.
// echo: POST of one small JSON object to /echo?chunked=1, the answer read as a string (bench echo).
enum class Method { get, post, proxy, echo };
// How a case uses connections: one kept alive across its requests (a pooled HttpClient), or a new one
// per request, closed after the response (a new HttpClient per request: jos's Version 0/1).
enum class Connection { pooled, fresh };
// How long a case's client lives: the whole case (made and set up once, a pooled HttpClient), or one
// request (a new HttpClient per request: jos's Version 0/1, HttpWebRequest, WebRequest/WebClient on
// .NET Core; bench --client fresh). A fresh client opens its own connection, so it has no connection
// policy of its own: CaseConfig::connection stays pooled (a kept-alive connection for the client's one
// request, closed when the client goes). `inflight` is a pooled client of the row's N-in-flight form
// (Descriptor::make_inflight: InflightClient, the peers' event loops) run with one request in flight:
// what measures whether the one-request form (http::Client) earns its separate code (bench --client).
enum class Client { pooled, fresh, inflight };
// How the server produces the GET bodies of a case (bench --server-mode):
//   cached  serialized once per size and served from the server's body cache, with Content-Length:
//           what isolates the client's cost (the default);
//   seed    serialized anew for every request and sent with chunked transfer coding as it is
//           serialized, as the seeds' ASP.NET Core servers answer (System.Text.Json writes the records
//           through a 16 KiB buffer into Kestrel's response stream, which frames each write as a
//           chunk; the server does the same with its --serializer-buffer, docs/server.md): the server's
//           share of a request then weighs as it did in the seeds, and its first bytes arrive before
//           its last record is serialized. The request asks for chunks of kSeedChunkBytes, which the
//           server uses only when it serializes whole bodies first (--serializer-buffer 0).
enum class ServerMode { cached, seed };
inline constexpr std::size_t kSeedChunkBytes = 16 * 1024;

[[nodiscard]] std::string_view payload_name(Payload payload) noexcept;
[[nodiscard]] std::optional<Payload> parse_payload(std::string_view name) noexcept;
[[nodiscard]] std::string_view connection_name(Connection connection) noexcept;
[[nodiscard]] std::optional<Connection> parse_connection(std::string_view name) noexcept;
[[nodiscard]] std::string_view server_mode_name(ServerMode mode) noexcept;
[[nodiscard]] std::optional<ServerMode> parse_server_mode(std::string_view name) noexcept;
// Here, not in the registry's source: bench's runner spells them without the strategies library.
[[nodiscard]] constexpr std::string_view client_name(Client client) noexcept {
  switch (client) {
    case Client::fresh:
      return "fresh";
    case Client::inflight:
      return "inflight";
    case Client::pooled:
      break;
  }
  return "pooled";
}
[[nodiscard]] constexpr std::optional<Client> parse_client(std::string_view name) noexcept {
  if (name == "pooled") return Client::pooled;
  if (name == "fresh") return Client::fresh;
  if (name == "inflight") return Client::inflight;
  return std::nullopt;
}

struct Error {
  std::string message;
};
template <class T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

// The provided-buffer ring of a row that receives from one (provided_buffers, provided_bundles,
// provided_incremental; bench --ring-buffers, --ring-buffer-bytes): how many buffers, a power of two
// of at most 32768, of how many bytes. A field left 0 keeps the row's own (registry.cpp).
struct RingGeometry {
  unsigned buffers = 0;
  unsigned buffer_bytes = 0;
};

struct CaseConfig {
  std::string host = "127.0.0.1";  // the server under test
  uint16_t port = 0;
  Payload payload = Payload::weather;
  std::size_t count = 10;           // records per response (GET) or per posted body (POST)
  http::TickSource ticks = nullptr;  // for the phase timeline; null = no stamps
  // Connect deadline and per-operation deadline of every send and receive (the client's io_timeout,
  // the peers' SO_RCVTIMEO/SO_SNDTIMEO and epoll_wait timeouts; libcurl applies it to the whole
  // transfer, CURLOPT_TIMEOUT_MS): a server that stalls fails the request with a timeout error
  // instead of hanging it.
  net::Duration timeout = std::chrono::seconds(10);
  // Every strategy honours it (bench --connection): fresh opens a connection per run() and closes it
  // after the response, whatever the strategy does otherwise (fresh_connection is always fresh).
  Connection connection = Connection::pooled;
  // Every GET target carries it (common.hpp's get_target): the server answers cached bodies with
  // Content-Length, or bodies serialized per request in chunks, as the seeds' servers did.
  ServerMode server_mode = ServerMode::cached;
  // Requests in flight at once (bench --inflight): N kept-alive connections, one request in flight on
  // each; one run() is then one round of N requests, all sent before any response is awaited, and
  // returns when all N responses are deserialized. 1: one request, one connection (every strategy).
  // Only the strategies Descriptor::make_inflight makes are given more than 1.
  std::size_t inflight = 1;
  // pooled: setup() builds the client of the whole case. fresh: this setup() runs inside a timed op and
  // the strategy lives for one request (bench --client fresh, see above): build only, nothing else.
  // Never given with inflight > 1 or with connection fresh (bench refuses both).
  Client client = Client::pooled;
  // Instead of the row's provided-buffer ring, field by field (0: the row's).
  RingGeometry ring{};
};

// io_uring work and other per-operation facts a strategy can report; summed over the timed run.
struct IoCounters {
  uint64_t ring_enters = 0;
  uint64_t sqes_submitted = 0;
  uint64_t cqes_reaped = 0;
  uint64_t connections_opened = 0;
  uint64_t zero_copy_sends = 0;
  uint64_t zero_copy_copied = 0;  // sends the kernel reported as copied anyway
  // System calls on the request path: io_uring_enter for ringlab's strategies (= ring_enters); connect,
  // send, recv, epoll_wait... for blocking_sockets and epoll. Meaningful only with counts_syscalls.
  uint64_t syscalls = 0;
  bool counts_syscalls = true;  // false: the strategy cannot see its syscalls (libcurl); shown as n/a
  // A strategy that runs its requests on threads of its own (blocking_sockets with N in flight: a worker
  // thread per connection): their CPU time in user space and in the kernel, and their minor page faults,
  // cumulative since setup (getrusage(RUSAGE_THREAD) taken by each worker after each of its jobs). The
  // measuring thread's getrusage does not see them; bench adds their change over the timed ops to the
  // op's CPU time and page faults. Zero for a strategy without workers (a library's own threads, which
  // it does not see, are not in them either).
  uint64_t worker_user_ns = 0;
  uint64_t worker_system_ns = 0;
  uint64_t worker_minor_faults = 0;
  // The response bodies and their copies on the client's side, cumulative; meaningful only with
  // counts_copies (a library peer's buffers are its own: n/a). body_bytes: the bodies received (de-chunked).
  // body_kernel_copied: of them, those a receive copied from the socket into user memory (recv, read,
  // READ_FIXED, a provided buffer: every receive path that is not a mapping). body_ringlab_copied: body
  // bytes ringlab's code copied or moved in user space after they landed (a sink's appends and growth,
  // chunk framing slid out, the copy into a string or a padded buffer before the parse), so it may exceed
  // body_bytes. body_mapped: body bytes the kernel mapped into user memory instead of copying them.
  // Deserializing into owning models copies strings out of the body; that is the parse, not counted here.
  bool counts_copies = false;
  uint64_t body_bytes = 0;
  uint64_t body_kernel_copied = 0;
  uint64_t body_ringlab_copied = 0;
  uint64_t body_mapped = 0;

  // Adds `more`'s counts to these (a strategy that runs others: its workers, bench's copies of a case); the
  // counts_* flags stay this one's.
  void add(const IoCounters& more) noexcept { each_count(more, [](uint64_t& mine, uint64_t theirs) { mine += theirs; }); }
  // What these counts gained since `before` (a reading of the same strategy's counters); the flags are these.
  [[nodiscard]] IoCounters since(const IoCounters& before) const noexcept {
    IoCounters gained = *this;
    gained.each_count(before, [](uint64_t& mine, uint64_t earlier) { mine -= earlier; });
    return gained;
  }

 private:
  // `apply(this count, other's same count)` for every count (the flags are not counts).
  template <class Apply>
  void each_count(const IoCounters& other, Apply apply) noexcept {
    apply(ring_enters, other.ring_enters);
    apply(sqes_submitted, other.sqes_submitted);
    apply(cqes_reaped, other.cqes_reaped);
    apply(connections_opened, other.connections_opened);
    apply(zero_copy_sends, other.zero_copy_sends);
    apply(zero_copy_copied, other.zero_copy_copied);
    apply(syscalls, other.syscalls);
    apply(worker_user_ns, other.worker_user_ns);
    apply(worker_system_ns, other.worker_system_ns);
    apply(worker_minor_faults, other.worker_minor_faults);
    apply(body_bytes, other.body_bytes);
    apply(body_kernel_copied, other.body_kernel_copied);
    apply(body_ringlab_copied, other.body_ringlab_copied);
    apply(body_mapped, other.body_mapped);
  }
};

// What a strategy keeps between requests (its connections idle), in bytes, for bench's "held per
// connection" column: the capacity it keeps, not what the last request used. A strategy that frees its
// body after every request (string_copy) holds no body; one that keeps a padded buffer (presized) holds
// the largest body seen, per connection. connections == 0: the strategy does not report it (shown as
// n/a). Strings a record owns outside its vector are not counted in model_bytes (their capacity is not
// known without walking the records); RSS per connection, measured by bench, covers them.
struct HeldMemory {
  std::size_t connections = 0;    // what the bytes are held for: N with --inflight N, else 1
  std::size_t body_bytes = 0;     // body buffers' capacity (padded buffers with their padding, strings)
  std::size_t model_bytes = 0;    // models' record vectors' capacity (capacity x record size)
  std::size_t receive_bytes = 0;  // the client's receive buffers: its own, or its provided-buffer ring
  [[nodiscard]] std::size_t total_bytes() const noexcept { return body_bytes + model_bytes + receive_bytes; }
  // Zero when not reported.
  [[nodiscard]] double per_connection() const noexcept {
    return connections == 0 ? 0.0 : static_cast<double>(total_bytes()) / static_cast<double>(connections);
  }
};

// What run() does after deserializing.
enum class Check {
  consume,  // fold the records (json::Consumer): the timed path
  verify,   // also the full checksum of every field, compared with the generator's: clock stopped
};

struct Outcome {
  uint64_t consumed = 0;  // the Consumer's fold of the records (constant for a strategy and case)
  uint64_t checksum = 0;  // with Check::verify: the full checksum (equal to the generator's); else 0
};

class Strategy {
 public:
  Strategy() = default;
  virtual ~Strategy() = default;
  // A strategy owns connections, buffers and memory resources that views point into: never copied.
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;
  [[nodiscard]] virtual std::optional<std::string> skip_reason(const net::RingFeatures& features) const {
    (void)features;
    return std::nullopt;
  }
  // The reason this strategy does not run `config` (three_fields on weather records, which have none of
  // the three fields it reads); nullopt to run it. Asked after skip_reason(), before setup().
  [[nodiscard]] virtual std::optional<std::string> skip_case(const CaseConfig& config) const {
    (void)config;
    return std::nullopt;
  }
  virtual Status setup(const CaseConfig& config) = 0;
  // One whole request. `timeline` may be null. With Check::verify a checksum that differs from the
  // generator's is an error.
  virtual Result<Outcome> run(http::Timeline* timeline, Check check) = 0;
  [[nodiscard]] virtual IoCounters io_counters() const { return {}; }
  // What it keeps between requests (HeldMemory); asked between run()s, never during one. The default:
  // not reported.
  [[nodiscard]] virtual HeldMemory held_memory() const { return {}; }
  // Closes the kept-alive connection, so that the next run() opens a new one. Called by bench, outside
  // the clock, after a case sat idle for longer than a server keeps an idle connection (cases set up
  // one after another, then measured side by side): a connection the server closed meanwhile would
  // fail the next request, and nothing is retried. Peers that check their connection before reusing
  // it themselves (libcurl) need not do anything.
  virtual void drop_connection() {}
  // Extra facts shown under the table (e.g. "sockets left in TIME_WAIT: 1234").
  [[nodiscard]] virtual std::string notes() const { return {}; }
  virtual void teardown() {}
};

struct Descriptor {
  std::string_view name;         // "presized"
  std::string_view description;  // one line: where the bytes land, how often they are copied
  std::string_view mirrors;      // the .NET pattern of the seeds it corresponds to
  Method method = Method::get;
  bool baseline = false;         // the Ratio column's 1.00 for its method
  bool peer = false;             // not ringlab's io_uring stack (client libraries, blocking sockets, epoll)
  std::unique_ptr<Strategy> (*make)() = nullptr;
  // A physical limit shown for reference (floor_transfer, floor_parse), not a way to read a response.
  bool reference = false;
  // The reference row that parses as this row does, warm and without the network: floor_parse for the
  // rows that read json/'s views (views, streaming), floor_parse_rapidjson and floor_parse_nlohmann for
  // those libraries' rows. Empty where no floor parses as the row does: the rows of owning models (no
  // owning-model floor yet), POST and echo, the reference rows. bench's findings compare each row that
  // names one with floor_transfer + this floor.
  std::string_view parse_floor = {};
  // Its checksum covers some of the records' fields only (three_fields: jos's Version 8 reads three):
  // checked against its own ground truth, never against the baseline's full checksum.
  bool partial_checksum = false;
  // The strategy of a case with more than one request in flight (CaseConfig::inflight > 1); null: the
  // strategy runs one request at a time, and bench shows its cases with N > 1 as not applicable.
  std::unique_ptr<Strategy> (*make_inflight)() = nullptr;
};

// Every registered strategy: the built-in table (baseline first within each method), then those
// register_strategy() added, in the order they were added. The rows never move: a span returned here
// and the Descriptor* of find() stay valid for the life of the process (a span taken before a
// register_strategy() does not see the row it added).
[[nodiscard]] std::span<const Descriptor> registry();
[[nodiscard]] const Descriptor* find(std::string_view name);

// How many strategies register_strategy() may add: the registry's room for them is reserved when it is
// first used, so that it never moves.
inline constexpr std::size_t kMaxRegisteredStrategies = 64;

// Adds a strategy written outside the tree to registry(). Call it before anything reads the registry
// for a run (a span registry() returned earlier does not see the new row), from the thread that will
// run bench. The descriptor is copied; the strings it points to and `make` must stay
// valid while the registry is used (string literals and functions of the program or of a library it
// never unloads). Refused with the reason: an empty name, no make(), a name already registered, a
// baseline (each method keeps its built-in one: the ratios of every table are against it), more than
// kMaxRegisteredStrategies added.
[[nodiscard]] Status register_strategy(const Descriptor& descriptor);

}  // namespace ringlab::strategies
