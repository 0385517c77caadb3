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
#include <vector>

#include "parse_errors.hpp"
#include "reader_fields.hpp"

namespace ringlab::json {
namespace {

// --- records -----------------------------------------------------------------------------------------

template <class Doc, class Weather>
bool read_weather(Doc& doc, od::object object, Weather& out, const Context& ctx, std::size_t start) {
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, {}, e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, {}, e);
    const int k = match_key(key, kWeatherKeys, hint);
    error_code e = simdjson::SUCCESS;
    switch (static_cast<WeatherField>(k)) {
      case WeatherField::date: e = read(value, out.date); break;
      case WeatherField::temperature_c: e = read(value, out.temperature_c); break;
      case WeatherField::summary: e = read(value, out.summary); break;
      case WeatherField::temperature_f: e = read(value, out.temperature_f); break;
      default: continue;  // unknown key: On-Demand skips its value
    }
    if (e) return fail(doc, ctx, kWeatherKeys[static_cast<std::size_t>(k)].text, e);
    seen |= uint32_t{1} << k;
  }
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
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, "owner", e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, "owner", e);
    const int k = match_key(key, kOwnerKeys, hint);
    error_code e = simdjson::SUCCESS;
    switch (static_cast<OwnerField>(k)) {
      case OwnerField::login: e = read(value, out.login); break;
      case OwnerField::id: e = read(value, out.id); break;
      case OwnerField::node_id: e = read(value, out.node_id); break;
      case OwnerField::avatar_url: e = read(value, out.avatar_url); break;
      case OwnerField::html_url: e = read(value, out.html_url); break;
      case OwnerField::type: e = read(value, out.type); break;
      case OwnerField::site_admin: e = read(value, out.site_admin); break;
      default: continue;
    }
    if (e) return fail(doc, ctx, FieldName("owner", kOwnerKeys[static_cast<std::size_t>(k)].text), e);
    seen |= uint32_t{1} << k;
  }
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
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, "license", e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, "license", e);
    const int k = match_key(key, kLicenseKeys, hint);
    error_code e = simdjson::SUCCESS;
    switch (static_cast<LicenseField>(k)) {
      case LicenseField::key: e = read(value, out->key); break;
      case LicenseField::name: e = read(value, out->name); break;
      case LicenseField::spdx_id: e = read(value, out->spdx_id); break;
      default: continue;
    }
    if (e) return fail(doc, ctx, FieldName("license", kLicenseKeys[static_cast<std::size_t>(k)].text), e);
    seen |= uint32_t{1} << k;
  }
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
bool read_repository(Doc& doc, od::object object, Repo& out, const Context& ctx, std::size_t start) {
  const Allocator alloc = allocator_of(out);
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, {}, e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, {}, e);
    const int k = match_key(key, kRepositoryKeys, hint);
    error_code e = simdjson::SUCCESS;
    bool nested = true;
    switch (static_cast<RepositoryField>(k)) {
      case RepositoryField::id: e = read(value, out.id); break;
      case RepositoryField::node_id: e = read(value, out.node_id); break;
      case RepositoryField::name: e = read(value, out.name); break;
      case RepositoryField::full_name: e = read(value, out.full_name); break;
      case RepositoryField::is_private: e = read(value, out.is_private); break;
      case RepositoryField::owner: nested = read_owner(doc, value, out.owner, ctx); break;
      case RepositoryField::html_url: e = read(value, out.html_url); break;
      case RepositoryField::description: e = read(value, out.description); break;
      case RepositoryField::fork: e = read(value, out.fork); break;
      case RepositoryField::url: e = read(value, out.url); break;
      case RepositoryField::created_at: e = read(value, out.created_at); break;
      case RepositoryField::updated_at: e = read(value, out.updated_at); break;
      case RepositoryField::pushed_at: e = read(value, out.pushed_at); break;
      case RepositoryField::homepage: e = read_optional(value, out.homepage, alloc); break;
      case RepositoryField::size: e = read(value, out.size); break;
      case RepositoryField::stargazers_count: e = read(value, out.stargazers_count); break;
      case RepositoryField::watchers_count: e = read(value, out.watchers_count); break;
      case RepositoryField::language: e = read_optional(value, out.language, alloc); break;
      case RepositoryField::forks_count: e = read(value, out.forks_count); break;
      case RepositoryField::open_issues_count: e = read(value, out.open_issues_count); break;
      case RepositoryField::archived: e = read(value, out.archived); break;
      case RepositoryField::default_branch: e = read(value, out.default_branch); break;
      case RepositoryField::topics: nested = read_topics(doc, value, out.topics, ctx); break;
      case RepositoryField::license: nested = read_license(doc, value, out.license, alloc, ctx); break;
      case RepositoryField::score: e = read(value, out.score); break;
      default: continue;
    }
    if (!nested) return false;
    if (e) return fail(doc, ctx, kRepositoryKeys[static_cast<std::size_t>(k)].text, e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<kRepositoryKeys.size()>()) {
    return fail_at(ctx, fields::first_missing(seen, fields::kRepository), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

// A record whose fields are all scalars or strings, listed by `members` and matched by `keys` (the
// github records; and GithubStars, whose three keys leave the other 19 of a github record unknown, so
// that On-Demand skips their values unread). As the others: keys in any order, unknown keys skipped, a
// key given twice counts with its last value, a missing one is an error naming it.
template <class Doc, class Record, class Members, std::size_t N>
bool read_flat(Doc& doc, od::object object, Record& out, const Context& ctx, std::size_t start,
               const Members& members, const std::array<Key, N>& keys, const std::array<std::string_view, N>& names) {
  static_assert(std::tuple_size_v<Members> == N, "one key per member");
  const Allocator alloc = allocator_of(out);
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, {}, e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, {}, e);
    const int k = match_key(key, keys, hint);
    if (k < 0) continue;  // unknown key: On-Demand skips its value
    error_code e = simdjson::SUCCESS;
    with_member(out, members, static_cast<std::size_t>(k),
                [&](auto& member) { e = read_member(value, member, alloc); });
    if (e) return fail(doc, ctx, keys[static_cast<std::size_t>(k)].text, e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<N>()) return fail_at(ctx, fields::first_missing(seen, names), simdjson::NO_SUCH_FIELD, start);
  return true;
}

template <class Doc, class Record>
bool read_record(Doc& doc, od::object object, Record& out, const Context& ctx, std::size_t start) {
  if constexpr (std::is_same_v<Record, WeatherForecast> || std::is_same_v<Record, WeatherView>) {
    return read_weather(doc, object, out, ctx, start);
  } else if constexpr (std::is_same_v<Record, GithubRepository> || std::is_same_v<Record, GithubRepositoryView>) {
    return read_flat(doc, object, out, ctx, start, github_members<Record>(), kGithubKeys, fields::kGithub);
  } else if constexpr (std::is_same_v<Record, GithubStars> || std::is_same_v<Record, GithubStarsView>) {
    return read_flat(doc, object, out, ctx, start, github_stars_members<Record>(), kGithubStarsKeys,
                     fields::kGithubStars);
  } else if constexpr (std::is_same_v<Record, JosRepository> || std::is_same_v<Record, JosRepositoryView>) {
    return read_flat(doc, object, out, ctx, start, jos_members<Record>(), kJosKeys, fields::kJos);
  } else {
    return read_repository(doc, object, out, ctx, start);
  }
}

// The next record slot: an existing record to overwrite, or a new one.
template <class Record>
Record& slot(std::pmr::vector<Record>& out, std::size_t n) {
  return n < out.size() ? out[n] : out.emplace_back();
}

template <class Record>
void trim(std::pmr::vector<Record>& out, std::size_t n) {
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
}

}  // namespace
}  // namespace ringlab::json
