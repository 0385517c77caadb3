// jos's records (profiles.hpp): drawn from their own stream of record_rng(), in the shape of his
// repositories.N.json (a json-generator.com template: company names in capitals, lorem ipsum, US
// addresses, coordinates with six decimals).
#include "ringlab/json/profiles.hpp"

#include <array>
#include <charconv>
#include <string_view>

#include "ringlab/json/generate.hpp"
#include "ringlab/json/serialize.hpp"
#include "record_loop.hpp"

namespace ringlab::json {

namespace {

// Weather, repositories and github records use streams 1 to 3 (generate.cpp).
constexpr uint64_t kProfileStream = 4;

constexpr std::array<std::string_view, 40> kLorem = {
    "lorem",   "ipsum",      "dolor",     "sit",       "amet",   "consectetur", "adipisicing", "elit",
    "sed",     "do",         "eiusmod",   "tempor",    "incididunt", "ut",      "labore",      "et",
    "dolore",  "magna",      "aliqua",    "enim",      "ad",     "minim",       "veniam",      "quis",
    "nostrud", "exercitation", "ullamco", "laboris",   "nisi",   "aliquip",     "ex",          "ea",
    "commodo", "consequat",  "duis",      "aute",      "irure",  "reprehenderit", "voluptate", "velit"};
constexpr std::array<std::string_view, 16> kCompanies = {
    "COMSTRUCT", "REALMO",  "NETROPIC", "GOGOL",    "QABOOS",   "BIZMATIC",  "CEMENTION", "IMKAN",
    "KOG",       "ENOMEN",  "GEOFORM",  "METROZ",   "ZOLAR",    "TELLIFLY",  "RENOVIZE",  "TERRAGEN"};
constexpr std::array<std::string_view, 3> kEyeColors = {"blue", "brown", "green"};
constexpr std::array<std::string_view, 2> kGenders = {"female", "male"};
constexpr std::array<std::string_view, 8> kStreets = {"Vine Street",  "Florence Avenue", "Clark Street",
                                                      "Reed Street",  "Euclid Avenue",   "Ivan Court",
                                                      "Lott Avenue",  "Classon Avenue"};
constexpr std::array<std::string_view, 8> kCities = {"Crenshaw", "Noxen",     "Gorham", "Coultervillle",
                                                     "Stockwell", "Maury",    "Axis",   "Sunriver"};
constexpr std::array<std::string_view, 8> kStates = {"Illinois", "Texas",  "Delaware", "District Of Columbia",
                                                     "Kansas",   "Indiana", "North Carolina", "Michigan"};
constexpr std::string_view kHexDigits = "0123456789abcdef";

template <std::size_t N>
std::string_view pick(SplitMix64& rng, const std::array<std::string_view, N>& from) {
  return from[rng.below(N)];
}

void append_number(std::string& out, uint64_t value, int width = 0) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  for (auto length = end - digits; length < width; ++length) out.push_back('0');
  out.append(digits, end);
}

void append_hex(SplitMix64& rng, std::string& out, std::size_t digits) {
  for (std::size_t i = 0; i < digits; ++i) out.push_back(kHexDigits[rng.below(16)]);
}

// Sentences of 4 to 15 lorem words, the first capitalised, ended by a full stop.
void append_sentences(SplitMix64& rng, std::string& out, uint64_t sentences) {
  for (uint64_t s = 0; s < sentences; ++s) {
    if (s > 0) out.push_back(' ');
    const uint64_t words = 4 + rng.below(12);
    for (uint64_t w = 0; w < words; ++w) {
      if (w > 0) out.push_back(' ');
      const std::size_t start = out.size();
      out.append(pick(rng, kLorem));
      if (w == 0) out[start] = static_cast<char>(out[start] - 'a' + 'A');
    }
    out.push_back('.');
  }
}

// A coordinate in [-limit, limit) with six decimals, as his files print them.
double coordinate(SplitMix64& rng, int64_t limit) {
  const int64_t micro = rng.between(-limit * 1'000'000, limit * 1'000'000);
  return static_cast<double>(micro) / 1e6;
}

void append_double(std::string& out, double value) {
  char digits[32];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;  // shortest round-trip form
  out.append(digits, end);
}

void append_key(std::string& out, std::string_view key, bool first = false) {
  out.append(first ? "{\"" : ",\"");
  out.append(key);
  out.append("\":");
}

}  // namespace

