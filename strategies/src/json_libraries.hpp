#pragma once
// The JSON libraries measured as deserialization strategies next to simdjson: nlohmann (a DOM, then mapped
// onto the records) and rapidjson (SAX events written straight into the records). Both fill the same owning
// records as json/'s parser, in place (records and their strings reused, the rest erased), so that their
// checksum is the generator's and the table compares the libraries, not the models:
//   - unescaped strings; homepage, language and license (and a github record's description) may be null
//     (an empty optional);
//   - keys in any order, unknown keys skipped (their values too, however nested), a key given twice counts
//     with its last value, a missing field is an error;
//   - integers must fit their field (temperatureC in int32), a number with a fraction or exponent is not an
//     integer; score takes any number.
// Differences with json/: keys are compared after unescaping (both libraries decode a key before
// handing it over), so "d\u0061te" is the key date here, an unknown key there; and rapidjson under its
// fast flags (RapidjsonFlags::fast, every rapidjson row but rapidjson_strict) neither validates UTF-8
// (bytes that are not UTF-8 inside a string are taken as they are) nor reads numbers at full precision
// (exact for every number the server writes: rapidjson_handler.hpp).
//
// Errors are json::Error values in json/'s words ("record 2 field owner.login: INCORRECT_TYPE (expected a
// string, got a number) at byte 1234"); nothing throws out of these functions.
//
// Internal to strategies/ (tests include it to drive the mappings without a server).
#include <cstddef>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client_strategy.hpp"
#include "common.hpp"
#include "recipe.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/json/error.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::strategies::detail {

// The field an error is about: "date", "owner.login", "topics[2]"; empty for the record or the document.
struct FieldPath {
  std::string_view parent;
  std::string_view name;
  std::size_t index = json::kNoRecord;  // kNoRecord: not an array element

  FieldPath() = default;
  FieldPath(std::string_view field) noexcept : name(field) {}  // NOLINT: implicit on purpose
  FieldPath(const char* field) noexcept : name(field) {}       // NOLINT: implicit on purpose
  FieldPath(std::string_view parent_field, std::string_view field) noexcept : parent(parent_field), name(field) {}
  FieldPath(std::string_view array, std::size_t element) noexcept : name(array), index(element) {}

  [[nodiscard]] std::string text() const;
};

// "record 3 field owner.login: WHAT at byte 1234"; "document: WHAT" when record is kNoRecord; no " at byte"
// when offset is kNoOffset.
[[nodiscard]] json::Error library_error(std::size_t record, const FieldPath& field, std::string_view what,
                                        std::size_t offset = json::kNoOffset);

// nlohmann.cpp: nlohmann::json::parse of the whole body into a DOM, then mapped onto `out`.
[[nodiscard]] json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::WeatherForecast>& out);
[[nodiscard]] json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::Repository>& out);
[[nodiscard]] json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::GithubRepository>& out);
[[nodiscard]] json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::ProfileStars>& out);

// rapidjson.cpp: rapidjson::Reader over the body in situ, its SAX events written into `out`. In situ: the
// body's bytes are overwritten (strings unescaped where they lie) and a NUL is written after them, into the
// buffer's padding; parse a body once. A Reader per call (the strategy keeps one across requests instead).
// `flags`: the Reader's (rapidjson_handler.hpp): fast, the library's fast configuration (the rapidjson
// rows'), or strict, with UTF-8 validation and full-precision numbers (rapidjson_strict's).
enum class RapidjsonFlags { fast, strict };
[[nodiscard]] json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::WeatherForecast>& out,
                                           RapidjsonFlags flags = RapidjsonFlags::fast);
[[nodiscard]] json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::Repository>& out,
                                           RapidjsonFlags flags = RapidjsonFlags::fast);
[[nodiscard]] json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::GithubRepository>& out,
                                           RapidjsonFlags flags = RapidjsonFlags::fast);
[[nodiscard]] json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::ProfileStars>& out,
                                           RapidjsonFlags flags = RapidjsonFlags::fast);

// token_loop.cpp: jos's Version 8 (ProjectDeserializer, a hand-written loop over JsonTextReader's tokens):
// rapidjson::Reader's tokens over the body in situ, handled by a hand-written handler that keeps the last
// property name and switches on it, as his loop does, instead of rapidjson_parse's table-driven state
// machine. A record is an object of the top-level array; name, url and stars are taken, every other key's
// value skipped (the tags array, the floats). Stricter than his loop, as every ringlab reader is: a record
// without one of the three keys, or one of them of another type, is an error. In situ as rapidjson_parse.
[[nodiscard]] json::Status token_loop_parse(base::PaddedBuffer& body, std::pmr::vector<json::ProfileStars>& out);

// Why `Library` (as LibraryStrategy below takes it) skips cases of `payload`: its static skip(payload), or
// empty for a library that reads every payload or for one it reads.
template <class Library>
[[nodiscard]] constexpr std::string_view library_skip(Payload payload) noexcept {
  if constexpr (requires { Library::skip(payload); }) {
    return Library::skip(payload);
  } else {
    (void)payload;
    return {};
  }
}

