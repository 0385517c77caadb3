#pragma once
// The SAX handler of the rapidjson strategy (rapidjson.cpp): rapidjson::Reader's events over one array body
// of records, written straight into the owning records, reused in place. A state machine: the document, the
// array, a record, a repository's owner, license and topics; unknown keys' values skipped however nested.
// Errors in json/'s words (json_libraries.hpp); a Handler reads one body and is then dropped.
//
// The first rapidjson header of its translation unit: it chooses the library's SIMD scans, as the build
// gives simdjson its kernel (RINGLAB_SIMD). In the installed 1.1.0 headers (reader.h) they speed up two
// things: SkipWhitespace_SIMD (pcmpistrm with SSE4.2, 16 bytes at a time with SSE2) between tokens,
// which the server's compact bodies never need past its first byte, and ScanCopyUnescapedString, which
// finds the end of a string 16 bytes at a time (in situ: without moving the bytes while nothing was
// unescaped) instead of byte by byte; Reader::ParseStringToStream calls the latter only without
// kParseValidateEncodingFlag, so the strict flags below turn it off. Number parsing has no SIMD path.
#if defined(__SSE4_2__)
#define RAPIDJSON_SSE42
#elif defined(__SSE2__)
#define RAPIDJSON_SSE2
#endif
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "json_libraries.hpp"
#include "rapidjson_values.hpp"
#include "ringlab/json/fields.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::strategies::detail::rapidjson_sax {

// Nesting refused beyond this (simdjson's default limit): the Reader recurses once per level, so a body of
// a million '[' must end in an error, not in a stack overflow.
inline constexpr std::size_t kMaxDepth = 1024;

// The keys of each record (json/fields.hpp). A field's position in its table is its bit in the record's
// `seen` mask.
using RepositoryField = json::fields::Repository;
inline constexpr const auto& kWeatherKeys = json::fields::kWeather;
inline constexpr const auto& kOwnerKeys = json::fields::kOwner;
inline constexpr const auto& kLicenseKeys = json::fields::kLicense;
inline constexpr const auto& kRepositoryKeys = json::fields::kRepository;
inline constexpr const auto& kGithubKeys = json::fields::kGithub;
inline constexpr const auto& kProfileKeys = json::fields::kProfileStars;
using json::fields::all_of;
using json::fields::first_missing;
// The members of a weather record, a repository and a repository's nested objects, in the order of their
// keys above (github's and jos's are json::github_members and json::profile_members).
inline constexpr auto kWeatherMembers = std::tuple{&json::WeatherForecast::date, &json::WeatherForecast::temperature_c,
                                                   &json::WeatherForecast::summary,
                                                   &json::WeatherForecast::temperature_f};
inline constexpr auto kRepositoryMembers = std::tuple{
    &json::Repository::id, &json::Repository::node_id, &json::Repository::name, &json::Repository::full_name,
    &json::Repository::is_private, &json::Repository::owner, &json::Repository::html_url,
    &json::Repository::description, &json::Repository::fork, &json::Repository::url, &json::Repository::created_at,
    &json::Repository::updated_at, &json::Repository::pushed_at, &json::Repository::homepage, &json::Repository::size,
    &json::Repository::stargazers_count, &json::Repository::watchers_count, &json::Repository::language,
    &json::Repository::forks_count, &json::Repository::open_issues_count, &json::Repository::archived,
    &json::Repository::default_branch, &json::Repository::topics, &json::Repository::license, &json::Repository::score};
inline constexpr auto kOwnerMembers =
    std::tuple{&json::Owner::login,    &json::Owner::id,   &json::Owner::node_id,   &json::Owner::avatar_url,
               &json::Owner::html_url, &json::Owner::type, &json::Owner::site_admin};
inline constexpr auto kLicenseMembers = std::tuple{&json::License::key, &json::License::name, &json::License::spdx_id};
static_assert(std::tuple_size_v<decltype(kWeatherMembers)> == kWeatherKeys.size());
static_assert(std::tuple_size_v<decltype(kRepositoryMembers)> == kRepositoryKeys.size());
static_assert(std::tuple_size_v<decltype(kOwnerMembers)> == kOwnerKeys.size());
static_assert(std::tuple_size_v<decltype(kLicenseMembers)> == kLicenseKeys.size());

