#pragma once
// RecipeStrategy: the one client strategy that runs every recipe of ringlab's own stack (recipe.hpp).
// The sink and the models are template parameters, so that a row's measured path holds only the code of
// its own sink and models (no run-time choice among them); the client's fields become ClientOptions and
// the request, as ClientStrategy's hooks say.
//
// What each part does in a request:
//   sink string, exact_string, growing_buffer: the body is made anew at every request, in before_request()
//     (a fresh std::string or padded buffer, grown from nothing as the body arrives); a std::string is
//     copied once into a simdjson padded string to be parsed (it has no padding), a padded buffer is
//     parsed in place.
//   sink presized_buffer: one padded buffer kept across requests (PresizedSink: received in place, grown
//     only for a body larger than any before), parsed in place.
//   sink pooled_string: the body lands as with presized_buffer; parse() then copies it into a std::string
//     made anew, reserved once to the body's size and simdjson's padding, and parses that string in place.
//   sink fixed_buffers: the same, in a buffer registered with the ring at setup and sized then from one
//     real body (rounded up to whole pages): a later body that does not fit is Errc::body_too_large,
//     never a silent reallocation out of registered memory.
//   models fresh_owning: freed when the next request starts, built anew from the body.
//   models reused_owning, views, three_fields: reserved at setup for the case's record count, then
//     overwritten in place at every request.
//   models answer_only: nothing parsed; the echo's answer size is consumed and its checksum compared.
//
// Errors and threads: as ClientStrategy. A feature the row needs and the kernel lacks (provided-buffer
// rings, multishot recv, SEND_ZC, registered buffers) is a skip_reason(), and an error of setup() when
// asked to run anyway.
//
// Lifetime: the strategy keeps a reference to its row, which is constant data of the program.
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <variant>

#include "client_strategy.hpp"
#include "common.hpp"
#include "recipe.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/body_sink.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/json/checksum.hpp"
#include "ringlab/json/deserialize.hpp"
#include "ringlab/net/fixed_buffers.hpp"

namespace ringlab::strategies::detail {

// Why the kernel cannot run `recipe` (a feature its client or sink needs); nullopt when it can.
[[nodiscard]] std::optional<std::string> missing_feature(const Recipe& recipe, const net::RingFeatures& features);

// exact_string's sink: appends every piece to `out`, reserved at begin() to the head's Content-Length
// when there is one (one allocation, never regrown); without one (chunked) the string grows by its own
// policy, as string_copy's.
class ExactStringSink final : public http::BodySink {
 public:
  explicit ExactStringSink(std::string& out) noexcept : out_(&out) {}
  http::Status begin(const http::ResponseHead& head) override {
    out_->clear();
    if (head.content_length) out_->reserve(static_cast<std::size_t>(*head.content_length));
    return {};
  }
  http::Status on_body(std::string_view bytes) override {
    if (out_->size() + bytes.size() > out_->capacity()) count_copied(out_->size());  // a growth moves them
    out_->append(bytes);
    count_copied(bytes.size());
    return {};
  }
  http::Status end() override { return {}; }

 private:
  std::string* out_;
};

// fixed_buffers: hands out one registered buffer (with its padding), once: the PaddedBuffer built on it
// then lives in registered memory. It never reallocates (PresizedSink with a fixed index refuses to), so a
// second allocation is a bug and fails loudly.
class RegisteredMemory final : public std::pmr::memory_resource {
 public:
  explicit RegisteredMemory(std::span<char> buffer) noexcept : buffer_(buffer) {}

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    const auto address = reinterpret_cast<std::uintptr_t>(buffer_.data());
    if (given_ || bytes > buffer_.size() + base::kPadding || address % alignment != 0) throw std::bad_alloc();
    given_ = true;
    return buffer_.data();
  }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  std::span<char> buffer_;
  bool given_ = false;
};

