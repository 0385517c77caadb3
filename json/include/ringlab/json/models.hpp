#pragma once
// The records of the three payloads, in an owning and a viewing form.
//
// Owning forms (WeatherForecast, Owner, License, Repository, GithubRepository, GithubStars) hold their
// text in std::pmr::string and std::pmr::vector, so a record can live in an arena: each is
// allocator-aware (allocator_type plus the allocator-extended constructors), so a
// std::pmr::vector<Repository> built on a monotonic_buffer_resource puts every string of every record
// there too. With the default resource they behave like std::string. A record owns all its bytes and
// outlives the body it was parsed from. Copy, move, assignment and destruction are the implicit ones
// (allocator-extended constructors are not copy or move constructors, so they suppress none of them);
// models.cpp holds that moving a record cannot throw, as std::vector needs to move rather than copy.
//
// Viewing forms (WeatherView, OwnerView, LicenseView, RepositoryView, GithubRepositoryView,
// GithubStarsView) own nothing. Their text fields are JsonStringView: the bytes between a JSON string's quotes *as they are in the body*. A string that
// contains escapes (\" \\ \n \u00e9) has no decoded copy anywhere a view could point to, so a view keeps
// the escaped text and says so (has_escapes); checksum.hpp decodes such text on the fly, unescape.hpp
// decodes it into a buffer the caller owns. Escapes are validated when the view is parsed.
//
// Lifetime of views: a view record is valid while the body buffer it was parsed from is alive and
// unchanged (for base::PaddedBuffer: until its next reserve(), move or destruction). Views never point
// into the simdjson parser, so the parser may be reused at once. deserialize.hpp refuses, at compile
// time, to parse views out of a temporary buffer.
//
// Field order below is the order of the JSON keys the server writes and the order the checksum folds
// the fields in.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace ringlab::json {

// ---------------------------------------------------------------------------------------------------
// Views of JSON text

// The characters between a JSON string's quotes, exactly as in the body.
struct JsonStringView {
  std::string_view raw;      // escapes not decoded
  bool has_escapes = false;  // raw holds a backslash: decode before comparing or printing

  // The text itself when there is nothing to decode; nullopt when it must be unescaped first.
  [[nodiscard]] std::optional<std::string_view> plain() const noexcept {
    if (has_escapes) return std::nullopt;
    return raw;
  }
  friend bool operator==(const JsonStringView&, const JsonStringView&) = default;
};

// A JSON array of strings as it is in the body, from '[' to ']', and its element count. The parser
// validated it (every element a string with valid escapes), so iterating only has to find the quotes.
// Iteration yields JsonStringView elements pointing into the same body.
class JsonStringArrayView {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = JsonStringView;
    using difference_type = std::ptrdiff_t;
    using pointer = const JsonStringView*;
    using reference = const JsonStringView&;

    iterator() = default;
    reference operator*() const noexcept { return current_; }
    pointer operator->() const noexcept { return &current_; }
    iterator& operator++() noexcept;
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.next_ == b.next_; }

   private:
    friend class JsonStringArrayView;
    iterator(std::string_view raw, std::size_t from) noexcept;
    std::string_view raw_;
    std::size_t next_ = 0;  // where the scan for the element after current_ starts; raw_.size() at end
    JsonStringView current_;
  };

  JsonStringArrayView() = default;
  // `raw` must be a JSON array of strings from '[' to ']' (anything else iterates as empty or stops
  // early; it never reads outside `raw`).
  JsonStringArrayView(std::string_view raw, std::size_t count) noexcept : raw_(raw), count_(count) {}

  [[nodiscard]] std::string_view raw() const noexcept { return raw_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] iterator begin() const noexcept { return {raw_, raw_.empty() ? std::size_t{0} : std::size_t{1}}; }
  [[nodiscard]] iterator end() const noexcept { return {raw_, raw_.size()}; }

 private:
  std::string_view raw_;
  std::size_t count_ = 0;
};

// ---------------------------------------------------------------------------------------------------
// Weather: the .NET minimal API sample record.

// "Freezing", "Bracing", ... "Scorching": the ten summaries of the .NET sample, in its order.
[[nodiscard]] std::string_view weather_summary(std::size_t i) noexcept;  // i < kWeatherSummaries
inline constexpr std::size_t kWeatherSummaries = 10;

// temperatureF as the .NET sample computes it: 32 + (int)(temperatureC / 0.5556), truncating.
[[nodiscard]] constexpr int32_t fahrenheit_of(int32_t celsius) noexcept {
  return 32 + static_cast<int32_t>(celsius / 0.5556);
}

struct WeatherForecast {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  std::pmr::string date;  // "YYYY-MM-DD"
  int32_t temperature_c = 0;
  std::pmr::string summary;
  int32_t temperature_f = 0;

