// tests json/src/checksum.cpp
#include "ringlab/json/checksum.hpp"

#include <doctest/doctest.h>

#include <deque>
#include <functional>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "ringlab/json/generate.hpp"
#include "ringlab/json/serialize.hpp"

namespace json = ringlab::json;

namespace {

// A view of `text` as the server would write it: the escaped bytes between the quotes. `storage`
// keeps the bytes alive (a deque never moves what it holds).
json::JsonStringView view_of(std::string_view text, std::deque<std::string>& storage) {
  std::string quoted;
  json::append_json_string(quoted, text);
  storage.push_back(quoted.substr(1, quoted.size() - 2));
  const std::string& raw = storage.back();
  return {raw, raw.find('\\') != std::string::npos};
}

json::WeatherView view_of(const json::WeatherForecast& r, std::deque<std::string>& storage) {
  return {view_of(r.date, storage), r.temperature_c, view_of(r.summary, storage), r.temperature_f};
}

json::RepositoryView view_of(const json::Repository& r, std::deque<std::string>& storage) {
  json::RepositoryView v;
  v.id = r.id;
  v.node_id = view_of(r.node_id, storage);
  v.name = view_of(r.name, storage);
  v.full_name = view_of(r.full_name, storage);
  v.is_private = r.is_private;
  v.owner = {view_of(r.owner.login, storage),    r.owner.id,
             view_of(r.owner.node_id, storage),  view_of(r.owner.avatar_url, storage),
             view_of(r.owner.html_url, storage), view_of(r.owner.type, storage),
             r.owner.site_admin};
  v.html_url = view_of(r.html_url, storage);
  v.description = view_of(r.description, storage);
  v.fork = r.fork;
  v.url = view_of(r.url, storage);
  v.created_at = view_of(r.created_at, storage);
  v.updated_at = view_of(r.updated_at, storage);
  v.pushed_at = view_of(r.pushed_at, storage);
  if (r.homepage) v.homepage = view_of(*r.homepage, storage);
  v.size = r.size;
  v.stargazers_count = r.stargazers_count;
  v.watchers_count = r.watchers_count;
  if (r.language) v.language = view_of(*r.language, storage);
  v.forks_count = r.forks_count;
  v.open_issues_count = r.open_issues_count;
  v.archived = r.archived;
  v.default_branch = view_of(r.default_branch, storage);
  std::string topics = "[";
  for (std::size_t t = 0; t < r.topics.size(); ++t) {
    if (t > 0) topics += ", ";  // spacing the server does not use: the view must not care
    json::append_json_string(topics, r.topics[t]);
  }
  topics += "]";
  storage.push_back(topics);
  v.topics = json::JsonStringArrayView(storage.back(), r.topics.size());
  if (r.license) {
    v.license = json::LicenseView{view_of(r.license->key, storage), view_of(r.license->name, storage),
                                  view_of(r.license->spdx_id, storage)};
  }
  v.score = r.score;
  return v;
}

uint64_t sum_of(const json::WeatherForecast& r) { return json::checksum(std::span(&r, 1)); }
uint64_t sum_of(const json::Repository& r) { return json::checksum(std::span(&r, 1)); }

}  // namespace

TEST_CASE("the generator's checksum equals the checksum of the generated records") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{1000}}) {
    INFO("n = " << n);
    std::vector<json::WeatherForecast> weather;
    std::vector<json::Repository> repos;
    for (std::size_t i = 0; i < n; ++i) {
      weather.push_back(json::make_weather(i));
      repos.push_back(json::make_repository(i));
    }
    CHECK(json::checksum_weather(n) == json::checksum(weather));
    CHECK(json::checksum_repos(n) == json::checksum(repos));
  }
}

TEST_CASE("adding records one at a time gives the checksum of the whole list") {
  json::Checksum sum;
  std::vector<json::WeatherForecast> all;
  for (std::size_t i = 0; i < 20; ++i) {
    all.push_back(json::make_weather(i));
    sum.add(all.back());
  }
  CHECK(sum.records() == 20);
  CHECK(sum.value() == json::checksum(all));
  CHECK(json::Checksum{}.value() == json::checksum(std::span<const json::WeatherForecast>{}));
  CHECK(json::checksum_weather(0) != json::checksum_weather(1));
  CHECK(json::checksum_weather(1) != json::checksum_weather(2));
}