// Where the body lands, one specialization per Sink: the body, the sink over it, and whether the body is
// made anew at every request.
template <class BodyType, class SinkType, bool kFresh>
struct BodyAndSink {
  static constexpr bool kFreshBody = kFresh;
  BodyType body;
  SinkType sink{body};
};
template <Sink kSink>
struct Landing;
template <>
struct Landing<Sink::string> : BodyAndSink<std::string, http::StringSink, true> {};
template <>
struct Landing<Sink::exact_string> : BodyAndSink<std::string, ExactStringSink, true> {};
template <>
struct Landing<Sink::growing_buffer> : BodyAndSink<base::PaddedBuffer, http::GrowingSink, true> {};
template <>
struct Landing<Sink::presized_buffer> : BodyAndSink<base::PaddedBuffer, http::PresizedSink, false> {};
template <>
struct Landing<Sink::pooled_string> : BodyAndSink<base::PaddedBuffer, http::PresizedSink, false> {
  std::string text;  // the body as a string, made anew at every parse (before_request() frees the last)
};
// One registered buffer of a net::FixedBuffers that the strategy owns (a ring has one registration at a
// time, so the N slots of the many-in-flight form land in N buffers of one registration). Made by
// land_in() once the buffers are registered; reset() takes it apart in the reverse order, and must come
// before the buffers are unregistered.
template <>
struct Landing<Sink::fixed_buffers> {
  static constexpr bool kFreshBody = false;
  // Lands in buffer `index` of `buffers` (which must outlive this landing): its fixed-buffer index is
  // `index`, so the client receives into it by READ_FIXED.
  void land_in(net::FixedBuffers& buffers, unsigned index) {
    reset();
    registered_bytes = buffers.buffer_size();
    memory.emplace(buffers.buffer(index));
    body.emplace(buffers.buffer_size(), &*memory);
    sink.emplace(*body, static_cast<int>(index));
  }
  void reset() noexcept {
    sink.reset();
    body.reset();
    memory.reset();
    registered_bytes = 0;
  }
  std::size_t registered_bytes = 0;  // the registered buffer's usable bytes (HeldMemory's body bytes)
  std::optional<RegisteredMemory> memory;
  std::optional<base::PaddedBuffer> body;
  std::optional<http::PresizedSink> sink;
};

// fixed_buffers: the size of each registered buffer for a body of `body_bytes` (one real body, fetched
// at setup), rounded up to whole pages. The buffer never grows: a later, larger body is
// Errc::body_too_large (PresizedSink with a fixed index refuses it), never a silent reallocation out of
// registered memory nor a second registration in the middle of a measurement.
[[nodiscard]] constexpr std::size_t fixed_buffer_bytes(std::size_t body_bytes) noexcept {
  constexpr std::size_t kPage = 4096;
  return (std::max<std::size_t>(body_bytes, 1) + kPage - 1) / kPage * kPage;
}

// What the body is parsed into, one type per Models.
template <Models kModels>
using ModelsOf = std::conditional_t<
    kModels == Models::fresh_owning, std::optional<OwningModels>,
    std::conditional_t<kModels == Models::reused_owning, OwningModels,
                       std::conditional_t<kModels == Models::views, ViewModels,
                                          std::conditional_t<kModels == Models::three_fields,
                                                             std::pmr::vector<json::GithubStars>, std::monostate>>>>;

inline constexpr std::string_view kThreeFieldsWeatherSkip =
    "three_fields reads jos's github records only (and repos, which share the three keys): weather records have "
    "no stars, name or url";
inline constexpr std::string_view kThreeFieldsProfilesSkip =
    "three_fields reads github's stargazers_count: on /profiles every strategy already reads jos's 3-field DTO "
    "{name, url, stars}";
// Why three_fields has no case for `payload`; empty when it has one.
constexpr std::string_view three_fields_skip(Payload payload) noexcept {
  if (payload == Payload::weather) return kThreeFieldsWeatherSkip;
  if (payload == Payload::profiles) return kThreeFieldsProfilesSkip;
  return {};
}

// One response's place: where its body lands and what it is parsed into, and what a row does with them
// at each request. RecipeStrategy has one; the many-in-flight strategy (inflight_recipe.hpp) one per
// connection, so that both run a row's sink and models through the same code.
template <Sink kSink, Models kModels>
struct BodySlot {
  using Body = decltype(Landing<kSink>::body);

