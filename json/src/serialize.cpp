#include "ringlab/json/serialize.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <tuple>
#include <utility>

#include "ringlab/json/fields.hpp"
#include "record_loop.hpp"

namespace ringlab::json {

namespace {

// What a byte needs in a JSON string: 0 nothing, 1 an escape (control, quote, backslash), 2 it starts
// (or continues) a non-ASCII character.
constexpr std::array<uint8_t, 256> kEscapeClass = [] {
  std::array<uint8_t, 256> table{};
  for (unsigned c = 0; c < 0x20; ++c) table[c] = 1;
  table['"'] = 1;
  table['\\'] = 1;
  for (unsigned c = 0x80; c < 0x100; ++c) table[c] = 2;
  return table;
}();

constexpr std::string_view kHex = "0123456789ABCDEF";

void append_u_escape(std::string& out, uint32_t unit) {
  const char text[6] = {'\\', 'u', kHex[(unit >> 12) & 0xF], kHex[(unit >> 8) & 0xF], kHex[(unit >> 4) & 0xF],
                        kHex[unit & 0xF]};
  out.append(text, sizeof text);
}

// Decodes the UTF-8 character at text[i]; returns its code point and sets `length`. Invalid sequences
// (bad lead or continuation byte, overlong form, surrogate, beyond U+10FFFF, cut short) give U+FFFD
// with length 1, so that the next byte is looked at afresh.
uint32_t decode_utf8(std::string_view text, std::size_t i, std::size_t& length) {
  const auto lead = static_cast<uint8_t>(text[i]);
  std::size_t need = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1, cp = lead & 0x1F, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2, cp = lead & 0x0F, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3, cp = lead & 0x07, min = 0x10000;
  } else {
    length = 1;
    return 0xFFFD;
  }
  if (i + need >= text.size()) {  // cut short
    length = 1;
    return 0xFFFD;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    const auto next = static_cast<uint8_t>(text[i + k]);
    if ((next & 0xC0) != 0x80) {
      length = 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (next & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    length = 1;
    return 0xFFFD;
  }
  length = need + 1;
  return cp;
}

template <class Integer>
void append_integer(std::string& out, Integer value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, result.ptr);
}

void append_double(std::string& out, double value) {
  char digits[32];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);  // shortest round-trip form
  out.append(digits, result.ptr);
}

void append_bool(std::string& out, bool value) { out.append(value ? "true" : "false"); }

void append_optional_string(std::string& out, const std::optional<std::pmr::string>& value) {
  if (value) {
    append_json_string(out, *value);
  } else {
    out.append("null");
  }
}

// One member of a record whose fields are listed as a table (github_members), by its type.
void append_value(std::string& out, int64_t value) { append_integer(out, value); }
void append_value(std::string& out, bool value) { append_bool(out, value); }
void append_value(std::string& out, const std::pmr::string& value) { append_json_string(out, value); }
void append_value(std::string& out, const std::optional<std::pmr::string>& value) {
  append_optional_string(out, value);
}

// {"name":value,...}: the members of `record` in the order of `members`, each under its name in `names`.
template <class Record, class Members, std::size_t N>
void append_members(std::string& out, const Record& record, const Members& members,
                    const std::array<std::string_view, N>& names) {
  static_assert(std::tuple_size_v<Members> == N, "one name per member");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((out.append(I == 0 ? "{\"" : ",\""), out.append(names[I]), out.append("\":"),
      append_value(out, record.*std::get<I>(members))),
     ...);
  }(std::make_index_sequence<N>{});
  out.push_back('}');
}

}  // namespace

void append_json_string(std::string& out, std::string_view utf8) {
  out.push_back('"');
  std::size_t run = 0;  // first byte not copied yet
  std::size_t i = 0;
  while (i < utf8.size()) {
    const auto c = static_cast<uint8_t>(utf8[i]);
    const uint8_t kind = kEscapeClass[c];
    if (kind == 0) {
      ++i;
      continue;
    }
    out.append(utf8.data() + run, i - run);
    if (kind == 1) {
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        default: append_u_escape(out, c); break;
      }
      ++i;
    } else {
      std::size_t length = 1;
      const uint32_t cp = decode_utf8(utf8, i, length);
      if (cp >= 0x10000) {
        const uint32_t v = cp - 0x10000;
        append_u_escape(out, 0xD800 + (v >> 10));
        append_u_escape(out, 0xDC00 + (v & 0x3FF));
      } else {
        append_u_escape(out, cp);
      }
      i += length;
    }
    run = i;
  }
  out.append(utf8.data() + run, utf8.size() - run);
  out.push_back('"');
}

