// rapidjson (SAX; a JSON library swapped in over the same body, as jos's Version 9 and 10 swap
// System.Text.Json for Utf8Json, with a reader-driven deserializer as his Version 8's JsonTextReader): the body
// is received as presized's (in place, into a padded buffer reused across requests), then rapidjson::Reader
// parses it in situ (strings unescaped where they lie in the body) and its SAX events are written straight
// into owning models reused in place. No DOM and no copy of the body: per request nothing is allocated once
// the records have the body's shape (the Reader, whose stack holds each number's digits, is kept too).
// Flags: full-precision numbers (score must equal what simdjson reads) and UTF-8 validation (simdjson
// validates too), so both reject and read the same bodies.
#if defined(__SSE4_2__)
#define RAPIDJSON_SSE42  // the library's own SIMD scans, as the build gives simdjson its kernel
#elif defined(__SSE2__)
#define RAPIDJSON_SSE2
#endif
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "json_libraries.hpp"
#include "ringlab/json/fields.hpp"

namespace ringlab::strategies::detail {
namespace {

using Allocator = std::pmr::polymorphic_allocator<>;

constexpr unsigned kFlags =
    rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag;

// Nesting refused beyond this (simdjson's default limit): the Reader recurses once per level, so a body of
// a million '[' must end in an error, not in a stack overflow.
constexpr std::size_t kMaxDepth = 1024;

// The keys of each record (json/fields.hpp). A field's position in its table is its bit in the record's
// `seen` mask.
using WeatherField = json::fields::Weather;
using OwnerField = json::fields::Owner;
using LicenseField = json::fields::License;
using RepositoryField = json::fields::Repository;
constexpr const auto& kWeatherKeys = json::fields::kWeather;
constexpr const auto& kOwnerKeys = json::fields::kOwner;
constexpr const auto& kLicenseKeys = json::fields::kLicense;
constexpr const auto& kRepositoryKeys = json::fields::kRepository;
constexpr const auto& kGithubKeys = json::fields::kGithub;
using json::fields::all_of;
using json::fields::first_missing;

// Index of `key` in `keys`, or -1. Bodies list keys in the usual order, so the key after the previous match
// (`hint`) is tried first.
template <std::size_t N>
int match(std::string_view key, const std::array<std::string_view, N>& keys, std::size_t& hint) noexcept {
  if (hint < N && keys[hint] == key) return static_cast<int>(hint++);
  for (std::size_t i = 0; i < N; ++i) {
    if (keys[i] == key) {
      hint = i + 1;
      return static_cast<int>(i);
    }
  }
  return -1;
}

// A scalar as the Reader delivers it. Integers above INT64_MAX fit no field: kept apart as `huge`.
struct Scalar {
  // object and array: only to report a structure where a field wants a scalar (every assign() refuses them).
  enum class Kind { null, boolean, integer, huge, real, string, object, array } kind = Kind::null;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t huge = 0;
  double real = 0;
  std::string_view text{};

