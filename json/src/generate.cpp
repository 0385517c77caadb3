#include "ringlab/json/generate.hpp"

#include <array>
#include <charconv>
#include <string_view>

namespace ringlab::json {

namespace {

// Streams of record_rng(): weather, repositories and github records must not share draws.
constexpr uint64_t kWeatherStream = 1;
constexpr uint64_t kRepositoryStream = 2;
constexpr uint64_t kGithubStream = 3;

constexpr uint64_t mix64(uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// --- text helpers (append into a pmr::string; no temporaries) ---------------------------------------

void append_uint(std::pmr::string& out, uint64_t value) {
  char digits[20];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;  // 20 digits hold any uint64_t
  out.append(digits, end);
}

void append_two_digits(std::pmr::string& out, unsigned value) {
  out.push_back(static_cast<char>('0' + value / 10));
  out.push_back(static_cast<char>('0' + value % 10));
}

struct CivilDate {
  int64_t year;
  unsigned month;
  unsigned day;
};

// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
constexpr CivilDate civil_from_days(int64_t days) noexcept {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = static_cast<int64_t>(yoe) + era * 400 + (month <= 2 ? 1 : 0);
  return {year, month, day};
}

// "YYYY-MM-DD"; years stay below 10000 (callers keep them there).
void append_date(std::pmr::string& out, int64_t days_since_epoch) {
  const CivilDate date = civil_from_days(days_since_epoch);
  const auto year = static_cast<unsigned>(date.year);
  append_two_digits(out, year / 100);
  append_two_digits(out, year % 100);
  out.push_back('-');
  append_two_digits(out, date.month);
  out.push_back('-');
  append_two_digits(out, date.day);
}

// "YYYY-MM-DDTHH:MM:SSZ"
void append_timestamp(std::pmr::string& out, int64_t seconds_since_epoch) {
  append_date(out, seconds_since_epoch / 86400);
  const auto in_day = static_cast<unsigned>(seconds_since_epoch % 86400);
  out.push_back('T');
  append_two_digits(out, in_day / 3600);
  out.push_back(':');
  append_two_digits(out, in_day / 60 % 60);
  out.push_back(':');
  append_two_digits(out, in_day % 60);
  out.push_back('Z');
}

// GitHub's legacy node ids are base64 of "<len>:<Type><id>", e.g. "010:Repository1296269".
void append_node_id(std::pmr::string& out, std::string_view prefix, uint64_t id) {
  char plain[48];
  std::size_t n = prefix.copy(plain, 24);
  n = static_cast<std::size_t>(std::to_chars(plain + n, plain + sizeof plain, id).ptr - plain);
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t triple = (static_cast<uint8_t>(plain[i]) << 16) | (static_cast<uint8_t>(plain[i + 1]) << 8) |
                            static_cast<uint8_t>(plain[i + 2]);
    out.push_back(kAlphabet[triple >> 18]);
    out.push_back(kAlphabet[(triple >> 12) & 63]);
    out.push_back(kAlphabet[(triple >> 6) & 63]);
    out.push_back(kAlphabet[triple & 63]);
  }
  if (n - i == 1) {
    const uint32_t one = static_cast<uint8_t>(plain[i]) << 16;
    out.push_back(kAlphabet[one >> 18]);
    out.push_back(kAlphabet[(one >> 12) & 63]);
    out.append("==");
  } else if (n - i == 2) {
    const uint32_t two = (static_cast<uint8_t>(plain[i]) << 16) | (static_cast<uint8_t>(plain[i + 1]) << 8);
    out.push_back(kAlphabet[two >> 18]);
    out.push_back(kAlphabet[(two >> 12) & 63]);
    out.push_back(kAlphabet[(two >> 6) & 63]);
    out.push_back('=');
  }
}

template <std::size_t N>
std::string_view pick(SplitMix64& rng, const std::array<std::string_view, N>& from) {
  return from[rng.below(N)];
}

// --- vocabulary ----------------------------------------------------------------------------------

constexpr std::array<std::string_view, 24> kLogins = {
    "octocat",   "torvalds",  "gaearon",   "sindresorhus", "tj",       "addyosmani", "mitsuhiko", "antirez",
    "bkaradzic", "ocornut",   "lemire",    "axboe",        "nodejs",   "kubernetes", "rust-lang", "microsoft",
    "golang",    "facebook",  "apache",    "mozilla",      "netflix",  "cloudflare", "h2o",       "nginx"};

constexpr std::array<std::string_view, 20> kNameFirst = {
    "swift", "tiny",  "async", "fast",   "simple", "lazy",  "micro", "hyper", "open",  "deep",
    "quick", "smart", "zero",  "silent", "rapid",  "plain", "clean", "solid", "light", "wild"};

constexpr std::array<std::string_view, 20> kNameSecond = {
    "parser", "server", "cache", "router", "engine", "queue",  "store",  "proxy", "client", "loader",
    "ring",   "graph",  "shell", "buffer", "lexer",  "socket", "bridge", "pool",  "index",  "stream"};

constexpr std::array<std::string_view, 8> kNameSuffix = {"", "", "", "-rs", "-go", "-cpp", "-js", "-py"};

constexpr std::array<std::string_view, 48> kWords = {
    "a",         "fast",     "library",   "for",      "parsing",    "streaming", "JSON",     "over",
    "io_uring",  "with",     "zero",      "copy",     "buffers",    "and",       "minimal",  "allocations",
    "the",       "server",   "handles",   "thousands", "of",        "requests",  "per",      "second",
    "without",   "locks",    "written",   "in",       "modern",     "C++",       "tested",   "on",
    "Linux",     "kernels",  "benchmarks", "show",    "latency",    "below",     "one",      "millisecond",
    "built",     "around",   "an",        "event",    "loop",       "that",      "never",    "blocks"};

// Words whose UTF-8 is not ASCII: serialized as \u escapes, so parsing must unescape them.
constexpr std::array<std::string_view, 6> kAccented = {"caf\xC3\xA9",      "na\xC3\xAFve",   "r\xC3\xA9sum\xC3\xA9",
                                                       "Z\xC3\xBCrich",    "fa\xC3\xA7" "ade", "cr\xC3\xA8me"};

constexpr std::array<std::string_view, 12> kLanguages = {"C", "C++", "Rust", "Go", "Python", "JavaScript",
                                                         "TypeScript", "Java", "C#", "Zig", "Shell", "Ruby"};

constexpr std::array<std::string_view, 23> kTopics = {
    "json",       "http",        "io-uring",  "linux",  "networking", "performance", "parser",    "server",
    "client",     "benchmark",   "simd",      "async",  "cpp",        "rust",        "golang",    "database",
    "cache",      "compression", "security",  "cli",    "library",    "embedded",    "webassembly"};

struct LicenseText {
  std::string_view key;
  std::string_view name;
  std::string_view spdx_id;
};
// GitHub's own names: the BSD one carries quotes, hence escapes.
constexpr std::array<LicenseText, 6> kLicenses = {{
    {"mit", "MIT License", "MIT"},
    {"apache-2.0", "Apache License 2.0", "Apache-2.0"},
    {"gpl-3.0", "GNU General Public License v3.0", "GPL-3.0"},
    {"bsd-3-clause", "BSD 3-Clause \"New\" or \"Revised\" License", "BSD-3-Clause"},
    {"mpl-2.0", "Mozilla Public License 2.0", "MPL-2.0"},
    {"other", "Other", "NOASSERTION"},
}};

void make_description(SplitMix64& rng, std::pmr::string& out) {
  out.clear();
  const uint64_t words = 20 + rng.below(80);
  const uint64_t quoted_at = rng.chance(1, 4) ? rng.below(words) : words;
  const uint64_t path_at = rng.chance(1, 6) ? rng.below(words) : words;
  const uint64_t accent_at = rng.chance(1, 5) ? rng.below(words) : words;
  const uint64_t newline_at = rng.chance(1, 5) ? rng.below(words) : words;
  const uint64_t emoji_at = rng.chance(1, 20) ? rng.below(words) : words;
  const uint64_t tab_at = rng.chance(1, 30) ? rng.below(words) : words;
  for (uint64_t w = 0; w < words; ++w) {
    if (w > 0) out.push_back(w == newline_at ? '\n' : w == tab_at ? '\t' : ' ');
    if (w == quoted_at) {
      out.push_back('"');
      out.append(pick(rng, kWords));
      out.push_back('"');
    } else if (w == path_at) {
      out.append("C:\\tools\\");
      out.append(pick(rng, kWords));
    } else if (w == accent_at) {
      out.append(pick(rng, kAccented));
    } else if (w == emoji_at) {
      out.append("\xF0\x9F\x9A\x80");  // U+1F680, a surrogate pair once escaped
    } else {
      out.append(pick(rng, kWords));
    }
  }
  out.push_back('.');
}

// The fields a Repository and a GithubRepository share, node_id to default_branch, drawn in the order
// fill_repository always drew them (so that its records stay what they were). `out.id` is set; `login`
// is the owner's; `description` is the record's description text.
template <class Repo>
void fill_shared_fields(SplitMix64& rng, std::string_view login, Repo& out, std::pmr::string& description) {
  out.node_id.clear();
  append_node_id(out.node_id, "010:Repository", static_cast<uint64_t>(out.id));
  out.name.assign(pick(rng, kNameFirst));
  out.name.push_back('-');
  out.name.append(pick(rng, kNameSecond));
  out.name.append(pick(rng, kNameSuffix));
  out.full_name.assign(login);
  out.full_name.push_back('/');
  out.full_name.append(out.name);
  out.is_private = rng.chance(1, 20);
  out.html_url.assign("https://github.com/");
  out.html_url.append(out.full_name);
  make_description(rng, description);
  out.fork = rng.chance(1, 8);
  out.url.assign("https://api.github.com/repos/");
  out.url.append(out.full_name);

  // 2008-01-01 .. 2023-12-31, then updates and pushes up to a few years later.
  const int64_t created = rng.between(1'199'145'600, 1'703'980'800);
  const int64_t updated = created + rng.between(0, 3 * 365 * 86400);
  const int64_t pushed = created + rng.between(0, updated - created + 1);
  out.created_at.clear();
  append_timestamp(out.created_at, created);
  out.updated_at.clear();
  append_timestamp(out.updated_at, updated);
  out.pushed_at.clear();
  append_timestamp(out.pushed_at, pushed);

  const uint64_t homepage_kind = rng.below(10);  // 0-2: null, 3: "", 4-9: a URL
  if (homepage_kind < 3) {
    out.homepage.reset();
  } else {
    if (!out.homepage) out.homepage.emplace(out.get_allocator());
    out.homepage->clear();
    if (homepage_kind > 3) {
      out.homepage->append("https://");
      out.homepage->append(out.name);
      out.homepage->append(".example.org/");
    }
  }

  out.size = rng.between(0, 500'000);
  out.stargazers_count = rng.between(0, rng.between(1, 100'000));
  out.watchers_count = out.stargazers_count;  // as GitHub reports them
  if (rng.chance(3, 20)) {
    out.language.reset();
  } else {
    if (!out.language) out.language.emplace(out.get_allocator());
    out.language->assign(pick(rng, kLanguages));
  }
  out.forks_count = rng.between(0, out.stargazers_count / 4 + 1);
  out.open_issues_count = rng.between(0, 200);
  out.archived = rng.chance(1, 12);
  const uint64_t branch = rng.below(20);
  out.default_branch.assign(branch < 14 ? "main" : branch < 19 ? "master" : "develop");
}

}  // namespace

SplitMix64 record_rng(uint64_t stream, std::size_t index) noexcept {
  return SplitMix64(mix64(mix64(kDataSeed ^ stream) + 0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(index) + 1)));
}

// --- weather ---------------------------------------------------------------------------------------

void fill_weather(std::size_t index, WeatherForecast& out) {
  // 2024-01-01 plus `index` days, wrapping after ~7940 years so the year keeps four digits.
  constexpr int64_t kFirstDay = 19723;  // days from 1970-01-01 to 2024-01-01
  constexpr uint64_t kDayCycle = 2'900'000;
  SplitMix64 rng = record_rng(kWeatherStream, index);
  out.date.clear();
  append_date(out.date, kFirstDay + static_cast<int64_t>(index % kDayCycle));
  out.temperature_c = static_cast<int32_t>(rng.between(-20, 55));
  out.summary.assign(weather_summary(rng.below(kWeatherSummaries)));
  out.temperature_f = fahrenheit_of(out.temperature_c);
}

// --- repositories ----------------------------------------------------------------------------------

void fill_repository(std::size_t index, Repository& out) {
  SplitMix64 rng = record_rng(kRepositoryStream, index);
  out.id = static_cast<int64_t>(100'000'000 + static_cast<uint64_t>(index % 1'000'000'000) * 1'000 + rng.below(1'000));

  Owner& owner = out.owner;
  const bool organization = rng.chance(1, 5);
  owner.login.assign(pick(rng, kLogins));
  if (rng.chance(1, 2)) append_uint(owner.login, rng.below(1'000));
  owner.id = rng.between(1'000, 150'000'000);
  owner.node_id.clear();
  append_node_id(owner.node_id, organization ? "012:Organization" : "04:User", static_cast<uint64_t>(owner.id));
  owner.avatar_url.assign("https://avatars.githubusercontent.com/u/");
  append_uint(owner.avatar_url, static_cast<uint64_t>(owner.id));
  owner.avatar_url.append("?v=4");
  owner.html_url.assign("https://github.com/");
  owner.html_url.append(owner.login);
  owner.type.assign(organization ? "Organization" : "User");
  owner.site_admin = rng.chance(1, 40);

  fill_shared_fields(rng, owner.login, out, out.description);

  // Up to six distinct topics: a stride through a prime-sized list never repeats.
  const auto topics = static_cast<std::size_t>(rng.below(7));
  const uint64_t first_topic = rng.below(kTopics.size());
  const uint64_t stride = 1 + rng.below(kTopics.size() - 1);
  if (out.topics.size() > topics) out.topics.resize(topics);
  for (std::size_t t = 0; t < topics; ++t) {
    const std::string_view topic = kTopics[(first_topic + t * stride) % kTopics.size()];
    if (t < out.topics.size()) {
      out.topics[t].assign(topic);
    } else {
      out.topics.emplace_back(topic);
    }
  }

  if (rng.chance(1, 5)) {
    out.license.reset();
  } else {
    const LicenseText& text = kLicenses[rng.below(kLicenses.size())];
    if (!out.license) out.license.emplace(out.get_allocator());
    out.license->key.assign(text.key);
    out.license->name.assign(text.name);
    out.license->spdx_id.assign(text.spdx_id);
  }
  // Thousandths: their shortest decimal text reads back to the same double.
  out.score = static_cast<double>(rng.below(100'000)) / 1000.0;
}

// --- github (jos's flat records) ---------------------------------------------------------------------

void fill_github(std::size_t index, GithubRepository& out) {
  SplitMix64 rng = record_rng(kGithubStream, index);
  out.id = static_cast<int64_t>(200'000'000 + static_cast<uint64_t>(index % 1'000'000'000) * 1'000 + rng.below(1'000));
  char login[40];
  std::size_t login_size = pick(rng, kLogins).copy(login, 24);
  if (rng.chance(1, 2)) {
    const char* end = std::to_chars(login + login_size, login + sizeof login, rng.below(1'000)).ptr;
    login_size = static_cast<std::size_t>(end - login);
  }
  if (!out.description) out.description.emplace(out.get_allocator());
  fill_shared_fields(rng, std::string_view(login, login_size), out, *out.description);
  if (rng.chance(1, 10)) out.description.reset();  // GitHub gives null for a repository without one
  out.visibility.assign(out.is_private ? "private" : "public");
}

}  // namespace ringlab::json
