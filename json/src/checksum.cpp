#include "ringlab/json/checksum.hpp"

#include <bit>
#include <cstring>
#include <tuple>
#include <utility>

#include "ringlab/json/generate.hpp"
#include "ringlab/json/unescape.hpp"

namespace ringlab::json {

namespace {

// wyhash's mixing step: multiply into 128 bits, fold the halves.
inline uint64_t mix(uint64_t state, uint64_t word) noexcept {
  const detail::uint128 product =
      static_cast<detail::uint128>(state ^ 0xA0761D6478BD642FULL) * (word ^ 0xE7037ED1A0B428DBULL);
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t load_le(const char* bytes) noexcept {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof word);
  if constexpr (std::endian::native == std::endian::big) word = std::byteswap(word);
  return word;
}

class Hasher {
 public:
  explicit Hasher(uint64_t& state) noexcept : state_(state) {}

  void word(uint64_t w) noexcept { state_ = mix(state_, w); }
  void integer(int64_t value) noexcept { word(static_cast<uint64_t>(value)); }
  void boolean(bool value) noexcept { word(value ? 1 : 0); }
  void real(double value) noexcept { word(std::bit_cast<uint64_t>(value)); }

  void text(std::string_view bytes) noexcept {
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) word(load_le(bytes.data() + i));
    if (i < bytes.size()) {
      char tail[8] = {};
      std::memcpy(tail, bytes.data() + i, bytes.size() - i);
      word(load_le(tail));
    }
    word(bytes.size());
  }

  void text(const JsonStringView& view) noexcept {
    if (!view.has_escapes) {
      text(view.raw);
      return;
    }
    const uint64_t before = state_;
    Stream stream{*this};
    if (decode_json_string(view.raw, [&stream](std::string_view piece) { stream.put(piece); })) {
      stream.end();
    } else {
      state_ = before;  // not text the parser would accept: hash its raw bytes instead
      text(view.raw);
    }
  }

  template <class Text>
  void optional_text(const std::optional<Text>& value) noexcept {
    word(value ? 1 : 0);
    if (value) text(*value);
  }

  // One member of a record whose fields are listed as a table (github_members), by its type.
  void value(int64_t v) noexcept { integer(v); }
  void value(bool v) noexcept { boolean(v); }
  void value(const std::pmr::string& v) noexcept { text(std::string_view(v)); }
  void value(const JsonStringView& v) noexcept { text(v); }
  template <class Text>
  void value(const std::optional<Text>& v) noexcept {
    optional_text(v);
  }

 private:
  // The words text() would produce, fed a piece at a time (decoded escapes arrive in pieces).
  struct Stream {
    Hasher& hasher;
    uint64_t pending = 0;
    unsigned filled = 0;
    std::size_t length = 0;

    void put(std::string_view piece) noexcept {
      length += piece.size();
      std::size_t i = 0;
      // Top up a partly filled word, then take whole words straight from the piece: the pieces between
      // escapes are long runs of literal text.
      for (; filled != 0 && i < piece.size(); ++i) add_byte(piece[i]);
      for (; i + 8 <= piece.size(); i += 8) hasher.word(load_le(piece.data() + i));
      for (; i < piece.size(); ++i) add_byte(piece[i]);
    }
    void add_byte(char c) noexcept {
      pending |= static_cast<uint64_t>(static_cast<uint8_t>(c)) << (8 * filled);
      if (++filled == 8) {
        hasher.word(pending);
        pending = 0;
        filled = 0;
      }
    }
    void end() noexcept {
      if (filled > 0) hasher.word(pending);
      hasher.word(length);
    }
  };

  uint64_t& state_;
};

template <class Weather>
void add_weather(Hasher& h, const Weather& record) noexcept {
  h.text(record.date);
  h.integer(record.temperature_c);
  h.text(record.summary);
  h.integer(record.temperature_f);
}

void add_topics(Hasher& h, const std::pmr::vector<std::pmr::string>& topics) noexcept {
  h.word(topics.size());
  for (const auto& topic : topics) h.text(std::string_view(topic));
}

void add_topics(Hasher& h, const JsonStringArrayView& topics) noexcept {
  h.word(topics.size());
  for (const JsonStringView& topic : topics) h.text(topic);
}

template <class License>
void add_license(Hasher& h, const std::optional<License>& license) noexcept {
  h.word(license ? 1 : 0);
  if (!license) return;
  h.text(license->key);
  h.text(license->name);
  h.text(license->spdx_id);
}

template <class Repo>
void add_repository(Hasher& h, const Repo& record) noexcept {
  h.integer(record.id);
  h.text(record.node_id);
  h.text(record.name);
  h.text(record.full_name);
  h.boolean(record.is_private);
  h.text(record.owner.login);
  h.integer(record.owner.id);
  h.text(record.owner.node_id);
  h.text(record.owner.avatar_url);
  h.text(record.owner.html_url);
  h.text(record.owner.type);
  h.boolean(record.owner.site_admin);
  h.text(record.html_url);
  h.text(record.description);
  h.boolean(record.fork);
  h.text(record.url);
  h.text(record.created_at);
  h.text(record.updated_at);
  h.text(record.pushed_at);
  h.optional_text(record.homepage);
  h.integer(record.size);
  h.integer(record.stargazers_count);
  h.integer(record.watchers_count);
  h.optional_text(record.language);
  h.integer(record.forks_count);
  h.integer(record.open_issues_count);
  h.boolean(record.archived);
  h.text(record.default_branch);
  add_topics(h, record.topics);
  add_license(h, record.license);
  h.real(record.score);
}

// Every member of `record` in the order of `members`.
template <class Record, class Members>
void add_members(Hasher& h, const Record& record, const Members& members) noexcept {
  std::apply([&](auto... member) { (h.value(record.*member), ...); }, members);
}

template <class Record>
uint64_t checksum_of(std::span<const Record> records) noexcept {
  Checksum sum;
  for (const Record& record : records) sum.add(record);
  return sum.value();
}

}  // namespace