  [[nodiscard]] std::string_view name() const noexcept {
    switch (kind) {
      case Kind::null: return "null";
      case Kind::boolean: return "a boolean";
      case Kind::integer:
      case Kind::huge: return "an integer";
      case Kind::real: return "a number with a fraction or exponent";
      case Kind::string: return "a string";
      case Kind::object: return "an object";
      case Kind::array: return "an array";
    }
    return "?";
  }
};

enum class Problem { none, wrong_type, out_of_range };

Problem assign(const Scalar& s, int64_t& out) noexcept {
  if (s.kind == Scalar::Kind::huge) return Problem::out_of_range;
  if (s.kind != Scalar::Kind::integer) return Problem::wrong_type;
  out = s.integer;
  return Problem::none;
}
Problem assign(const Scalar& s, int32_t& out) noexcept {
  int64_t wide = 0;
  if (const Problem p = assign(s, wide); p != Problem::none) return p;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return Problem::out_of_range;
  }
  out = static_cast<int32_t>(wide);
  return Problem::none;
}
Problem assign(const Scalar& s, double& out) noexcept {
  switch (s.kind) {
    case Scalar::Kind::real: out = s.real; return Problem::none;
    case Scalar::Kind::integer: out = static_cast<double>(s.integer); return Problem::none;
    case Scalar::Kind::huge: out = static_cast<double>(s.huge); return Problem::none;
    default: return Problem::wrong_type;
  }
}
Problem assign(const Scalar& s, bool& out) noexcept {
  if (s.kind != Scalar::Kind::boolean) return Problem::wrong_type;
  out = s.boolean;
  return Problem::none;
}
// Assigned, not replaced: the record's string keeps its capacity.
Problem assign(const Scalar& s, std::pmr::string& out) {
  if (s.kind != Scalar::Kind::string) return Problem::wrong_type;
  out.assign(s.text);
  return Problem::none;
}

template <class T>
constexpr std::string_view expected_kind() noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    return "a boolean";
  } else if constexpr (std::is_same_v<T, double>) {
    return "a number";
  } else if constexpr (std::is_integral_v<T>) {
    return "an integer";
  } else {
    return "a string";
  }
}

// The SAX handler: a state machine over one array body of `Record`s, writing each event into the record
// it belongs to. Returning false stops the Reader; the error is then in `error()`.
template <class Record>
class Handler {
  static constexpr bool kRepos = std::is_same_v<Record, json::Repository>;
  static constexpr bool kGithub = std::is_same_v<Record, json::GithubRepository>;
  // The keys of a record (its top level).
  static constexpr const auto& keys() noexcept {
    if constexpr (kRepos) {
      return kRepositoryKeys;
    } else if constexpr (kGithub) {
      return kGithubKeys;
    } else {
      return kWeatherKeys;
    }
  }

 public:
  Handler(std::pmr::vector<Record>& out, rapidjson::InsituStringStream& stream) noexcept
      : out_(&out), stream_(&stream) {}

  [[nodiscard]] json::Error& error() noexcept { return error_; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  // The record being read, for errors; kNoRecord outside the array.
  [[nodiscard]] std::size_t record() const noexcept {
    return in_ == In::document || in_ == In::done ? json::kNoRecord : n_;
  }

  // --- rapidjson's Handler concept -------------------------------------------------------------------
  bool Null() { return scalar({.kind = Scalar::Kind::null}); }
  bool Bool(bool b) { return scalar({.kind = Scalar::Kind::boolean, .boolean = b}); }
  bool Int(int i) { return scalar({.kind = Scalar::Kind::integer, .integer = i}); }
  bool Uint(unsigned u) { return scalar({.kind = Scalar::Kind::integer, .integer = u}); }
  bool Int64(int64_t i) { return scalar({.kind = Scalar::Kind::integer, .integer = i}); }
  bool Uint64(uint64_t u) {
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return scalar({.kind = Scalar::Kind::huge, .huge = u});
    }
    return scalar({.kind = Scalar::Kind::integer, .integer = static_cast<int64_t>(u)});
  }
  bool Double(double d) { return scalar({.kind = Scalar::Kind::real, .real = d}); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return unexpected_event("a raw number"); }  // flag unset
  bool String(const char* text, rapidjson::SizeType length, bool) {
    return scalar({.kind = Scalar::Kind::string, .text = std::string_view(text, length)});
  }

  bool StartObject() {
    if (++depth_ > kMaxDepth) return too_deep();
    if (skipping()) return skip();
    if (in_ == In::array) return begin_record();
    if constexpr (kRepos) {
      if (in_ == In::record && field_ == static_cast<int>(RepositoryField::owner)) return enter(In::owner);
      if (in_ == In::record && field_ == static_cast<int>(RepositoryField::license)) {
        if (!record_->license) record_->license.emplace(record_->get_allocator());
        return enter(In::license);
      }
    }
    return scalar({.kind = Scalar::Kind::object});  // an error, or the value of an unknown key
  }

