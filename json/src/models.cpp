#include "ringlab/json/models.hpp"

#include <array>
#include <cstring>
#include <type_traits>

#include "ringlab/json/profiles.hpp"

namespace ringlab::json {

// The owning records keep the implicit copy and move (models.hpp): a vector of them grows by moving
// only while moving cannot throw.
template <class... Records>
constexpr bool moves_cannot_throw = (std::is_nothrow_move_constructible_v<Records> && ...);
static_assert(moves_cannot_throw<WeatherForecast, Owner, License, Repository, GithubRepository, GithubStars,
                                 ProfileStars>);

namespace {

constexpr std::array<std::string_view, kWeatherSummaries> kSummaries = {
    "Freezing", "Bracing", "Chilly", "Cool", "Mild", "Warm", "Balmy", "Hot", "Sweltering", "Scorching"};

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::optional<std::pmr::string> copy_optional(const std::optional<std::pmr::string>& from,
                                              const std::pmr::polymorphic_allocator<>& alloc) {
  if (!from) return std::nullopt;
  return std::pmr::string(*from, alloc);
}

std::optional<std::pmr::string> move_optional(std::optional<std::pmr::string>&& from,
                                              const std::pmr::polymorphic_allocator<>& alloc) {
  if (!from) return std::nullopt;
  return std::pmr::string(std::move(*from), alloc);
}

}  // namespace

std::string_view weather_summary(std::size_t i) noexcept { return i < kSummaries.size() ? kSummaries[i] : ""; }

// --- JsonStringArrayView ------------------------------------------------------------------------------

JsonStringArrayView::iterator::iterator(std::string_view raw, std::size_t from) noexcept : raw_(raw), next_(from) {
  ++*this;
}

// Finds the string that starts at or after next_ (skipping whitespace and commas) and makes it current;
// at ']' or the end of raw_, becomes the end iterator. Escaped quotes are recognised by counting the
// backslashes before a quote.
JsonStringArrayView::iterator& JsonStringArrayView::iterator::operator++() noexcept {
  std::size_t i = next_;
  while (i < raw_.size() && (is_space(raw_[i]) || raw_[i] == ',')) ++i;
  if (i >= raw_.size() || raw_[i] != '"') {
    next_ = raw_.size();
    current_ = {};
    return *this;
  }
  const std::size_t start = i + 1;
  std::size_t close = start;
  while (true) {
    const void* quote = std::memchr(raw_.data() + close, '"', raw_.size() - close);
    if (quote == nullptr) {  // not a valid array: stop
      next_ = raw_.size();
      current_ = {};
      return *this;
    }
    close = static_cast<std::size_t>(static_cast<const char*>(quote) - raw_.data());
    std::size_t backslashes = 0;
    while (close - backslashes > start && raw_[close - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) break;
    ++close;
  }
  const std::string_view text = raw_.substr(start, close - start);
  current_ = JsonStringView{text, text.find('\\') != std::string_view::npos};
  next_ = close + 1;
  return *this;
}

// --- allocator-extended constructors --------------------------------------------------------------------

Owner::Owner(const allocator_type& alloc)
    : login(alloc), node_id(alloc), avatar_url(alloc), html_url(alloc), type(alloc) {}

Owner::Owner(const Owner& other, const allocator_type& alloc)
    : login(other.login, alloc), id(other.id), node_id(other.node_id, alloc), avatar_url(other.avatar_url, alloc),
      html_url(other.html_url, alloc), type(other.type, alloc), site_admin(other.site_admin) {}

Owner::Owner(Owner&& other, const allocator_type& alloc)
    : login(std::move(other.login), alloc), id(other.id), node_id(std::move(other.node_id), alloc),
      avatar_url(std::move(other.avatar_url), alloc), html_url(std::move(other.html_url), alloc),
      type(std::move(other.type), alloc), site_admin(other.site_admin) {}

Repository::Repository(const allocator_type& alloc)
    : node_id(alloc), name(alloc), full_name(alloc), owner(alloc), html_url(alloc), description(alloc), url(alloc),
      created_at(alloc), updated_at(alloc), pushed_at(alloc), default_branch(alloc), topics(alloc) {}

Repository::Repository(const Repository& other, const allocator_type& alloc)
    : id(other.id), node_id(other.node_id, alloc), name(other.name, alloc), full_name(other.full_name, alloc),
      is_private(other.is_private), owner(other.owner, alloc), html_url(other.html_url, alloc),
      description(other.description, alloc), fork(other.fork), url(other.url, alloc),
      created_at(other.created_at, alloc), updated_at(other.updated_at, alloc), pushed_at(other.pushed_at, alloc),
      homepage(copy_optional(other.homepage, alloc)), size(other.size), stargazers_count(other.stargazers_count),
      watchers_count(other.watchers_count), language(copy_optional(other.language, alloc)),
      forks_count(other.forks_count), open_issues_count(other.open_issues_count), archived(other.archived),
      default_branch(other.default_branch, alloc), topics(other.topics, alloc), score(other.score) {
  if (other.license) license.emplace(*other.license, alloc);
}

Repository::Repository(Repository&& other, const allocator_type& alloc)
    : id(other.id), node_id(std::move(other.node_id), alloc), name(std::move(other.name), alloc),
      full_name(std::move(other.full_name), alloc), is_private(other.is_private), owner(std::move(other.owner), alloc),
      html_url(std::move(other.html_url), alloc), description(std::move(other.description), alloc), fork(other.fork),
      url(std::move(other.url), alloc), created_at(std::move(other.created_at), alloc),
      updated_at(std::move(other.updated_at), alloc), pushed_at(std::move(other.pushed_at), alloc),
      homepage(move_optional(std::move(other.homepage), alloc)), size(other.size),
      stargazers_count(other.stargazers_count), watchers_count(other.watchers_count),
      language(move_optional(std::move(other.language), alloc)), forks_count(other.forks_count),
      open_issues_count(other.open_issues_count), archived(other.archived),
      default_branch(std::move(other.default_branch), alloc), topics(std::move(other.topics), alloc),
      score(other.score) {
  if (other.license) license.emplace(std::move(*other.license), alloc);
}

GithubRepository::GithubRepository(const allocator_type& alloc)
    : node_id(alloc), name(alloc), full_name(alloc), html_url(alloc), url(alloc), created_at(alloc),
      updated_at(alloc), pushed_at(alloc), default_branch(alloc), visibility(alloc) {}

GithubRepository::GithubRepository(const GithubRepository& other, const allocator_type& alloc)
    : id(other.id), node_id(other.node_id, alloc), name(other.name, alloc), full_name(other.full_name, alloc),
      is_private(other.is_private), html_url(other.html_url, alloc),
      description(copy_optional(other.description, alloc)), fork(other.fork), url(other.url, alloc),
      created_at(other.created_at, alloc), updated_at(other.updated_at, alloc), pushed_at(other.pushed_at, alloc),
      homepage(copy_optional(other.homepage, alloc)), size(other.size), stargazers_count(other.stargazers_count),
      watchers_count(other.watchers_count), language(copy_optional(other.language, alloc)),
      forks_count(other.forks_count), open_issues_count(other.open_issues_count), archived(other.archived),
      default_branch(other.default_branch, alloc), visibility(other.visibility, alloc) {}

GithubRepository::GithubRepository(GithubRepository&& other, const allocator_type& alloc)
    : id(other.id), node_id(std::move(other.node_id), alloc), name(std::move(other.name), alloc),
      full_name(std::move(other.full_name), alloc), is_private(other.is_private),
      html_url(std::move(other.html_url), alloc), description(move_optional(std::move(other.description), alloc)),
      fork(other.fork), url(std::move(other.url), alloc), created_at(std::move(other.created_at), alloc),
      updated_at(std::move(other.updated_at), alloc), pushed_at(std::move(other.pushed_at), alloc),
      homepage(move_optional(std::move(other.homepage), alloc)), size(other.size),
      stargazers_count(other.stargazers_count), watchers_count(other.watchers_count),
      language(move_optional(std::move(other.language), alloc)), forks_count(other.forks_count),
      open_issues_count(other.open_issues_count), archived(other.archived),
      default_branch(std::move(other.default_branch), alloc), visibility(std::move(other.visibility), alloc) {}

}  // namespace ringlab::json