TEST_CASE("record order matters") {
  const std::vector<json::WeatherForecast> forward = {json::make_weather(0), json::make_weather(1)};
  const std::vector<json::WeatherForecast> backward = {json::make_weather(1), json::make_weather(0)};
  CHECK(json::checksum(forward) != json::checksum(backward));
}

TEST_CASE("text fields are delimited: (\"ab\",\"c\") differs from (\"a\",\"bc\")") {
  json::WeatherForecast a, b;
  a.date = "ab";
  a.summary = "c";
  b.date = "a";
  b.summary = "bc";
  CHECK(sum_of(a) != sum_of(b));
  // A NUL byte is text, not padding.
  json::WeatherForecast c, d;
  c.date = "a";
  d.date = std::pmr::string("a\0", 2);
  CHECK(sum_of(c) != sum_of(d));
}

TEST_CASE("every field of a repository counts") {
  const json::Repository base = json::make_repository(3);
  using Mutation = std::function<void(json::Repository&)>;
  const std::pair<std::string_view, Mutation> mutations[] = {
      {"id", [](auto& r) { r.id += 1; }},
      {"node_id", [](auto& r) { r.node_id += "x"; }},
      {"name", [](auto& r) { r.name += "x"; }},
      {"full_name", [](auto& r) { r.full_name += "x"; }},
      {"private", [](auto& r) { r.is_private = !r.is_private; }},
      {"owner.login", [](auto& r) { r.owner.login += "x"; }},
      {"owner.id", [](auto& r) { r.owner.id += 1; }},
      {"owner.node_id", [](auto& r) { r.owner.node_id += "x"; }},
      {"owner.avatar_url", [](auto& r) { r.owner.avatar_url += "x"; }},
      {"owner.html_url", [](auto& r) { r.owner.html_url += "x"; }},
      {"owner.type", [](auto& r) { r.owner.type += "x"; }},
      {"owner.site_admin", [](auto& r) { r.owner.site_admin = !r.owner.site_admin; }},
      {"html_url", [](auto& r) { r.html_url += "x"; }},
      {"description", [](auto& r) { r.description += "x"; }},
      {"fork", [](auto& r) { r.fork = !r.fork; }},
      {"url", [](auto& r) { r.url += "x"; }},
      {"created_at", [](auto& r) { r.created_at += "x"; }},
      {"updated_at", [](auto& r) { r.updated_at += "x"; }},
      {"pushed_at", [](auto& r) { r.pushed_at += "x"; }},
      {"homepage null vs empty", [](auto& r) { r.homepage = r.homepage ? std::nullopt : std::optional<std::pmr::string>(""); }},
      {"size", [](auto& r) { r.size += 1; }},
      {"stargazers_count", [](auto& r) { r.stargazers_count += 1; }},
      {"watchers_count", [](auto& r) { r.watchers_count += 1; }},
      {"language", [](auto& r) { r.language = r.language ? std::nullopt : std::optional<std::pmr::string>("C"); }},
      {"forks_count", [](auto& r) { r.forks_count += 1; }},
      {"open_issues_count", [](auto& r) { r.open_issues_count += 1; }},
      {"archived", [](auto& r) { r.archived = !r.archived; }},
      {"default_branch", [](auto& r) { r.default_branch += "x"; }},
      {"topics: one more", [](auto& r) { r.topics.emplace_back("extra"); }},
      {"topics: an empty one more", [](auto& r) { r.topics.emplace_back(""); }},
      {"license null vs empty", [](auto& r) { r.license = r.license ? std::nullopt : std::optional<json::License>(json::License{}); }},
      {"score", [](auto& r) { r.score += 0.001; }},
  };
  for (const auto& [name, mutate] : mutations) {
    INFO(name);
    json::Repository changed = base;
    mutate(changed);
    CHECK(sum_of(changed) != sum_of(base));
  }
}

TEST_CASE("topics are delimited: [\"a\",\"b\"] differs from [\"ab\"]") {
  json::Repository one = json::make_repository(0);
  json::Repository two = one;
  one.topics = {"ab"};
  two.topics = {"a", "b"};
  CHECK(sum_of(one) != sum_of(two));
}