  bool Key(const char* text, rapidjson::SizeType length, bool) {
    if (skip_ > 0) return true;
    const std::string_view key(text, length);
    switch (in_) {
      case In::record: field_ = match(key, keys(), hint_); return true;
      case In::owner: field_ = match(key, kOwnerKeys, nested_hint_); return true;
      case In::license: field_ = match(key, kLicenseKeys, nested_hint_); return true;
      default: return unexpected_event("a key");
    }
  }

  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (skip_ > 0) return unskip();
    switch (in_) {
      case In::record: {
        if (seen_ != all_of<keys().size()>()) {
          return fail_at(FieldPath(first_missing(seen_, keys())), "NO_SUCH_FIELD (missing)", record_start_);
        }
        ++n_;
        in_ = In::array;
        return true;
      }
      case In::owner:
        if (nested_seen_ != all_of<kOwnerKeys.size()>()) {
          return fail_at({"owner", first_missing(nested_seen_, kOwnerKeys)}, "NO_SUCH_FIELD (missing)", nested_start_);
        }
        return leave(RepositoryField::owner);
      case In::license:
        if (nested_seen_ != all_of<kLicenseKeys.size()>()) {
          return fail_at({"license", first_missing(nested_seen_, kLicenseKeys)}, "NO_SUCH_FIELD (missing)",
                         nested_start_);
        }
        return leave(RepositoryField::license);
      default: return unexpected_event("the end of an object");
    }
  }

  bool StartArray() {
    if (++depth_ > kMaxDepth) return too_deep();
    if (skipping()) return skip();
    if (in_ == In::document) {
      in_ = In::array;
      return true;
    }
    if constexpr (kRepos) {
      if (in_ == In::record && field_ == static_cast<int>(RepositoryField::topics)) {
        topic_ = 0;
        in_ = In::topics;
        return true;
      }
    }
    return scalar({.kind = Scalar::Kind::array});  // an error, or the value of an unknown key
  }

  bool EndArray(rapidjson::SizeType) {
    --depth_;
    if (skip_ > 0) return unskip();
    if (in_ == In::array) {
      out_->erase(out_->begin() + static_cast<std::ptrdiff_t>(n_), out_->end());
      in_ = In::done;
      return true;
    }
    if constexpr (kRepos) {
      if (in_ == In::topics) {
        // Overwritten in place, so the strings' capacity is reused from one parse to the next.
        record_->topics.erase(record_->topics.begin() + static_cast<std::ptrdiff_t>(topic_), record_->topics.end());
        in_ = In::record;
        seen_ |= uint32_t{1} << static_cast<int>(RepositoryField::topics);
        return true;
      }
    }
    return unexpected_event("the end of an array");
  }

 private:
  enum class In { document, array, record, owner, license, topics, done };

  // A value of an unknown key, or inside one: skipped, however nested (skip_ counts the levels).
  [[nodiscard]] bool skipping() const noexcept {
    return skip_ > 0 || (field_ < 0 && (in_ == In::record || in_ == In::owner || in_ == In::license));
  }
  bool skip() {
    ++skip_;
    return true;
  }
  bool unskip() {
    --skip_;
    return true;
  }

  // A scalar value: into the field its key named, or skipped under an unknown key. Objects and arrays come
  // here only where they do not belong (they fail as a wrong type) or under an unknown key.
  bool scalar(const Scalar& s) {
    if (skip_ > 0) return true;
    switch (in_) {
      case In::document:
        return fail_here({}, "INCORRECT_TYPE (expected an array, got " + std::string(s.name()) + ")");
      case In::array:
        return fail_here({}, "INCORRECT_TYPE (expected an object, got " + std::string(s.name()) + ")");
      case In::record: return field_ < 0 || record_scalar(s);
      case In::owner: return field_ < 0 || owner_scalar(s);
      case In::license: return field_ < 0 || license_scalar(s);
      case In::topics:
        if constexpr (kRepos) {
          auto& topics = record_->topics;
          if (!set(s, topic_field(), topic_ < topics.size() ? topics[topic_] : topics.emplace_back())) return false;
          ++topic_;
          return true;
        }
        break;
      case In::done: break;
    }
    return unexpected_event("a value");
  }

  bool begin_record() {
    record_ = n_ < out_->size() ? &(*out_)[n_] : &out_->emplace_back();
    record_start_ = stream_->Tell() - 1;  // the Reader has just taken the '{'
    seen_ = 0;
    field_ = -1;
    hint_ = 0;
    in_ = In::record;
    return true;
  }

  bool record_scalar(const Scalar& s) {
    bool ok = false;
    if constexpr (kRepos) {
      json::Repository& r = *record_;
      switch (static_cast<RepositoryField>(field_)) {
        case RepositoryField::id: ok = set(s, record_field(), r.id); break;
        case RepositoryField::node_id: ok = set(s, record_field(), r.node_id); break;
        case RepositoryField::name: ok = set(s, record_field(), r.name); break;
        case RepositoryField::full_name: ok = set(s, record_field(), r.full_name); break;
        case RepositoryField::is_private: ok = set(s, record_field(), r.is_private); break;
        case RepositoryField::html_url: ok = set(s, record_field(), r.html_url); break;
        case RepositoryField::description: ok = set(s, record_field(), r.description); break;
        case RepositoryField::fork: ok = set(s, record_field(), r.fork); break;
        case RepositoryField::url: ok = set(s, record_field(), r.url); break;
        case RepositoryField::created_at: ok = set(s, record_field(), r.created_at); break;
        case RepositoryField::updated_at: ok = set(s, record_field(), r.updated_at); break;
        case RepositoryField::pushed_at: ok = set(s, record_field(), r.pushed_at); break;
        case RepositoryField::homepage: ok = set_nullable(s, r.homepage); break;
        case RepositoryField::size: ok = set(s, record_field(), r.size); break;
        case RepositoryField::stargazers_count: ok = set(s, record_field(), r.stargazers_count); break;
        case RepositoryField::watchers_count: ok = set(s, record_field(), r.watchers_count); break;
        case RepositoryField::language: ok = set_nullable(s, r.language); break;
        case RepositoryField::forks_count: ok = set(s, record_field(), r.forks_count); break;
        case RepositoryField::open_issues_count: ok = set(s, record_field(), r.open_issues_count); break;
        case RepositoryField::archived: ok = set(s, record_field(), r.archived); break;
        case RepositoryField::default_branch: ok = set(s, record_field(), r.default_branch); break;
        case RepositoryField::score: ok = set(s, record_field(), r.score); break;
        case RepositoryField::license:
          if (s.kind != Scalar::Kind::null) return wrong_type(record_field(), s.name(), "an object or null");
          r.license.reset();
          ok = true;
          break;
        case RepositoryField::owner: return wrong_type(record_field(), s.name(), "an object");
        case RepositoryField::topics: return wrong_type(record_field(), s.name(), "an array");
      }
    } else if constexpr (kGithub) {
      ok = github_scalar(s);
    } else {
      json::WeatherForecast& w = *record_;
      switch (static_cast<WeatherField>(field_)) {
        case WeatherField::date: ok = set(s, record_field(), w.date); break;
        case WeatherField::temperature_c: ok = set(s, record_field(), w.temperature_c); break;
        case WeatherField::summary: ok = set(s, record_field(), w.summary); break;
        case WeatherField::temperature_f: ok = set(s, record_field(), w.temperature_f); break;
      }
    }
    if (ok) seen_ |= uint32_t{1} << field_;
    return ok;
  }

  // A github record is flat: every field is a scalar, in the order of json::github_members.
  bool github_scalar(const Scalar& s) {
    bool ok = false;
    json::with_member(*record_, json::github_members<json::GithubRepository>(), static_cast<std::size_t>(field_),
                      [&](auto& member) { ok = set_member(s, member); });
    return ok;
  }
  template <class T>
  bool set_member(const Scalar& s, T& out) {
    return set(s, record_field(), out);
  }
  bool set_member(const Scalar& s, std::optional<std::pmr::string>& out) { return set_nullable(s, out); }

  bool owner_scalar(const Scalar& s) {
    bool ok = false;
    if constexpr (kRepos) {
      json::Owner& o = record_->owner;
      switch (static_cast<OwnerField>(field_)) {
        case OwnerField::login: ok = set(s, record_field(), o.login); break;
        case OwnerField::id: ok = set(s, record_field(), o.id); break;
        case OwnerField::node_id: ok = set(s, record_field(), o.node_id); break;
        case OwnerField::avatar_url: ok = set(s, record_field(), o.avatar_url); break;
        case OwnerField::html_url: ok = set(s, record_field(), o.html_url); break;
        case OwnerField::type: ok = set(s, record_field(), o.type); break;
        case OwnerField::site_admin: ok = set(s, record_field(), o.site_admin); break;
      }
    }
    if (ok) nested_seen_ |= uint32_t{1} << field_;
    return ok;
  }

  bool license_scalar(const Scalar& s) {
    bool ok = false;
    if constexpr (kRepos) {
      json::License& l = *record_->license;
      switch (static_cast<LicenseField>(field_)) {
        case LicenseField::key: ok = set(s, record_field(), l.key); break;
        case LicenseField::name: ok = set(s, record_field(), l.name); break;
        case LicenseField::spdx_id: ok = set(s, record_field(), l.spdx_id); break;
      }
    }
    if (ok) nested_seen_ |= uint32_t{1} << field_;
    return ok;
  }

  template <class T>
  bool set(const Scalar& s, const FieldPath& field, T& out) {
    switch (assign(s, out)) {
      case Problem::none: return true;
      case Problem::wrong_type: return wrong_type(field, s.name(), expected_kind<T>());
      case Problem::out_of_range:
        return fail_here(field, "NUMBER_OUT_OF_RANGE (the integer does not fit the field's " +
                                    std::string(std::is_same_v<T, int32_t> ? "int32" : "int64") + ")");
    }
    return false;
  }

  bool set_nullable(const Scalar& s, std::optional<std::pmr::string>& out) {
    if (s.kind == Scalar::Kind::null) {
      out.reset();
      return true;
    }
    if (s.kind != Scalar::Kind::string) return wrong_type(record_field(), s.name(), "a string or null");
    if (!out) out.emplace(record_->get_allocator());
    out->assign(s.text);
    return true;
  }

  // Into a nested object (owner, license) of the current record.
  bool enter(In where) {
    in_ = where;
    nested_start_ = stream_->Tell() - 1;
    nested_seen_ = 0;
    nested_hint_ = 0;
    field_ = -1;
    return true;
  }
  bool leave(RepositoryField field) {
    in_ = In::record;
    seen_ |= uint32_t{1} << static_cast<int>(field);
    field_ = -1;
    return true;
  }

  // The field the next value belongs to, for errors: "temperatureC", "owner.login".
  [[nodiscard]] FieldPath record_field() const noexcept {
    if (field_ < 0) return {};
    const auto k = static_cast<std::size_t>(field_);
    if constexpr (kRepos) {
      if (in_ == In::owner) return {"owner", kOwnerKeys[k]};
      if (in_ == In::license) return {"license", kLicenseKeys[k]};
    }
    return FieldPath(keys()[k]);
  }
  [[nodiscard]] FieldPath topic_field() const noexcept { return {"topics", topic_}; }

  [[gnu::cold]] bool fail_at(const FieldPath& field, std::string_view what, std::size_t offset) {
    error_ = library_error(record(), field, what, offset);
    failed_ = true;
    return false;
  }
  [[gnu::cold]] bool fail_here(const FieldPath& field, std::string_view what) {
    return fail_at(field, what, stream_->Tell());
  }
  [[gnu::cold]] bool wrong_type(const FieldPath& field, std::string_view got, std::string_view expected) {
    return fail_here(field, "INCORRECT_TYPE (expected " + std::string(expected) + ", got " + std::string(got) + ")");
  }
  [[gnu::cold]] bool too_deep() {
    return fail_here({}, "DEPTH_ERROR (nested deeper than " + std::to_string(kMaxDepth) + " levels)");
  }
  // An event the Reader never sends in this state (one root value only, keys only in objects).
  [[gnu::cold]] bool unexpected_event(std::string_view event) {
    return fail_here({}, "TAPE_ERROR (unexpected " + std::string(event) + ")");
  }

  std::pmr::vector<Record>* out_;
  rapidjson::InsituStringStream* stream_;  // where the Reader is, for error offsets
  In in_ = In::document;
  std::size_t depth_ = 0;
  std::size_t skip_ = 0;  // > 0: inside the value of an unknown key, this many levels deep
  int field_ = -1;        // the field the next value goes to; -1: an unknown key's value
  std::size_t n_ = 0;     // records completed
  Record* record_ = nullptr;
  std::size_t record_start_ = 0;
  uint32_t seen_ = 0;
  std::size_t hint_ = 0;
  std::size_t nested_start_ = 0;
  uint32_t nested_seen_ = 0;
  std::size_t nested_hint_ = 0;
  std::size_t topic_ = 0;
  json::Error error_;
  bool failed_ = false;
};