// The SAX handler: a state machine over one array body of `Record`s, writing each event into the record
// it belongs to. Returning false stops the Reader; the error is then in `error()`.
template <class Record>
class Handler {
  static constexpr bool kRepos = std::is_same_v<Record, json::Repository>;
  static constexpr bool kGithub = std::is_same_v<Record, json::GithubRepository>;
  static constexpr bool kProfile = std::is_same_v<Record, json::ProfileStars>;
  // The keys of a record (its top level).
  static constexpr const auto& keys() noexcept {
    if constexpr (kRepos) {
      return kRepositoryKeys;
    } else if constexpr (kGithub) {
      return kGithubKeys;
    } else if constexpr (kProfile) {
      return kProfileKeys;
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

  // A scalar into the record's field at its key's position: each record's members listed in the order of
  // its keys (record_members()). A repository's owner, topics and license refuse a scalar (the license
  // takes null).
  bool record_scalar(const Scalar& s) {
    bool ok = false;
    json::with_member(*record_, record_members(), static_cast<std::size_t>(field_),
                      [&](auto& member) { ok = set_member(s, member); });
    if (ok) seen_ |= uint32_t{1} << field_;
    return ok;
  }
  static constexpr auto record_members() noexcept {
    if constexpr (kRepos) {
      return kRepositoryMembers;
    } else if constexpr (kGithub) {
      return json::github_members<json::GithubRepository>();
    } else if constexpr (kProfile) {
      return json::profile_members<json::ProfileStars>();
    } else {
      return kWeatherMembers;
    }
  }
  template <class T>
  bool set_member(const Scalar& s, T& out) {
    return set(s, record_field(), out);
  }
  bool set_member(const Scalar& s, std::optional<std::pmr::string>& out) { return set_nullable(s, out); }
  bool set_member(const Scalar& s, json::Owner&) { return wrong_type(record_field(), s.name(), "an object"); }
  bool set_member(const Scalar& s, std::pmr::vector<std::pmr::string>&) {
    return wrong_type(record_field(), s.name(), "an array");
  }
  bool set_member(const Scalar& s, std::optional<json::License>& license) {
    if (s.kind != Scalar::Kind::null) return wrong_type(record_field(), s.name(), "an object or null");
    license.reset();
    return true;
  }

  bool owner_scalar(const Scalar& s) {
    if constexpr (kRepos) {
      return nested_scalar(s, record_->owner, kOwnerMembers);
    } else {
      return false;
    }
  }
  bool license_scalar(const Scalar& s) {
    if constexpr (kRepos) {
      return nested_scalar(s, *record_->license, kLicenseMembers);
    } else {
      return false;
    }
  }
  // A scalar of a nested object: into the member at its key's position.
  template <class Object, class Members>
  bool nested_scalar(const Scalar& s, Object& object, const Members& members) {
    bool ok = false;
    json::with_member(object, members, static_cast<std::size_t>(field_),
                      [&](auto& member) { ok = set(s, record_field(), member); });
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

// The Reader's flags. kFastFlags, the rapidjson rows' and token_loop's: the library's documented fast
// configuration, in situ (strings unescaped where they lie, no copy) and nothing else: no UTF-8
// validation, so the SIMD string scan runs (above), and numbers at normal precision (a decimal
// significand of up to 17 digits scaled by one multiplication or division by a power of ten, instead of
// big-integer arithmetic over every digit). Normal precision reads every number the server writes exactly:
// its only fractions are a repository's score, k / 1000 for an integer k below 100,000, written in its
// shortest form, which normal precision computes as that same one division (json_libraries_test.cpp
// proves it for every k); other decimals may come out 1 ulp off. Without validation, bytes that are not
// UTF-8 inside a string are taken as they are (control characters below 0x20 are still refused).
// kStrictFlags, rapidjson_strict's: full-precision numbers and UTF-8 validation too (simdjson validates
// UTF-8 always), so that the table shows what the two flags cost.
inline constexpr unsigned kFastFlags = rapidjson::kParseInsituFlag;
inline constexpr unsigned kStrictFlags =
    kFastFlags | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag;

// Parses `body` in situ with `reader` under `kFlags` (kFastFlags or kStrictFlags), its events going to the
// handler make_handler(stream) returns (Handler below, or token_loop.cpp's TokenLoop: anything with
// failed(), error() and record()). The reader is kept across bodies by the strategy: under kStrictFlags
// full-precision parsing copies each number's digits onto the Reader's own stack, which then keeps its
// capacity (kFastFlags never uses that stack). Errors: an empty body, the handler's own, rapidjson's, and
// bytes after a NUL.
template <unsigned kFlags, class MakeHandler>
json::Status parse_insitu(rapidjson::Reader& reader, base::PaddedBuffer& body, MakeHandler make_handler) {
  if (body.size() == 0) return std::unexpected(library_error(json::kNoRecord, {}, "EMPTY (the body is empty)"));
  body.data()[body.size()] = '\0';  // the Reader reads until a NUL, which goes into the padding
  rapidjson::InsituStringStream stream(body.data());
  auto handler = make_handler(stream);
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

}  // namespace ringlab::strategies::detail::rapidjson_sax