// The body received as presized receives it (one padded buffer of Content-Length kept across requests,
// the kernel writing into it), parsed by a library into owning models: reused in place, as presized's, or,
// for a row whose models are Models::fresh_owning, made anew at every request, as presized_fresh's (and
// as .NET's deserializers make theirs). `Library` says only which library parses:
// `library.parse(body, records)` for a std::pmr::vector<Record>& of each record type, returning a
// json::Status; it lives as long as the strategy (what it keeps across bodies, rapidjson's Reader, is
// kept across requests). A library that reads some payloads only says why it skips the others through a
// static `skip(Payload)` returning the reason, empty for none.
template <class Library>
class LibraryStrategy final : public ClientStrategy {
 public:
  explicit LibraryStrategy(const Recipe& recipe)
      : ClientStrategy(recipe.name), fresh_models_(recipe.models == Models::fresh_owning) {}

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    if (const std::string_view reason = library_skip<Library>(config.payload); !reason.empty()) {
      return std::string(reason);
    }
    return std::nullopt;
  }

 private:
  Status prepare() override {
    if (const std::string_view reason = library_skip<Library>(config().payload); !reason.empty()) {
      return fail(label(), reason);  // setup() without skip_case()
    }
    models_.emplace();
    if (!fresh_models_) models_->reserve(config().payload, config().count);
    return {};
  }
  Status before_request() override {
    if (fresh_models_) models_.emplace();  // the last request's records freed, an empty vector to fill
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    return models_->fill(config().payload, [this](auto& records) { return library_.parse(body_, records); });
  }
  uint64_t checksum() override { return models_->checksum(config().payload); }

  bool fresh_models_;
  base::PaddedBuffer body_;
  http::PresizedSink sink_{body_};
  std::optional<OwningModels> models_;
  Library library_;
};

// floor_parse for a JSON library's rows (floor_parse_rapidjson, floor_parse_nlohmann): the body fetched once
// at setup into a padded buffer that stays warm, parsed at every op by `Library` exactly as its rows parse
// theirs (LibraryStrategy's `library.parse`), into owning models reused in place. A library that parses in
// situ (`Library::kInSitu`: rapidjson) overwrites what it parses, so each op first copies the fetched body
// into the buffer it parses: one memcpy of the body inside the clock, which the rows themselves do not pay
// (they parse the bytes the kernel wrote). Single-threaded, as every strategy; both buffers are the
// strategy's, kept across ops.
template <class Library>
class LibraryFloor final : public ClientStrategy {
 public:
  explicit LibraryFloor(const Recipe& recipe) : ClientStrategy(recipe.name) {}

  [[nodiscard]] std::optional<std::string> skip_case(const CaseConfig& config) const override {
    if (const std::string_view reason = library_skip<Library>(config.payload); !reason.empty()) {
      return std::string(reason);
    }
    return no_fresh_client(config, "a library's parse floor fetches its body once at setup and parses it warm");
  }

 private:
  Status prepare() override {
    models_.reserve(config().payload, config().count);
    auto fetched = fetch_once(sink_);
    if (!fetched) return std::unexpected(fetched.error());
    if constexpr (Library::kInSitu) body_.reserve(fetched_.size());
    return {};
  }
  [[nodiscard]] unsigned requests_per_run() const override { return 0; }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override {
    base::PaddedBuffer* parsed = &fetched_;
    if constexpr (Library::kInSitu) {
      body_.clear();
      body_.append(fetched_.view());  // capacity reserved in prepare(): a copy, no allocation
      count_copied(fetched_.size());
      parsed = &body_;
    }
    return models_.fill(config().payload, [&](auto& records) { return library_.parse(*parsed, records); });
  }
  uint64_t checksum() override { return models_.checksum(config().payload); }

  base::PaddedBuffer fetched_;  // filled once by prepare()
  http::PresizedSink sink_{fetched_};
  base::PaddedBuffer body_;  // in situ libraries: the copy each op parses (and overwrites)
  OwningModels models_;
  Library library_;
};

// The rows of the two libraries (registry.cpp): nlohmann.cpp, rapidjson.cpp (make_rapidjson under the
// fast flags, make_rapidjson_strict under the strict ones); and jos's Version 8's hand-written loop,
// token_loop.cpp (/profiles records only).
std::unique_ptr<Strategy> make_nlohmann(const Recipe& recipe);
std::unique_ptr<Strategy> make_rapidjson(const Recipe& recipe);
std::unique_ptr<Strategy> make_rapidjson_strict(const Recipe& recipe);
std::unique_ptr<Strategy> make_token_loop(const Recipe& recipe);
// Their parse floors (LibraryFloor), in the same files.
std::unique_ptr<Strategy> make_floor_parse_rapidjson(const Recipe& recipe);
std::unique_ptr<Strategy> make_floor_parse_nlohmann(const Recipe& recipe);

}  // namespace ringlab::strategies::detail