  // At the start of every request: a body made anew (fresh sinks) and fresh models, as the row says.
  void before_request() {
    if constexpr (Landing<kSink>::kFreshBody && std::is_same_v<Body, std::string>) {
      // Swap, not assignment: libstdc++'s move assignment from an empty, small-string temporary copies
      // its characters and keeps the old buffer, so the string would never grow again.
      std::string().swap(landing.body);
    } else if constexpr (Landing<kSink>::kFreshBody) {
      landing.body = Body();
    }
    if constexpr (kSink == Sink::pooled_string) std::string().swap(landing.text);
    if constexpr (kModels == Models::fresh_owning) models.reset();
  }
  // Room for `records` records, so that a request never grows the models (reused models only).
  void reserve(Payload payload, std::size_t records) {
    if constexpr (kModels == Models::three_fields) {
      models.reserve(records);
    } else if constexpr (kModels == Models::reused_owning || kModels == Models::views) {
      models.reserve(payload, records);
    }
  }
  http::BodySink& sink() {
    if constexpr (kSink == Sink::fixed_buffers) {
      return *landing.sink;
    } else {
      return landing.sink;
    }
  }
  [[nodiscard]] const auto& body() const noexcept {
    if constexpr (kSink == Sink::fixed_buffers) {
      return *landing.body;
    } else {
      return landing.body;
    }
  }
  // Parses the body into the models; the consumption fold of the records (json/consume.hpp).
  json::Result<uint64_t> parse(json::Parser& parser, Payload payload) {
    if constexpr (kModels == Models::answer_only) {
      return body().size();
    } else if constexpr (kModels == Models::three_fields) {
      if (auto status = json::parse_array(parser, json::padded_view(body()), models); !status) {
        return std::unexpected(std::move(status.error()));
      }
      return consume_all(models);
    } else if constexpr (kSink == Sink::pooled_string) {
      static_assert(kModels == Models::fresh_owning, "pooled_string: GetStringAsync's string is deserialized anew");
      // One allocation of exactly the body's size, as .NET's string; the padding simdjson may read past the
      // end is part of it, so the string is parsed where it is (no padded copy, unlike string_copy's).
      std::string& text = landing.text;
      text.reserve(body().size() + simdjson::SIMDJSON_PADDING);
      text.assign(body().view());
      parse_copied += body().size();
      return models.emplace().parse(payload, parser,
                                    simdjson::padded_string_view(text.data(), text.size(), text.capacity()));
    } else if constexpr (kModels == Models::fresh_owning && std::is_same_v<Body, std::string>) {
      const simdjson::padded_string padded(body());
      parse_copied += body().size();
      return models.emplace().parse(payload, parser, padded);
    } else if constexpr (kModels == Models::fresh_owning) {
      return models.emplace().parse(payload, parser, json::padded_view(body()));
    } else {
      return models.parse(payload, parser, json::padded_view(body()));
    }
  }
  // The full checksum of the records the last parse() produced (verified requests only).
  uint64_t checksum(Payload payload) {
    if constexpr (kModels == Models::answer_only) {
      return echo_checksum(body());
    } else if constexpr (kModels == Models::three_fields) {
      return json::checksum(std::span<const json::GithubStars>(models));
    } else if constexpr (kModels == Models::fresh_owning) {
      return models->checksum(payload);
    } else {
      return models.checksum(payload);
    }
  }

  // What the slot keeps now (HeldMemory): the body's capacity (a string's heap part, a padded buffer with
  // its padding, the registered buffer) and the models' record vectors. A fresh body or fresh models are
  // kept until the next request starts.
  [[nodiscard]] std::size_t held_body_bytes() const noexcept {
    if constexpr (std::is_same_v<Body, std::string>) {
      return landing.body.capacity() > std::string().capacity() ? landing.body.capacity() + 1 : 0;
    } else if constexpr (kSink == Sink::fixed_buffers) {
      return landing.registered_bytes;
    } else {
      return held_bytes(landing.body);
    }
  }
  [[nodiscard]] std::size_t held_model_bytes() const noexcept {
    if constexpr (kModels == Models::fresh_owning) {
      return models ? models->capacity_bytes() : 0;
    } else if constexpr (kModels == Models::reused_owning || kModels == Models::views) {
      return models.capacity_bytes();
    } else if constexpr (kModels == Models::three_fields) {
      return models.capacity() * sizeof(json::GithubStars);
    } else {
      return 0;
    }
  }

  Landing<kSink> landing;
  ModelsOf<kModels> models;  // viewing models point into the body: valid until the next request
  // Body bytes parse() copied before parsing (a std::string body into a padded string; pooled_string's
  // body into its string), cumulative: the strategy adds the difference to its copies.
  uint64_t parse_copied = 0;
};

