#pragma once
// What every strategy needs and none should write twice: the case's label for error messages, the
// URL and target of a case, the ground-truth checksum, and deserialization of a whole body into
// owning or viewing models, consumed (json/consume.hpp), with the checksum of the models on demand.
//
// Internal to strategies/ (tests include it to drive the pieces directly).
#include <algorithm>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/json/checksum.hpp"
#include "ringlab/json/consume.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/json/models.hpp"
#include "ringlab/http/timeline.hpp"
#include "ringlab/net/error.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

// The JSON array of the case's records 0..count-1, appended to `out`: the body a POST sends.
void append_payload_json(std::string& out, const CaseConfig& config);

// "presized weather 1000" ("epoll weather 1000 x64" with 64 requests in flight, "libcurl weather 10 fresh
// client" with --client fresh): the prefix of every error
// the strategy returns.
[[nodiscard]] std::string case_label(std::string_view strategy, const CaseConfig& config);

// "label: what". Only on error paths: it allocates.
[[nodiscard]] std::unexpected<Error> fail(std::string_view label, std::string_view what);

// "label: connection 3 of 64: what" (`index` counted from 0, named from 1): an error of one connection
// of a strategy with `count` requests in flight; "label: what" when `count` is 1 (the epoll row's one
// request). Only on error paths: it allocates.
[[nodiscard]] std::unexpected<Error> fail_on_connection(std::string_view label, std::size_t index, std::size_t count,
                                                        std::string_view what);

// `message` less the "label: " it starts with ("blocking_sockets weather 10 fresh client: recv ..." ->
// "recv ..."): the error of a strategy that runs one connection of another's round, for the round to
// name with its own label and the connection. A message that does not start so is kept whole.
[[nodiscard]] constexpr std::string_view without_label(std::string_view message, std::string_view label) noexcept {
  if (message.starts_with(label) && message.substr(label.size()).starts_with(": ")) {
    message.remove_prefix(label.size() + 2);
  }
  return message;
}

// The consumption fold of a round of N requests (the peers with N in flight): the N connections' folds
// folded in connection order, starting from 0 (with one connection, that connection's fold). Constant
// from round to round, as bench checks, since every response of a case is the same.
[[nodiscard]] constexpr uint64_t fold_connection(uint64_t round, uint64_t connection) noexcept {
  return round * 0x9E3779B97F4A7C15ULL + connection;
}

// The stamps of a round of N requests taken from its connections' own timelines (`stamps_of(i)`, i in
// [0, count)): first_byte and head_parsed the first of any connection, body_done the last. A connection
// that stamped nothing counts for nothing.
template <class StampsOf>
void stamp_round(http::Timeline& round, std::size_t count, StampsOf&& stamps_of) noexcept {
  uint64_t first_byte = UINT64_MAX;
  uint64_t head_parsed = UINT64_MAX;
  uint64_t body_done = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const http::Timeline& own = stamps_of(i);
    if (own.first_byte != 0) first_byte = std::min(first_byte, own.first_byte);
    if (own.head_parsed != 0) head_parsed = std::min(head_parsed, own.head_parsed);
    body_done = std::max(body_done, own.body_done);
  }
  round.first_byte = first_byte == UINT64_MAX ? 0 : first_byte;
  round.head_parsed = head_parsed == UINT64_MAX ? 0 : head_parsed;
  round.body_done = body_done;
}

// The memory a padded body buffer holds (HeldMemory::body_bytes): its capacity and its padding, or 0 when it
// holds none.
[[nodiscard]] inline std::size_t held_bytes(const base::PaddedBuffer& buffer) noexcept {
  return buffer.capacity() == 0 ? 0 : buffer.capacity() + base::kPadding;
}

// The body copies a strategy of ringlab's stack counts (IoCounters' body_* fields), cumulative: per response
// received(body bytes, the sink's copied_bytes() before and after it); per copy outside the sink (into a
// string or a padded buffer before the parse) copied(bytes); per page mapping (the mapped row's
// TCP_ZEROCOPY_RECEIVE) `mapped` += bytes. What a receive copied from the socket is the body less what was
// mapped: every other receive path copies (recv, READ_FIXED, provided buffers).
struct BodyCopies {
  uint64_t body = 0;
  uint64_t ringlab = 0;
  uint64_t mapped = 0;

  void received(uint64_t body_bytes, uint64_t sink_copied_before, uint64_t sink_copied_after) noexcept {
    body += body_bytes;
    ringlab += sink_copied_after - sink_copied_before;
  }
  void copied(uint64_t bytes) noexcept { ringlab += bytes; }
  // `counters` with these counts (counts_copies set).
  [[nodiscard]] IoCounters into(IoCounters counters) const noexcept {
    counters.counts_copies = true;
    counters.body_bytes = body;
    counters.body_kernel_copied = body - mapped;
    counters.body_ringlab_copied = ringlab;
    counters.body_mapped = mapped;
    return counters;
  }
};