void append_json(std::string& out, const WeatherForecast& record) {
  out.append("{\"date\":");
  append_json_string(out, record.date);
  out.append(",\"temperatureC\":");
  append_integer(out, record.temperature_c);
  out.append(",\"summary\":");
  append_json_string(out, record.summary);
  out.append(",\"temperatureF\":");
  append_integer(out, record.temperature_f);
  out.push_back('}');
}

void append_json(std::string& out, const Repository& record) {
  out.append("{\"id\":");
  append_integer(out, record.id);
  out.append(",\"node_id\":");
  append_json_string(out, record.node_id);
  out.append(",\"name\":");
  append_json_string(out, record.name);
  out.append(",\"full_name\":");
  append_json_string(out, record.full_name);
  out.append(",\"private\":");
  append_bool(out, record.is_private);

  const Owner& owner = record.owner;
  out.append(",\"owner\":{\"login\":");
  append_json_string(out, owner.login);
  out.append(",\"id\":");
  append_integer(out, owner.id);
  out.append(",\"node_id\":");
  append_json_string(out, owner.node_id);
  out.append(",\"avatar_url\":");
  append_json_string(out, owner.avatar_url);
  out.append(",\"html_url\":");
  append_json_string(out, owner.html_url);
  out.append(",\"type\":");
  append_json_string(out, owner.type);
  out.append(",\"site_admin\":");
  append_bool(out, owner.site_admin);
  out.push_back('}');

  out.append(",\"html_url\":");
  append_json_string(out, record.html_url);
  out.append(",\"description\":");
  append_json_string(out, record.description);
  out.append(",\"fork\":");
  append_bool(out, record.fork);
  out.append(",\"url\":");
  append_json_string(out, record.url);
  out.append(",\"created_at\":");
  append_json_string(out, record.created_at);
  out.append(",\"updated_at\":");
  append_json_string(out, record.updated_at);
  out.append(",\"pushed_at\":");
  append_json_string(out, record.pushed_at);
  out.append(",\"homepage\":");
  append_optional_string(out, record.homepage);
  out.append(",\"size\":");
  append_integer(out, record.size);
  out.append(",\"stargazers_count\":");
  append_integer(out, record.stargazers_count);
  out.append(",\"watchers_count\":");
  append_integer(out, record.watchers_count);
  out.append(",\"language\":");
  append_optional_string(out, record.language);
  out.append(",\"forks_count\":");
  append_integer(out, record.forks_count);
  out.append(",\"open_issues_count\":");
  append_integer(out, record.open_issues_count);
  out.append(",\"archived\":");
  append_bool(out, record.archived);
  out.append(",\"default_branch\":");
  append_json_string(out, record.default_branch);
  out.append(",\"topics\":[");
  for (std::size_t t = 0; t < record.topics.size(); ++t) {
    if (t > 0) out.push_back(',');
    append_json_string(out, record.topics[t]);
  }
  out.append("],\"license\":");
  if (record.license) {
    out.append("{\"key\":");
    append_json_string(out, record.license->key);
    out.append(",\"name\":");
    append_json_string(out, record.license->name);
    out.append(",\"spdx_id\":");
    append_json_string(out, record.license->spdx_id);
    out.push_back('}');
  } else {
    out.append("null");
  }
  out.append(",\"score\":");
  append_double(out, record.score);
  out.push_back('}');
}

void append_json(std::string& out, const GithubRepository& record) {
  append_members(out, record, github_members<GithubRepository>(), fields::kGithub);
}

void append_weather_json(std::string& out, std::size_t count) {
  append_body(out, count, BodyLayout::array, fill_weather);
}
void append_repos_json(std::string& out, std::size_t count) {
  append_body(out, count, BodyLayout::array, fill_repository);
}
void append_github_json(std::string& out, std::size_t count) {
  append_body(out, count, BodyLayout::array, fill_github);
}
void append_weather_ndjson(std::string& out, std::size_t count) {
  append_body(out, count, BodyLayout::lines, fill_weather);
}
void append_repos_ndjson(std::string& out, std::size_t count) {
  append_body(out, count, BodyLayout::lines, fill_repository);
}
void append_github_ndjson(std::string& out, std::size_t count) {
  append_body(out, count, BodyLayout::lines, fill_github);
}

}  // namespace ringlab::json