// `reader` is kept across bodies by the strategy: full-precision number parsing copies each number's digits
// onto the Reader's own stack, which keeps its capacity while the Reader lives.
template <class Record>
json::Status parse_body(rapidjson::Reader& reader, base::PaddedBuffer& body, std::pmr::vector<Record>& out) {
  if (body.size() == 0) return std::unexpected(library_error(json::kNoRecord, {}, "EMPTY (the body is empty)"));
  // The Reader reads until a NUL: one goes after the body, into the padding.
  body.data()[body.size()] = '\0';
  rapidjson::InsituStringStream stream(body.data());
  Handler<Record> handler(out, stream);
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, handler);
  if (handler.failed()) return std::unexpected(std::move(handler.error()));
  if (result.IsError()) {
    return std::unexpected(library_error(handler.record(), {},
                                         std::string("rapidjson: ") + rapidjson::GetParseError_En(result.Code()),
                                         result.Offset()));
  }
  // A NUL inside the body ends the Reader's input early; what follows it was never read.
  if (stream.Tell() != body.size()) {
    return std::unexpected(library_error(json::kNoRecord, {}, "TRAILING_CONTENT (a NUL byte, then more bytes)",
                                         stream.Tell()));
  }
  return {};
}

class RapidJson final : public LibraryStrategy {
 public:
  using LibraryStrategy::LibraryStrategy;

 private:
  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<json::WeatherForecast>& out) override {
    return parse_body(reader_, body, out);
  }
  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<json::Repository>& out) override {
    return parse_body(reader_, body, out);
  }
  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<json::GithubRepository>& out) override {
    return parse_body(reader_, body, out);
  }

  rapidjson::Reader reader_;
};

}  // namespace

json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::WeatherForecast>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::Repository>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}
json::Status rapidjson_parse(base::PaddedBuffer& body, std::pmr::vector<json::GithubRepository>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}

std::unique_ptr<Strategy> make_rapidjson(const Recipe& recipe) { return std::make_unique<RapidJson>(recipe.name); }

}  // namespace ringlab::strategies::detail
