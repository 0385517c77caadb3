// How the simdjson readers (deserialize.cpp) read one record: weather, repository (with its owner,
// license and topics), the flat github records, and the slots of a vector of records. As everywhere in
// the readers: keys in any order, unknown keys skipped, a key given twice counts with its last value, a
// missing key is an error naming it; a reader returns false and leaves the Error in its Context.
//
// Private to deserialize.cpp, which includes it once; internal linkage for the reason reader_fields.hpp
// gives.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "parse_errors.hpp"
#include "reader_fields.hpp"

namespace ringlab::json {
namespace {

// --- members -----------------------------------------------------------------------------------------

// What a member's reader returns when it has recorded its error itself (a nested record's reader names
// its own field): read_members then stops without recording another.
inline constexpr error_code kReported = simdjson::NUM_ERROR_CODES;

// The key and value of the member `it` stands at. False, with the error recorded (naming `parent`, the
// field the object is, if any), when the object is malformed there.
template <class Doc, class Iterator>
[[gnu::always_inline]] inline bool member_at(Doc& doc, Iterator& it, od::raw_json_string& key, od::value& value,
                                             const Context& ctx, std::string_view parent) {
  auto field = *it;
  if (const error_code e = field.key().get(key)) return fail(doc, ctx, parent, e);
  // A key that parsed has its bytes; checked, since key_is assumes it. One predicted compare.
  if (key.raw() == nullptr) return fail(doc, ctx, parent, simdjson::UNEXPECTED_ERROR);
  if (const error_code e = field.value().get(value)) return fail(doc, ctx, parent, e);
  return true;
}

// Reads the members of `object`: read_member(k, value) for a member whose key is Keys[k], which returns
// an error code (kReported if it recorded the error itself); unknown keys are skipped (On-Demand skips
// their values); a key given twice is read twice, so its last value stays; each key read sets its bit
// in `seen` (set when the object ends). False, with the error recorded, when a member fails.
//
// The keys are tried first in the table's order, as compile-time constants (key_is): while a body lists
// them in that order, as the server and the usual APIs write them, each member costs one compare against
// immediates and `k` is a constant in the call of read_member, whose switch on it folds away. From the
// first member off that order on, the rest go through match_key's table. Always inlined: the records'
// readers are called once per record from three loops (array, lines, one record), and as a call the
// iterator's state would live in memory and be stored back at every token.
template <const auto& Keys, class Doc, class ReadMember>
[[gnu::always_inline]] inline bool read_members(Doc& doc, od::object object, const Context& ctx,
                                                std::string_view parent, uint32_t& seen, ReadMember&& read_member) {
  constexpr std::size_t N = std::tuple_size_v<std::remove_cvref_t<decltype(Keys)>>;
  static_assert(N <= 32, "one bit of `seen` per key");
  auto it = object.begin();
  const auto end = object.end();
  od::raw_json_string key;
  od::value value;
  // The bits of the keys read; stored into `seen` once the object ends (a local stays in a register
  // where the caller's variable, set member by member, was kept in memory).
  uint32_t found = 0;
  // The member read by `k`; false ends the reading (its error recorded).
  const auto read_one = [&](std::size_t k) __attribute__((always_inline)) {
    const error_code e = read_member(k, value);
    if (e == kReported) return false;
    if (e) return fail(doc, ctx, FieldName(parent, Keys[k].text), e);
    found |= uint32_t{1} << k;
    return true;
  };
  // In order: member I has key I. `stop` says why the members in order ended: the object's end, a member
  // off the order, or a failure (its error recorded); none while every key so far came in order.
  enum class Stop { none, done, off_order, failed };
  Stop stop = Stop::none;
  const auto in_order = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) __attribute__((always_inline)) {
    if (!(it != end)) return (stop = Stop::done, false);
    if (!member_at(doc, it, key, value, ctx, parent)) return (stop = Stop::failed, false);
    if (!key_is<Keys, I>(key.raw())) return (stop = Stop::off_order, false);
    if (!read_one(I)) return (stop = Stop::failed, false);
    ++it;
    return true;
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) __attribute__((always_inline)) {
    (in_order(std::integral_constant<std::size_t, I>{}) && ...);
  }(std::make_index_sequence<N>{});
  if (stop == Stop::failed) return false;
  if (stop == Stop::done) {
    seen = found;
    return true;
  }
  // Off the table's order (a member out of place, an unknown key, a repeated one) or past its end.
  std::size_t hint = N;
  if (stop == Stop::off_order) {
    const int k = match_key(key, Keys, hint);
    if (k >= 0 && !read_one(static_cast<std::size_t>(k))) return false;
    ++it;
  }
  for (; it != end; ++it) {
    if (!member_at(doc, it, key, value, ctx, parent)) return false;
    const int k = match_key(key, Keys, hint);
    if (k >= 0 && !read_one(static_cast<std::size_t>(k))) return false;
  }
  seen = found;
  return true;
}

// --- records -----------------------------------------------------------------------------------------

template <class Doc, class Weather>
[[gnu::always_inline]] inline bool read_weather(Doc& doc, od::object object, Weather& out, const Context& ctx,
                                                std::size_t start) {
  uint32_t seen = 0;
  const bool read = read_members<kWeatherKeys>(doc, object, ctx, {}, seen, [&](std::size_t k, od::value& value) __attribute__((always_inline)) {
    switch (static_cast<WeatherField>(k)) {
      case WeatherField::date: return json::read(value, out.date);
      case WeatherField::temperature_c: return json::read(value, out.temperature_c);
      case WeatherField::summary: return json::read(value, out.summary);
      case WeatherField::temperature_f: return json::read(value, out.temperature_f);
    }
    return simdjson::SUCCESS;
  });
  if (!read) return false;
  if (seen != all_of<kWeatherKeys.size()>()) {
    return fail_at(ctx, fields::first_missing(seen, fields::kWeather), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

template <class Doc, class OwnerForm>
bool read_owner(Doc& doc, od::value v, OwnerForm& out, const Context& ctx) {
  const std::size_t start = static_cast<std::size_t>(v.raw_json_token().data() - ctx.body);
  od::object object;
  if (const error_code e = v.get_object().get(object)) return fail(doc, ctx, "owner", e);
  uint32_t seen = 0;
  const bool read = read_members<kOwnerKeys>(doc, object, ctx, "owner", seen, [&](std::size_t k, od::value& value) __attribute__((always_inline)) {
    switch (static_cast<OwnerField>(k)) {
      case OwnerField::login: return json::read(value, out.login);
      case OwnerField::id: return json::read(value, out.id);
      case OwnerField::node_id: return json::read(value, out.node_id);
      case OwnerField::avatar_url: return json::read(value, out.avatar_url);
      case OwnerField::html_url: return json::read(value, out.html_url);
      case OwnerField::type: return json::read(value, out.type);
      case OwnerField::site_admin: return json::read(value, out.site_admin);
    }
    return simdjson::SUCCESS;
  });
  if (!read) return false;
  if (seen != all_of<kOwnerKeys.size()>()) {
    return fail_at(ctx, FieldName("owner", fields::first_missing(seen, fields::kOwner)), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

template <class Doc, class LicenseForm>
bool read_license(Doc& doc, od::value v, std::optional<LicenseForm>& out, const Allocator& alloc,
                    const Context& ctx) {
  bool null = false;
  if (const error_code e = v.is_null().get(null)) return fail(doc, ctx, "license", e);
  if (null) {
    out.reset();
    return true;
  }
  const std::size_t start = static_cast<std::size_t>(v.raw_json_token().data() - ctx.body);
  od::object object;
  if (const error_code e = v.get_object().get(object)) return fail(doc, ctx, "license", e);
  if (!out) {
    if constexpr (std::is_same_v<LicenseForm, License>) {
      out.emplace(alloc);
    } else {
      out.emplace();
    }
  }
  uint32_t seen = 0;
  const bool read =
      read_members<kLicenseKeys>(doc, object, ctx, "license", seen, [&](std::size_t k, od::value& value) __attribute__((always_inline)) {
        switch (static_cast<LicenseField>(k)) {
          case LicenseField::key: return json::read(value, out->key);
          case LicenseField::name: return json::read(value, out->name);
          case LicenseField::spdx_id: return json::read(value, out->spdx_id);
        }
        return simdjson::SUCCESS;
      });
  if (!read) return false;
  if (seen != all_of<kLicenseKeys.size()>()) {
    return fail_at(ctx, FieldName("license", fields::first_missing(seen, fields::kLicense)), simdjson::NO_SUCH_FIELD,
                      start);
  }
  return true;
}

// Owning topics: overwritten in place, so the strings' capacity is reused from one parse to the next.
template <class Doc>
bool read_topics(Doc& doc, od::value v, std::pmr::vector<std::pmr::string>& out, const Context& ctx) {
  od::array array;
  if (const error_code e = v.get_array().get(array)) return fail(doc, ctx, "topics", e);
  std::size_t n = 0;
  for (auto element : array) {
    od::value item;
    error_code e = element.get(item);
    if (!e) e = read(item, n < out.size() ? out[n] : out.emplace_back());
    if (e) return fail(doc, ctx, FieldName("topics", n), e);
    ++n;
  }
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
  return true;
}

// Viewing topics: each element is validated as a viewing string; the view keeps the array's text from
// '[' to ']'. The last token ends where the next one starts (whitespace included), that is at ']'.
template <class Doc>
bool read_topics(Doc& doc, od::value v, JsonStringArrayView& out, const Context& ctx) {
  const std::string_view open = v.raw_json_token();
  const char* end = open.data() + open.size();
  od::array array;
  if (const error_code e = v.get_array().get(array)) return fail(doc, ctx, "topics", e);
  std::size_t n = 0;
  for (auto element : array) {
    od::value item;
    error_code e = element.get(item);
    if (!e) {
      const std::string_view token = item.raw_json_token();
      JsonStringView text;
      e = read(item, text);
      end = token.data() + token.size();
    }
    if (e) return fail(doc, ctx, FieldName("topics", n), e);
    ++n;
  }
  if (end >= ctx.body + ctx.body_size || *end != ']') return fail(doc, ctx, "topics", simdjson::TAPE_ERROR);
  out = JsonStringArrayView(std::string_view(open.data(), static_cast<std::size_t>(end + 1 - open.data())), n);
  return true;
}

template <class Doc, class Repo>
[[gnu::always_inline]] inline bool read_repository(Doc& doc, od::object object, Repo& out, const Context& ctx,
                                                   std::size_t start) {
  const Allocator alloc = allocator_of(out);
  // A nested record's reader records its own error: kReported tells read_members so.
  const auto nested = [](bool read) __attribute__((always_inline)) { return read ? simdjson::SUCCESS : kReported; };
  uint32_t seen = 0;
  const bool read = read_members<kRepositoryKeys>(doc, object, ctx, {}, seen, [&](std::size_t k, od::value& value) __attribute__((always_inline)) {
    switch (static_cast<RepositoryField>(k)) {
      case RepositoryField::id: return json::read(value, out.id);
      case RepositoryField::node_id: return json::read(value, out.node_id);
      case RepositoryField::name: return json::read(value, out.name);
      case RepositoryField::full_name: return json::read(value, out.full_name);
      case RepositoryField::is_private: return json::read(value, out.is_private);
      case RepositoryField::owner: return nested(read_owner(doc, value, out.owner, ctx));
      case RepositoryField::html_url: return json::read(value, out.html_url);
      case RepositoryField::description: return json::read(value, out.description);
      case RepositoryField::fork: return json::read(value, out.fork);
      case RepositoryField::url: return json::read(value, out.url);
      case RepositoryField::created_at: return json::read(value, out.created_at);
      case RepositoryField::updated_at: return json::read(value, out.updated_at);
      case RepositoryField::pushed_at: return json::read(value, out.pushed_at);
      case RepositoryField::homepage: return read_optional(value, out.homepage, alloc);
      case RepositoryField::size: return json::read(value, out.size);
      case RepositoryField::stargazers_count: return json::read(value, out.stargazers_count);
      case RepositoryField::watchers_count: return json::read(value, out.watchers_count);
      case RepositoryField::language: return read_optional(value, out.language, alloc);
      case RepositoryField::forks_count: return json::read(value, out.forks_count);
      case RepositoryField::open_issues_count: return json::read(value, out.open_issues_count);
      case RepositoryField::archived: return json::read(value, out.archived);
      case RepositoryField::default_branch: return json::read(value, out.default_branch);
      case RepositoryField::topics: return nested(read_topics(doc, value, out.topics, ctx));
      case RepositoryField::license: return nested(read_license(doc, value, out.license, alloc, ctx));
      case RepositoryField::score: return json::read(value, out.score);
    }
    return simdjson::SUCCESS;
  });
  if (!read) return false;
  if (seen != all_of<kRepositoryKeys.size()>()) {
    return fail_at(ctx, fields::first_missing(seen, fields::kRepository), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

// A record whose fields are all scalars or strings, listed by `members` and matched by `Keys` (the
// github records; and GithubStars, whose three keys leave the other 19 of a github record unknown, so
// that On-Demand skips their values unread). As the others: keys in any order, unknown keys skipped, a
// key given twice counts with its last value, a missing one is an error naming it.
template <const auto& Keys, class Doc, class Record, class Members, std::size_t N>
[[gnu::always_inline]] inline bool read_flat(Doc& doc, od::object object, Record& out, const Context& ctx,
                                             std::size_t start, const Members& members,
                                             const std::array<std::string_view, N>& names) {
  static_assert(std::tuple_size_v<Members> == N && Keys.size() == N, "one key per member");
  const Allocator alloc = allocator_of(out);
  uint32_t seen = 0;
  const bool read = read_members<Keys>(doc, object, ctx, {}, seen, [&](std::size_t k, od::value& value) __attribute__((always_inline)) {
    error_code e = simdjson::SUCCESS;
    with_member(out, members, k,
                [&](auto& member) __attribute__((always_inline)) { e = read_member(value, member, alloc); });
    return e;
  });
  if (!read) return false;
  if (seen != all_of<N>()) return fail_at(ctx, fields::first_missing(seen, names), simdjson::NO_SUCH_FIELD, start);
  return true;
}

// Always inlined for the reason read_members gives: this is the body of the three parse loops.
template <class Doc, class Record>
[[gnu::always_inline]] inline bool read_record(Doc& doc, od::object object, Record& out, const Context& ctx,
                                               std::size_t start) {
  if constexpr (std::is_same_v<Record, WeatherForecast> || std::is_same_v<Record, WeatherView>) {
    return read_weather(doc, object, out, ctx, start);
  } else if constexpr (std::is_same_v<Record, GithubRepository> || std::is_same_v<Record, GithubRepositoryView>) {
    return read_flat<kGithubKeys>(doc, object, out, ctx, start, github_members<Record>(), fields::kGithub);
  } else if constexpr (std::is_same_v<Record, GithubStars> || std::is_same_v<Record, GithubStarsView>) {
    return read_flat<kGithubStarsKeys>(doc, object, out, ctx, start, github_stars_members<Record>(),
                                       fields::kGithubStars);
  } else if constexpr (std::is_same_v<Record, ProfileStars> || std::is_same_v<Record, ProfileStarsView>) {
    return read_flat<kProfileKeys>(doc, object, out, ctx, start, profile_members<Record>(), fields::kProfileStars);
  } else {
    return read_repository(doc, object, out, ctx, start);
  }
}

// Record slot n of a vector that several bodies share (parse_piece's `out`) and that another body's end
// trimmed below this body's records: the slots between are made too, so that record n lands at index n.
// Apart from new_slot, which every record of a vector made per op (the arena rows, a fresh client)
// goes through: with the resize inside it, those rows parsed 1.5 % slower at 10,000 records.
template <class Record>
[[gnu::noinline, gnu::cold]] Record& slot_past_end(std::pmr::vector<Record>& out, std::size_t n) {
  out.resize(n);
  return out.emplace_back();
}

// Record slot n when `out` holds no more than n: the vector grows, once per record only while a larger
// body than any before it is parsed. n is out.size() but for a shared vector (slot_past_end). Out of
// line, so that slot() stays inlined in the parse loops.
template <class Record>
[[gnu::noinline]] Record& new_slot(std::pmr::vector<Record>& out, std::size_t n) {
  if (out.size() < n) [[unlikely]] return slot_past_end(out, n);
  return out.emplace_back();
}

// Record slot n: an existing record to overwrite, or a new one.
template <class Record>
[[gnu::always_inline]] inline Record& slot(std::pmr::vector<Record>& out, std::size_t n) {
  return n < out.size() ? out[n] : new_slot(out, n);
}

// Drops the records from n on (none when `out` is shorter: a shared vector another body trimmed).
template <class Record>
void trim(std::pmr::vector<Record>& out, std::size_t n) {
  if (out.size() > n) out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
}

}  // namespace
}  // namespace ringlab::json