// A strategy that cannot be built without a request of its own (it sizes its memory from one real body,
// or fetches the body it parses once) has no fresh-client form: with CaseConfig::client fresh, its
// skip_case() gives this reason ("<why>: a fresh client would make that request inside every op"),
// else nullopt.
[[nodiscard]] std::optional<std::string> no_fresh_client(const CaseConfig& config, std::string_view why);

// "/weather?count=N", "/repos?count=N", "/github?count=N" or "/profiles?count=N", then `extra_query` ("&chunked=1") appended
// as is, then, in the seed server mode, "&cache=0&chunked=1&chunk=16384" (the server serializes per
// request and answers in chunks).
[[nodiscard]] std::string get_target(const CaseConfig& config, std::string_view extra_query = {});
// "host:port", with brackets around an IPv6 host: the Host header value and the URL authority.
[[nodiscard]] std::string authority(const CaseConfig& config);

// The checksum the generator's records 0..count-1 give (json::checksum_weather / checksum_repos /
// checksum_github; for jos, json::checksum_profiles: the three fields of jos's DTO).
[[nodiscard]] uint64_t expected_checksum(const CaseConfig& config);

// "checksum 0x... differs from the generator's 0x... for N records": the text of a wrong answer.
[[nodiscard]] std::string checksum_mismatch(uint64_t got, uint64_t expected, std::size_t count);

// The consumption fold of every record of `records` (json::consume).
template <class Record>
[[nodiscard]] uint64_t consume_all(const std::pmr::vector<Record>& records) noexcept {
  return json::consume(std::span<const Record>(records));
}

// The records of any payload, in four vectors of which the payload's is used. `Weather`,
// `Repository`, `Github` and `Profile` (jos's 3-field DTO) are the owning or the viewing records. The vectors take their memory from
// `resource` and keep their capacity between parses.
template <class Weather, class Repository, class Github, class Profile>
class PayloadRecords {
 public:
  explicit PayloadRecords(std::pmr::memory_resource* resource = std::pmr::get_default_resource())
      : weather_(resource), repos_(resource), github_(resource), profiles_(resource) {}
  // The full checksum of every field of the records the last parse produced (json::checksum).
  [[nodiscard]] uint64_t checksum(Payload payload) const noexcept {
    return with_records(payload, [](const auto& records) { return json::checksum(std::span(records)); });
  }
  void reserve(Payload payload, std::size_t records) {  // so that run() never grows the vector
    with_records(payload, [records](auto& vector) { vector.reserve(records); });
  }
  [[nodiscard]] std::size_t size(Payload payload) const noexcept {
    return with_records(payload, [](const auto& records) { return records.size(); });
  }
  // The capacity the four vectors keep, in bytes (HeldMemory::model_bytes: strings the records own
  // outside the vectors not counted).
  [[nodiscard]] std::size_t capacity_bytes() const noexcept {
    return weather_.capacity() * sizeof(Weather) + repos_.capacity() * sizeof(Repository) +
           github_.capacity() * sizeof(Github) + profiles_.capacity() * sizeof(Profile);
  }
  // `deserialize` is called with the payload's vector (std::pmr::vector of the payload's record), fills it
  // as json::parse_array does (records overwritten in place, the rest erased) and returns a json::Status; the
  // result is the consumption fold of the records (json::consume).
  template <class Deserialize>
  [[nodiscard]] json::Result<uint64_t> fill(Payload payload, Deserialize&& deserialize) {
    return with_records(payload, [&deserialize](auto& records) -> json::Result<uint64_t> {
      if (auto status = deserialize(records); !status) return std::unexpected(std::move(status.error()));
      return consume_all(records);
    });
  }
  // Calls `use` with the payload's vector and returns what it returns.
  template <class Use>
  decltype(auto) with_records(Payload payload, Use&& use) {
    return of_payload(*this, payload, use);
  }
  template <class Use>
  decltype(auto) with_records(Payload payload, Use&& use) const {
    return of_payload(*this, payload, use);
  }

 protected:
  std::pmr::vector<Weather> weather_;
  std::pmr::vector<Repository> repos_;
  std::pmr::vector<Github> github_;
  std::pmr::vector<Profile> profiles_;

 private:
  // Both with_records(): `self` is *this, const or not.
  template <class Self, class Use>
  static decltype(auto) of_payload(Self& self, Payload payload, Use& use) {
    switch (payload) {
      case Payload::repos: return use(self.repos_);
      case Payload::github: return use(self.github_);
      case Payload::profiles: return use(self.profiles_);
      case Payload::weather: break;
    }
    return use(self.weather_);
  }
};

// Owning records parsed from a whole JSON array body. A body of the same shape parsed again allocates
// nothing more (the records' strings keep their capacity too).
// fill() serves a deserializer other than json/'s (nlohmann, rapidjson).
class OwningModels
    : public PayloadRecords<json::WeatherForecast, json::Repository, json::GithubRepository, json::ProfileStars> {
 public:
  using PayloadRecords::PayloadRecords;
  // Parses the whole body and returns the consumption fold of its records (json::consume).
  [[nodiscard]] json::Result<uint64_t> parse(Payload payload, json::Parser& parser,
                                             simdjson::padded_string_view body);
};