void fill_profile(std::size_t index, ProfileRecord& out) {
  SplitMix64 rng = record_rng(kProfileStream, index);
  out.stars = rng.between(0, 1000);
  out.company.assign(pick(rng, kCompanies));
  out.name.assign(pick(rng, kCompanies));
  out.url.assign("https://github.com/");
  out.url.append(pick(rng, kLorem));
  out.id.clear();
  append_hex(rng, out.id, 24);
  out.index = static_cast<int64_t>(index);
  out.guid.clear();
  for (const std::size_t group : {8, 4, 4, 4, 12}) {
    if (!out.guid.empty()) out.guid.push_back('-');
    append_hex(rng, out.guid, group);
  }
  out.is_active = rng.chance(1, 2);
  const uint64_t cents = 100'000 + rng.below(300'000);  // $1,000.00 to $3,999.99
  out.balance.assign("$");
  append_number(out.balance, cents / 100'000);
  out.balance.push_back(',');
  append_number(out.balance, cents / 100 % 1000, 3);
  out.balance.push_back('.');
  append_number(out.balance, cents % 100, 2);
  out.picture.assign("http://placehold.it/32x32");
  out.age = rng.between(20, 41);
  out.eye_color.assign(pick(rng, kEyeColors));
  out.gender.assign(pick(rng, kGenders));
  out.email.assign("marlagolden@");
  for (const char c : out.company) out.email.push_back(static_cast<char>(c - 'A' + 'a'));
  out.email.append(".com");
  out.phone.assign("+1 (");
  append_number(out.phone, 800 + rng.below(200));
  out.phone.append(") ");
  append_number(out.phone, 400 + rng.below(600));
  out.phone.push_back('-');
  append_number(out.phone, 2000 + rng.below(8000));
  out.address.clear();
  append_number(out.address, 100 + rng.below(900));
  out.address.push_back(' ');
  out.address.append(pick(rng, kStreets));
  out.address.append(", ");
  out.address.append(pick(rng, kCities));
  out.address.append(", ");
  out.address.append(pick(rng, kStates));
  out.address.append(", ");
  append_number(out.address, 100 + rng.below(9900));
  out.about.clear();
  append_sentences(rng, out.about, 3 + rng.below(5));
  out.about.append("\r\n");
  out.registered.clear();
  append_number(out.registered, 2014 + rng.below(6));
  out.registered.push_back('-');
  append_number(out.registered, 1 + rng.below(12), 2);
  out.registered.push_back('-');
  append_number(out.registered, 1 + rng.below(28), 2);
  out.registered.push_back('T');
  append_number(out.registered, rng.below(24), 2);
  out.registered.push_back(':');
  append_number(out.registered, rng.below(60), 2);
  out.registered.push_back(':');
  append_number(out.registered, rng.below(60), 2);
  out.registered.append(rng.chance(1, 2) ? " -01:00" : " -02:00");
  out.latitude = coordinate(rng, 90);
  out.longitude = coordinate(rng, 180);
  out.tags.resize(7);
  for (std::string& tag : out.tags) tag.assign(pick(rng, kLorem));
}

ProfileRecord make_profile(std::size_t index) {
  ProfileRecord record;
  fill_profile(index, record);
  return record;
}

void append_json(std::string& out, const ProfileRecord& record) {
  append_key(out, "stars", true);
  append_number(out, static_cast<uint64_t>(record.stars));
  const auto text = [&out](std::string_view key, std::string_view value) {
    append_key(out, key);
    append_json_string(out, value);
  };
  text("name", record.name);
  text("url", record.url);
  text("_id", record.id);
  append_key(out, "index");
  append_number(out, static_cast<uint64_t>(record.index));
  text("guid", record.guid);
  append_key(out, "isActive");
  out.append(record.is_active ? "true" : "false");
  text("balance", record.balance);
  text("picture", record.picture);
  append_key(out, "age");
  append_number(out, static_cast<uint64_t>(record.age));
  text("eyeColor", record.eye_color);
  text("gender", record.gender);
  text("company", record.company);
  text("email", record.email);
  text("phone", record.phone);
  text("address", record.address);
  text("about", record.about);
  text("registered", record.registered);
  append_key(out, "latitude");
  append_double(out, record.latitude);
  append_key(out, "longitude");
  append_double(out, record.longitude);
  append_key(out, "tags");
  out.push_back('[');
  for (std::size_t i = 0; i < record.tags.size(); ++i) {
    if (i > 0) out.push_back(',');
    append_json_string(out, record.tags[i]);
  }
  out.append("]}");
}

void append_profiles_json(std::string& out, std::size_t count) { append_body(out, count, BodyLayout::array, fill_profile); }
void append_profiles_ndjson(std::string& out, std::size_t count) { append_body(out, count, BodyLayout::lines, fill_profile); }

}  // namespace ringlab::json