void Checksum::add(const WeatherForecast& record) noexcept {
  Hasher h(state_);
  add_weather(h, record);
  ++records_;
}

void Checksum::add(const WeatherView& record) noexcept {
  Hasher h(state_);
  add_weather(h, record);
  ++records_;
}

void Checksum::add(const Repository& record) noexcept {
  Hasher h(state_);
  add_repository(h, record);
  ++records_;
}

void Checksum::add(const RepositoryView& record) noexcept {
  Hasher h(state_);
  add_repository(h, record);
  ++records_;
}

void Checksum::add(const GithubRepository& record) noexcept {
  Hasher h(state_);
  add_members(h, record, github_members<GithubRepository>());
  ++records_;
}

void Checksum::add(const GithubRepositoryView& record) noexcept {
  Hasher h(state_);
  add_members(h, record, github_members<GithubRepositoryView>());
  ++records_;
}

void Checksum::add(const GithubStars& record) noexcept {
  Hasher h(state_);
  add_members(h, record, github_stars_members<GithubStars>());
  ++records_;
}

void Checksum::add(const GithubStarsView& record) noexcept {
  Hasher h(state_);
  add_members(h, record, github_stars_members<GithubStarsView>());
  ++records_;
}

void Checksum::add(const ProfileStars& record) noexcept {
  Hasher h(state_);
  add_members(h, record, profile_members<ProfileStars>());
  ++records_;
}

void Checksum::add(const ProfileStarsView& record) noexcept {
  Hasher h(state_);
  add_members(h, record, profile_members<ProfileStarsView>());
  ++records_;
}

uint64_t Checksum::value() const noexcept { return mix(state_, records_); }

uint64_t checksum(std::span<const WeatherForecast> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const WeatherView> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const Repository> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const RepositoryView> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const GithubRepository> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const GithubRepositoryView> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const GithubStars> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const GithubStarsView> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const ProfileStars> records) noexcept { return checksum_of(records); }
uint64_t checksum(std::span<const ProfileStarsView> records) noexcept { return checksum_of(records); }

uint64_t checksum_weather(std::size_t count) {
  Checksum sum;
  WeatherForecast scratch;
  for (std::size_t i = 0; i < count; ++i) {
    fill_weather(i, scratch);
    sum.add(scratch);
  }
  return sum.value();
}

uint64_t checksum_repos(std::size_t count) {
  Checksum sum;
  Repository scratch;
  for (std::size_t i = 0; i < count; ++i) {
    fill_repository(i, scratch);
    sum.add(scratch);
  }
  return sum.value();
}

uint64_t checksum_github(std::size_t count) {
  Checksum sum;
  GithubRepository scratch;
  for (std::size_t i = 0; i < count; ++i) {
    fill_github(i, scratch);
    sum.add(scratch);
  }
  return sum.value();
}

namespace {

// The checksum of the GithubStars a three-field parse makes of records 0..count-1 of `fill`'s payload.
template <class Record>
uint64_t three_fields_of(std::size_t count, void (*fill)(std::size_t, Record&)) {
  Checksum sum;
  Record scratch;
  GithubStars stars;
  for (std::size_t i = 0; i < count; ++i) {
    fill(i, scratch);
    stars.stars = scratch.stargazers_count;
    stars.name.assign(scratch.name);
    stars.url.assign(scratch.url);
    sum.add(stars);
  }
  return sum.value();
}

}  // namespace

uint64_t checksum_github_three_fields(std::size_t count) { return three_fields_of(count, &fill_github); }
uint64_t checksum_repos_three_fields(std::size_t count) { return three_fields_of(count, &fill_repository); }

uint64_t checksum_profiles(std::size_t count) {
  Checksum sum;
  ProfileRecord scratch;
  ProfileStars dto;
  for (std::size_t i = 0; i < count; ++i) {
    fill_profile(i, scratch);
    dto.name.assign(scratch.name);
    dto.url.assign(scratch.url);
    dto.stars = scratch.stars;
    sum.add(dto);
  }
  return sum.value();
}

}  // namespace ringlab::json