// Viewing records: they point into the body, which must stay alive and unchanged while they are used;
// parsing allocates only while the vectors grow to the largest body.
class ViewModels : public PayloadRecords<json::WeatherView, json::RepositoryView, json::GithubRepositoryView,
                                         json::ProfileStarsView> {
 public:
  // As OwningModels::parse; checksum() reads the body too, so it must still be where it was.
  [[nodiscard]] json::Result<uint64_t> parse(Payload payload, json::Parser& parser, json::PaddedBody body);
};

// "json: record 17 field temperatureC: ...": a json::Error as text for a strategy's error.
[[nodiscard]] std::string describe(const json::Error& error);

// The end of every run(), after the deserialized stamp: `consumed` is what deserializing returned; with
// Check::verify, `checksum()` (the full checksum of the records just made) must equal `expected`.
template <class ChecksumOfRecords>
[[nodiscard]] Result<Outcome> conclude(std::string_view label, const CaseConfig& config, uint64_t expected,
                                       const json::Result<uint64_t>& consumed, Check check,
                                       ChecksumOfRecords&& checksum) {
  if (!consumed) [[unlikely]] {
    return fail(label, describe(consumed.error()));
  }
  Outcome outcome{*consumed, 0};
  if (check == Check::verify) {
    outcome.checksum = checksum();
    if (outcome.checksum != expected) [[unlikely]] {
      return fail(label, checksum_mismatch(outcome.checksum, expected, config.count));
    }
  }
  return outcome;
}

// The consumption fold of a round of N requests whose N responses are all in (the peers with N in
// flight): `fold_of(i)` parses connection i's body into that connection's own models and returns a
// Result<uint64_t>, its fold or an error that names the connection; the folds are folded in connection
// order (fold_connection). The first error is returned as is, the connections after it left unparsed.
template <class FoldOf>
[[nodiscard]] Result<uint64_t> fold_round(std::size_t count, FoldOf&& fold_of) {
  uint64_t round = 0;
  for (std::size_t i = 0; i < count; ++i) {
    auto folded = fold_of(i);
    if (!folded) [[unlikely]] {
      return std::unexpected(std::move(folded.error()));
    }
    round = fold_connection(round, *folded);
  }
  return round;
}

// The Outcome of such a round, `consumed` being fold_round()'s: with Check::verify, the full checksum of
// each connection's records (`checksum_of(i)`) must equal `expected`, else "label: connection i of N:
// checksum ... differs ..." for the first that does not; the Outcome's checksum is then `expected`.
template <class ChecksumOf>
[[nodiscard]] Result<Outcome> conclude_round(std::string_view label, const CaseConfig& config, uint64_t expected,
                                             uint64_t consumed, Check check, std::size_t count,
                                             ChecksumOf&& checksum_of) {
  if (check != Check::verify) return Outcome{consumed, 0};
  for (std::size_t i = 0; i < count; ++i) {
    if (const uint64_t checksum = checksum_of(i); checksum != expected) [[unlikely]] {
      return fail_on_connection(label, i, count, checksum_mismatch(checksum, expected, config.count));
    }
  }
  return Outcome{consumed, expected};
}

// TIME_WAIT sockets with `port` at either end (port 0: any port, since no socket has it), in the text of
// /proc/net/tcp or /proc/net/tcp6
// (header line, then one socket per line: "sl local_address rem_address st ..." with hex addresses,
// hex ports and the state in hex, 06 = TIME_WAIT). Lines that do not parse are skipped.
[[nodiscard]] std::size_t count_time_wait(std::string_view proc_net_tcp, uint16_t port) noexcept;
// The same over this network namespace's /proc/net/tcp and /proc/net/tcp6 (a missing file counts 0).
[[nodiscard]] std::size_t count_time_wait(uint16_t port);

// The calling thread's CPU time in user space and in the kernel and its minor page faults, since it
// started (getrusage(RUSAGE_THREAD)), into `counters`' worker_* fields: what a thread of a strategy's
// own (a worker, a library's pool thread) reads for itself, so bench can add it to the op's. Unchanged
// when getrusage fails (it does not for the calling thread).
void take_thread_usage(IoCounters& counters) noexcept;

// The echo rows (bench echo, joncloud's net-http-perf): one 17-byte JSON object POSTed to /echo, which
// answers it back with chunked transfer coding, as the seed's ASP.NET Core reflector does. The size of a
// case does not apply: every op posts this one object.
inline constexpr std::string_view kEchoBody = R"({"lorem":"ipsum"})";
inline constexpr std::string_view kEchoTarget = "/echo?chunked=1";
// The checksum of an echo answer: FNV-1a (64-bit) over its bytes, then its length. A verified run's
// must equal echo_checksum(kEchoBody).
[[nodiscard]] uint64_t echo_checksum(std::string_view answer) noexcept;

}  // namespace ringlab::strategies::detail