template <Sink kSink, Models kModels>
class RecipeStrategy final : public ClientStrategy {
 public:
  explicit RecipeStrategy(const Recipe& recipe) : ClientStrategy(recipe.name), recipe_(&recipe) {}
  ~RecipeStrategy() override { release(); }

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override {
    return missing_feature(*recipe_, features);
  }
  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    if constexpr (kModels == Models::three_fields) {
      if (const auto reason = three_fields_skip(config.payload); !reason.empty()) return std::string(reason);
    }
    if constexpr (kSink == Sink::fixed_buffers) {
      return no_fresh_client(config, "fixed_buffers sizes its registered buffer from one real body fetched at setup");
    }
    (void)config;
    return std::nullopt;
  }
  [[nodiscard]] HeldMemory held_memory() const override {
    const http::ClientOptions options = client_options();
    std::size_t receive = options.receive_buffer_bytes;
    if (http::receives_from_ring(options.receive)) {
      receive += std::size_t{options.provided_buffer_count} * options.receive_buffer_bytes;
    }
    return HeldMemory{.connections = 1,
                      .body_bytes = slot_.held_body_bytes(),
                      .model_bytes = slot_.held_model_bytes(),
                      .receive_bytes = receive};
  }
  [[nodiscard]] std::string notes() const override {
    if constexpr (kModels == Models::three_fields) {
      return "three_fields: checksum covers stargazers_count, name and url only (jos V8 reads 3 of 22 fields)";
    }
    if (counts_time_wait()) {
      const std::size_t now = count_time_wait(config().port);
      return "sockets in TIME_WAIT on port " + std::to_string(config().port) + ": " + std::to_string(now) + " (" +
             std::to_string(time_wait_before_) + " before the case)";
    }
    return {};
  }

 private:
  [[nodiscard]] http::ClientOptions client_options() const override {
    http::ClientOptions options;
    options.connection = recipe_->client.connection;
    options.receive = recipe_->client.receive;
    if (http::receives_from_ring(options.receive)) {
      // The ring's buffers are receive_buffer_bytes each (client.hpp).
      const RingGeometry ring = ring_for(recipe_->client, config().ring);
      options.provided_buffer_count = ring.buffers;
      options.receive_buffer_bytes = ring.buffer_bytes;
    }
    options.receive_with_send = recipe_->client.enters == Enters::one;
    return options;
  }
  [[nodiscard]] std::string target() const override {
    switch (recipe_->method) {
      case Method::post: return "/echo";
      case Method::echo: return std::string(kEchoTarget);
      case Method::get:
      case Method::proxy: break;
    }
    return get_target(config(), recipe_->client.query);
  }
  [[nodiscard]] http::Request request() const override {
    switch (recipe_->method) {
      case Method::post:
        return http::Request{
            .method = "POST", .body = request_body_, .content_type = "application/json", .send = recipe_->client.send};
      case Method::echo:
        return http::Request{
            .method = "POST", .body = kEchoBody, .content_type = "application/json", .send = recipe_->client.send};
      case Method::get:
      case Method::proxy: break;
    }
    return {};
  }
  [[nodiscard]] uint64_t expected_of(const CaseConfig& config) const override {
    if (recipe_->method == Method::echo) return echo_checksum(kEchoBody);
    if constexpr (kModels == Models::three_fields) {
      return config.payload == Payload::repos ? json::checksum_repos_three_fields(config.count)
                                              : json::checksum_github_three_fields(config.count);
    }
    return expected_checksum(config);
  }

  Status prepare() override {
    if (auto reason = missing_feature(*recipe_, ring().features())) return fail(label(), *reason);
    if (counts_time_wait()) time_wait_before_ = count_time_wait(config().port);
    if (recipe_->method == Method::post) {
      request_body_.clear();
      append_payload_json(request_body_, config());
    }
    if constexpr (kSink == Sink::fixed_buffers) {
      if (auto registered = register_body(); !registered) return registered;
    }
    if constexpr (kModels == Models::three_fields) {
      // setup() without skip_case()
      if (const auto reason = three_fields_skip(config().payload); !reason.empty()) return fail(label(), reason);
    }
    slot_.reserve(config().payload, config().count);
    return {};
  }

  // fixed_buffers: one registered buffer the size of one real body (fixed_buffer_bytes).
  Status register_body()
    requires(kSink == Sink::fixed_buffers)
  {
    auto body_bytes = probe_body_bytes();
    if (!body_bytes) return std::unexpected(body_bytes.error());
    auto buffers = net::FixedBuffers::create(ring(), 1, fixed_buffer_bytes(*body_bytes));
    if (!buffers) return fail(label(), buffers.error().message());
    registered_ = std::move(*buffers);
    slot_.landing.land_in(*registered_, 0);
    return {};
  }

  Status before_request() override {
    slot_.before_request();
    return {};
  }
  http::BodySink& sink() override { return slot_.sink(); }
  json::Result<uint64_t> deserialize() override {
    const uint64_t copied = slot_.parse_copied;
    auto consumed = slot_.parse(parser(), config().payload);
    count_copied(slot_.parse_copied - copied);
    return consumed;
  }
  uint64_t checksum() override { return slot_.checksum(config().payload); }

  void release() override {
    if constexpr (kSink == Sink::fixed_buffers) {
      slot_.landing.reset();
      registered_.reset();  // unregisters: before the ring goes
    }
  }

  // Reading /proc/net/tcp is no part of a request: not inside the op of a fresh client, whose setup() is
  // timed (bench reports that case's connections per op instead).
  [[nodiscard]] bool counts_time_wait() const noexcept {
    return recipe_->counts_time_wait && config().client == Client::pooled;
  }

  const Recipe* recipe_;
  std::string request_body_;  // POST rows: serialized once at setup, sent unchanged by every run()
  std::size_t time_wait_before_ = 0;
  std::unique_ptr<net::FixedBuffers> registered_;  // fixed_buffers: the one registered buffer
  BodySlot<kSink, kModels> slot_;
};

// The strategy of a row without code of its own.
template <Sink kSink, Models kModels>
[[nodiscard]] std::unique_ptr<Strategy> make_recipe_strategy(const Recipe& recipe) {
  return std::make_unique<RecipeStrategy<kSink, kModels>>(recipe);
}

}  // namespace ringlab::strategies::detail