  WeatherForecast() = default;
  explicit WeatherForecast(const allocator_type& alloc) : date(alloc), summary(alloc) {}
  WeatherForecast(const WeatherForecast& other, const allocator_type& alloc)
      : date(other.date, alloc), temperature_c(other.temperature_c), summary(other.summary, alloc),
        temperature_f(other.temperature_f) {}
  WeatherForecast(WeatherForecast&& other, const allocator_type& alloc)
      : date(std::move(other.date), alloc), temperature_c(other.temperature_c),
        summary(std::move(other.summary), alloc), temperature_f(other.temperature_f) {}

  [[nodiscard]] allocator_type get_allocator() const noexcept { return date.get_allocator(); }
  friend bool operator==(const WeatherForecast&, const WeatherForecast&) = default;
};

struct WeatherView {
  JsonStringView date;
  int32_t temperature_c = 0;
  JsonStringView summary;
  int32_t temperature_f = 0;
};

// ---------------------------------------------------------------------------------------------------
// Repositories: GitHub-repository-like records of about 1-2 KB of JSON each.

struct Owner {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  std::pmr::string login;
  int64_t id = 0;
  std::pmr::string node_id;
  std::pmr::string avatar_url;
  std::pmr::string html_url;
  std::pmr::string type;  // "User" or "Organization"
  bool site_admin = false;

  Owner() = default;
  explicit Owner(const allocator_type& alloc);
  Owner(const Owner& other, const allocator_type& alloc);
  Owner(Owner&& other, const allocator_type& alloc);

  [[nodiscard]] allocator_type get_allocator() const noexcept { return login.get_allocator(); }
  friend bool operator==(const Owner&, const Owner&) = default;
};

struct License {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  std::pmr::string key;      // "mit"
  std::pmr::string name;     // "MIT License"
  std::pmr::string spdx_id;  // "MIT"

  License() = default;
  explicit License(const allocator_type& alloc) : key(alloc), name(alloc), spdx_id(alloc) {}
  License(const License& other, const allocator_type& alloc)
      : key(other.key, alloc), name(other.name, alloc), spdx_id(other.spdx_id, alloc) {}
  License(License&& other, const allocator_type& alloc)
      : key(std::move(other.key), alloc), name(std::move(other.name), alloc),
        spdx_id(std::move(other.spdx_id), alloc) {}

  [[nodiscard]] allocator_type get_allocator() const noexcept { return key.get_allocator(); }
  friend bool operator==(const License&, const License&) = default;
};

struct Repository {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  int64_t id = 0;
  std::pmr::string node_id;
  std::pmr::string name;
  std::pmr::string full_name;
  bool is_private = false;  // JSON key "private"
  Owner owner;
  std::pmr::string html_url;
  std::pmr::string description;
  bool fork = false;
  std::pmr::string url;
  std::pmr::string created_at;  // "2013-05-01T12:34:56Z"
  std::pmr::string updated_at;
  std::pmr::string pushed_at;
  std::optional<std::pmr::string> homepage;  // null in JSON when absent; may also be ""
  int64_t size = 0;
  int64_t stargazers_count = 0;
  int64_t watchers_count = 0;
  std::optional<std::pmr::string> language;
  int64_t forks_count = 0;
  int64_t open_issues_count = 0;
  bool archived = false;
  std::pmr::string default_branch;
  std::pmr::vector<std::pmr::string> topics;
  std::optional<License> license;
  double score = 0.0;

  Repository() = default;
  explicit Repository(const allocator_type& alloc);
  Repository(const Repository& other, const allocator_type& alloc);
  Repository(Repository&& other, const allocator_type& alloc);

  [[nodiscard]] allocator_type get_allocator() const noexcept { return node_id.get_allocator(); }
  friend bool operator==(const Repository&, const Repository&) = default;
};

struct OwnerView {
  JsonStringView login;
  int64_t id = 0;
  JsonStringView node_id;
  JsonStringView avatar_url;
  JsonStringView html_url;
  JsonStringView type;
  bool site_admin = false;
};

struct LicenseView {
  JsonStringView key;
  JsonStringView name;
  JsonStringView spdx_id;
};

struct RepositoryView {
  int64_t id = 0;
  JsonStringView node_id;
  JsonStringView name;
  JsonStringView full_name;
  bool is_private = false;
  OwnerView owner;
  JsonStringView html_url;
  JsonStringView description;
  bool fork = false;
  JsonStringView url;
  JsonStringView created_at;
  JsonStringView updated_at;
  JsonStringView pushed_at;
  std::optional<JsonStringView> homepage;
  int64_t size = 0;
  int64_t stargazers_count = 0;
  int64_t watchers_count = 0;
  std::optional<JsonStringView> language;
  int64_t forks_count = 0;
  int64_t open_issues_count = 0;
  bool archived = false;
  JsonStringView default_branch;
  JsonStringArrayView topics;
  std::optional<LicenseView> license;
  double score = 0.0;
};

