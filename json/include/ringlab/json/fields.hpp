#pragma once
// The JSON names of the records' fields (models.hpp), once: json/'s deserializer matches keys against
// them, and so do the deserializers built on other JSON libraries (strategies' rapidjson). A field's
// enumerator is its position in its table and its bit in a reader's "seen" mask; a table written out of
// order stops the build (names_in_order). Constant data; no allocation.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace ringlab::json::fields {

enum class Weather : int { date, temperature_c, summary, temperature_f };
enum class Owner : int { login, id, node_id, avatar_url, html_url, type, site_admin };
enum class License : int { key, name, spdx_id };
enum class Repository : int {
  id, node_id, name, full_name, is_private, owner, html_url, description, fork, url, created_at, updated_at,
  pushed_at, homepage, size, stargazers_count, watchers_count, language, forks_count, open_issues_count, archived,
  default_branch, topics, license, score
};
enum class Github : int {
  id, node_id, name, full_name, is_private, html_url, description, fork, url, created_at, updated_at, pushed_at,
  homepage, size, stargazers_count, watchers_count, language, forks_count, open_issues_count, archived,
  default_branch, visibility
};
// The three fields jos's Version 8 reads out of a github record.
enum class GithubStars : int { stars, name, url };
// jos's GitHubRepositoryDto {Name, Url, Stars}: the three keys every jos Version reads (profiles.hpp).
enum class ProfileStars : int { name, url, stars };

// The names of a table whose entries pair each enumerator with its name, in the enumerators' order.
template <class Field, std::size_t N>
consteval std::array<std::string_view, N> names_in_order(const std::array<std::pair<Field, std::string_view>, N>& table) {
  std::array<std::string_view, N> names{};
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].first) != i) throw "a field table entry is not at its field's position";
    names[i] = table[i].second;
  }
  return names;
}

// In the order bodies usually list them (readers try that order first).
inline constexpr auto kWeather = names_in_order<Weather, 4>({{
    {Weather::date, "date"},
    {Weather::temperature_c, "temperatureC"},
    {Weather::summary, "summary"},
    {Weather::temperature_f, "temperatureF"},
}});
inline constexpr auto kOwner = names_in_order<Owner, 7>({{
    {Owner::login, "login"},
    {Owner::id, "id"},
    {Owner::node_id, "node_id"},
    {Owner::avatar_url, "avatar_url"},
    {Owner::html_url, "html_url"},
    {Owner::type, "type"},
    {Owner::site_admin, "site_admin"},
}});
inline constexpr auto kLicense = names_in_order<License, 3>({{
    {License::key, "key"},
    {License::name, "name"},
    {License::spdx_id, "spdx_id"},
}});
inline constexpr auto kRepository = names_in_order<Repository, 25>({{
    {Repository::id, "id"},
    {Repository::node_id, "node_id"},
    {Repository::name, "name"},
    {Repository::full_name, "full_name"},
    {Repository::is_private, "private"},
    {Repository::owner, "owner"},
    {Repository::html_url, "html_url"},
    {Repository::description, "description"},
    {Repository::fork, "fork"},
    {Repository::url, "url"},
    {Repository::created_at, "created_at"},
    {Repository::updated_at, "updated_at"},
    {Repository::pushed_at, "pushed_at"},
    {Repository::homepage, "homepage"},
    {Repository::size, "size"},
    {Repository::stargazers_count, "stargazers_count"},
    {Repository::watchers_count, "watchers_count"},
    {Repository::language, "language"},
    {Repository::forks_count, "forks_count"},
    {Repository::open_issues_count, "open_issues_count"},
    {Repository::archived, "archived"},
    {Repository::default_branch, "default_branch"},
    {Repository::topics, "topics"},
    {Repository::license, "license"},
    {Repository::score, "score"},
}});
inline constexpr auto kGithub = names_in_order<Github, 22>({{
    {Github::id, "id"},
    {Github::node_id, "node_id"},
    {Github::name, "name"},
    {Github::full_name, "full_name"},
    {Github::is_private, "private"},
    {Github::html_url, "html_url"},
    {Github::description, "description"},
    {Github::fork, "fork"},
    {Github::url, "url"},
    {Github::created_at, "created_at"},
    {Github::updated_at, "updated_at"},
    {Github::pushed_at, "pushed_at"},
    {Github::homepage, "homepage"},
    {Github::size, "size"},
    {Github::stargazers_count, "stargazers_count"},
    {Github::watchers_count, "watchers_count"},
    {Github::language, "language"},
    {Github::forks_count, "forks_count"},
    {Github::open_issues_count, "open_issues_count"},
    {Github::archived, "archived"},
    {Github::default_branch, "default_branch"},
    {Github::visibility, "visibility"},
}});
// Not the order bodies list them in (name, url, then stargazers_count), but jos's class's.
inline constexpr auto kGithubStars = names_in_order<GithubStars, 3>({{
    {GithubStars::stars, "stargazers_count"},
    {GithubStars::name, "name"},
    {GithubStars::url, "url"},
}});

inline constexpr auto kProfileStars = names_in_order<ProfileStars, 3>({{
    {ProfileStars::name, "name"},
    {ProfileStars::url, "url"},
    {ProfileStars::stars, "stars"},
}});

// The "seen" mask of a record whose N fields all came.
template <std::size_t N>
constexpr uint32_t all_of() noexcept {
  static_assert(N < 32);
  return (uint32_t{1} << N) - 1;
}

// The name of the first field whose bit `seen` lacks; empty when none does.
template <std::size_t N>
constexpr std::string_view first_missing(uint32_t seen, const std::array<std::string_view, N>& names) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if ((seen & (uint32_t{1} << i)) == 0) return names[i];
  }
  return {};
}

}  // namespace ringlab::json::fields