TEST_CASE("a view of a record gives the checksum of the owning record, escapes decoded on the fly") {
  std::deque<std::string> storage;
  std::vector<json::RepositoryView> views;
  std::vector<json::WeatherView> weather_views;
  bool saw_escapes = false;
  for (std::size_t i = 0; i < 300; ++i) {
    const json::Repository owning = json::make_repository(i);
    views.push_back(view_of(owning, storage));
    saw_escapes |= views.back().description.has_escapes;
    INFO("record " << i);
    CHECK(json::checksum(std::span(&views.back(), 1)) == sum_of(owning));
    weather_views.push_back(view_of(json::make_weather(i), storage));
  }
  CHECK(saw_escapes);
  CHECK(json::checksum(views) == json::checksum_repos(300));
  CHECK(json::checksum(weather_views) == json::checksum_weather(300));
}

TEST_CASE("escaped text hashes like its decoding for every length and escape position") {
  // Decoded pieces arrive one by one and fill 8-byte words across their edges: lengths 0..40 with an
  // escape at each position cover every alignment.
  for (std::size_t length = 0; length <= 40; ++length) {
    for (std::size_t at = 0; at <= length; ++at) {
      std::string decoded(length, 'a');
      decoded.insert(at, "\xC3\xA9");  // written back as \u00E9
      std::deque<std::string> storage;
      json::WeatherForecast owning;
      owning.date = decoded;
      owning.summary = decoded.substr(0, at) + "\"";
      const json::WeatherView view = view_of(owning, storage);
      INFO("length " << length << " escape at " << at);
      REQUIRE(view.date.has_escapes);
      CHECK(json::checksum(std::span(&view, 1)) == sum_of(owning));
    }
  }
}

TEST_CASE("a hand-made view with an invalid escape is hashed as its raw text") {
  const json::WeatherView flagged{{R"(a\qb)", true}, 1, {"Mild", false}, 33};
  const json::WeatherView unflagged{{R"(a\qb)", false}, 1, {"Mild", false}, 33};
  CHECK(json::checksum(std::span(&flagged, 1)) == json::checksum(std::span(&unflagged, 1)));
  // A flag on text without a backslash changes nothing either.
  const json::WeatherView needless{{"plain", true}, 1, {"Mild", false}, 33};
  const json::WeatherView plain{{"plain", false}, 1, {"Mild", false}, 33};
  CHECK(json::checksum(std::span(&needless, 1)) == json::checksum(std::span(&plain, 1)));
}

namespace {

// Changes a value of any type a github record holds.
void change(int64_t& value) { ++value; }
void change(bool& value) { value = !value; }
void change(std::pmr::string& value) { value.push_back('x'); }
void change(std::optional<std::pmr::string>& value) {
  if (value) {
    value.reset();
  } else {
    value.emplace("now set");
  }
}

}  // namespace

TEST_CASE("every one of a github record's 22 fields counts; the three-field checksum counts three") {
  const json::GithubRepository base = json::make_github(5);
  const uint64_t full = json::checksum(std::span(&base, 1));
  const auto members = json::github_members<json::GithubRepository>();
  std::size_t changed = 0;
  std::apply(
      [&](auto... member) {
        (
            [&] {
              json::GithubRepository copy = base;
              change(copy.*member);
              changed += json::checksum(std::span(&copy, 1)) != full;
            }(),
            ...);
      },
      members);
  CHECK(changed == 22);

  json::GithubStars stars;
  stars.stars = base.stargazers_count;
  stars.name = base.name;
  stars.url = base.url;
  const uint64_t three = json::checksum(std::span(&stars, 1));
  CHECK(json::checksum_github_three_fields(6) != json::checksum_github(6));
  std::vector<json::GithubStars> first;
  for (std::size_t i = 0; i < 6; ++i) {
    const json::GithubRepository r = json::make_github(i);
    json::GithubStars s;
    s.stars = r.stargazers_count;
    s.name = r.name;
    s.url = r.url;
    first.push_back(s);
  }
  CHECK(json::checksum(first) == json::checksum_github_three_fields(6));
  CHECK(first[5] == stars);
  json::GithubStars other = stars;
  ++other.stars;
  CHECK(json::checksum(std::span(&other, 1)) != three);
}