// ---------------------------------------------------------------------------------------------------
// GitHub: jos's GitHubRepositoryDto, the flat records of his GitHub dummy API. 22 fields, all scalars or
// strings (no owner, topics or license object): the shape of GitHub's repository object once its nested
// parts are dropped. description, homepage and language may be null.

struct GithubRepository {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  int64_t id = 0;
  std::pmr::string node_id;
  std::pmr::string name;
  std::pmr::string full_name;
  bool is_private = false;  // JSON key "private"
  std::pmr::string html_url;
  std::optional<std::pmr::string> description;  // null now and then; escapes as Repository's
  bool fork = false;
  std::pmr::string url;
  std::pmr::string created_at;  // "2013-05-01T12:34:56Z"
  std::pmr::string updated_at;
  std::pmr::string pushed_at;
  std::optional<std::pmr::string> homepage;
  int64_t size = 0;
  int64_t stargazers_count = 0;  // jos's "stars"
  int64_t watchers_count = 0;
  std::optional<std::pmr::string> language;
  int64_t forks_count = 0;
  int64_t open_issues_count = 0;
  bool archived = false;
  std::pmr::string default_branch;
  std::pmr::string visibility;  // "public" or "private", as is_private says

  GithubRepository() = default;
  explicit GithubRepository(const allocator_type& alloc);
  GithubRepository(const GithubRepository& other, const allocator_type& alloc);
  GithubRepository(GithubRepository&& other, const allocator_type& alloc);

  [[nodiscard]] allocator_type get_allocator() const noexcept { return node_id.get_allocator(); }
  friend bool operator==(const GithubRepository&, const GithubRepository&) = default;
};

struct GithubRepositoryView {
  int64_t id = 0;
  JsonStringView node_id;
  JsonStringView name;
  JsonStringView full_name;
  bool is_private = false;
  JsonStringView html_url;
  std::optional<JsonStringView> description;
  bool fork = false;
  JsonStringView url;
  JsonStringView created_at;
  JsonStringView updated_at;
  JsonStringView pushed_at;
  std::optional<JsonStringView> homepage;
  int64_t size = 0;
  int64_t stargazers_count = 0;
  int64_t watchers_count = 0;
  std::optional<JsonStringView> language;
  int64_t forks_count = 0;
  int64_t open_issues_count = 0;
  bool archived = false;
  JsonStringView default_branch;
  JsonStringView visibility;
};

// The members of either GitHub form, in field order (fields::Github, fields::kGithub): the serializer,
// the checksum and the parsers walk this one list instead of each spelling the 22 fields out.
template <class Form>
constexpr auto github_members() noexcept {
  return std::tuple{&Form::id,         &Form::node_id,     &Form::name,           &Form::full_name,
                    &Form::is_private, &Form::html_url,    &Form::description,    &Form::fork,
                    &Form::url,        &Form::created_at,  &Form::updated_at,     &Form::pushed_at,
                    &Form::homepage,   &Form::size,        &Form::stargazers_count, &Form::watchers_count,
                    &Form::language,   &Form::forks_count, &Form::open_issues_count, &Form::archived,
                    &Form::default_branch, &Form::visibility};
}

// Calls `use` with member number `index` of `record`, `members` listing them as github_members() does,
// and returns true; false when `index` names no member (a key the record does not have).
template <class Record, class Members, class Use>
constexpr bool with_member(Record& record, const Members& members, std::size_t index, Use&& use) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return ((index == I && (use(record.*std::get<I>(members)), true)) || ...);
  }(std::make_index_sequence<std::tuple_size_v<Members>>{});
}

// jos's Version 8: a class of the three properties a caller wants (stars, name, url), the other 19 keys
// of each record left to the JSON library to skip. stars is the record's stargazers_count.
struct GithubStars {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  int64_t stars = 0;  // JSON key "stargazers_count"
  std::pmr::string name;
  std::pmr::string url;

  GithubStars() = default;
  explicit GithubStars(const allocator_type& alloc) : name(alloc), url(alloc) {}
  GithubStars(const GithubStars& other, const allocator_type& alloc)
      : stars(other.stars), name(other.name, alloc), url(other.url, alloc) {}
  GithubStars(GithubStars&& other, const allocator_type& alloc)
      : stars(other.stars), name(std::move(other.name), alloc), url(std::move(other.url), alloc) {}

  [[nodiscard]] allocator_type get_allocator() const noexcept { return name.get_allocator(); }
  friend bool operator==(const GithubStars&, const GithubStars&) = default;
};

struct GithubStarsView {
  int64_t stars = 0;
  JsonStringView name;
  JsonStringView url;
};

// In field order (fields::GithubStars, fields::kGithubStars).
template <class Form>
constexpr auto github_stars_members() noexcept {
  return std::tuple{&Form::stars, &Form::name, &Form::url};
}

}  // namespace ringlab::json
