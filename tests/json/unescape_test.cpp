// tests json/include/ringlab/json/unescape.hpp: the view decoder must decode exactly as simdjson's
// get_string() does, or owning and viewing checksums of the same body would differ.
#include "ringlab/json/unescape.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include "ringlab/json/generate.hpp"

namespace json = ringlab::json;

namespace {

// What simdjson On-Demand makes of the JSON string "<raw>": its decoded bytes, or nullopt if rejected.
std::optional<std::string> simdjson_decode(std::string_view raw) {
  // Appended, not "\"" + text: GCC 12 at -O3 warns (-Wrestrict) on operator+(const char*, string).
  const simdjson::padded_string text(std::string("\"").append(raw).append("\""));
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(text).get(doc) != simdjson::SUCCESS) return std::nullopt;
  std::string_view decoded;
  if (doc.get_string().get(decoded) != simdjson::SUCCESS) return std::nullopt;
  return std::string(decoded);
}

std::optional<std::string> ours(std::string_view raw) {
  std::string out;
  if (!json::decode_json_string(raw, [&out](std::string_view piece) { out.append(piece); })) return std::nullopt;
  return out;
}

struct Row {
  std::string_view name;  // doctest 2.4.9 prints a const char* in INFO as a pointer
  std::string_view raw;
  std::optional<std::string_view> decoded;  // nullopt: invalid
};

const Row kRows[] = {
    {"plain text is unchanged", "plain", "plain"},
    {"empty text", "", ""},
    {"short escapes", R"(\"\\\/\b\f\n\r\t)", "\"\\/\b\f\n\r\t"},
    {"escape at the start and end", R"(\nab\n)", "\nab\n"},
    {"two-byte UTF-8 from \\u", R"(caf\u00e9)", "caf\xC3\xA9"},
    {"hex digits in either case", R"(\u00E9\u00e9)", "\xC3\xA9\xC3\xA9"},
    {"three-byte UTF-8 from \\u", R"(\u20AC)", "\xE2\x82\xAC"},
    {"NUL from \\u0000", R"(a\u0000b)", std::string_view("a\0b", 3)},
    {"surrogate pair is one four-byte character", R"(\uD83D\uDE80)", "\xF0\x9F\x9A\x80"},
    {"ASCII from \\u", R"(\u0041)", "A"},
    {"lone high surrogate", R"(\uD800)", std::nullopt},
    {"high surrogate then text", R"(\uD800x)", std::nullopt},
    {"high surrogate then a non-surrogate escape", R"(\uD800\u0041)", std::nullopt},
    {"lone low surrogate", R"(\uDC00)", std::nullopt},
    {"unknown escape", R"(\x)", std::nullopt},
    {"bad hex", R"(\u12G4)", std::nullopt},
    {"cut \\u", R"(\u12)", std::nullopt},
    {"trailing backslash", "ab\\", std::nullopt},
};

}  // namespace

TEST_CASE("decode_json_string decodes each row like the table says and like simdjson") {
  for (const Row& row : kRows) {
    INFO(row.name);
    const auto decoded = ours(row.raw);
    REQUIRE(decoded.has_value() == row.decoded.has_value());
    if (row.decoded) CHECK(*decoded == *row.decoded);
    const auto reference = simdjson_decode(row.raw);
    CHECK(reference.has_value() == decoded.has_value());
    if (reference && decoded) CHECK(*reference == *decoded);
  }
}

TEST_CASE("decode_json_string agrees with simdjson on random mixes of text and escapes") {
  // Pieces that are valid alone, and pieces that are not; random sequences of them cover escapes at
  // every position and next to each other.
  const std::vector<std::string_view> pieces = {
      "a",       "Zq",      "\xC3\xA9", "\xF0\x9F\x9A\x80", R"(\n)",     R"(\")",     R"(\\)",    R"(\/)",
      R"(\t)",   R"(\u00e9)", R"(\u20ac)", R"(\uD83D\uDE80)", R"(\u0000)", R"(\uDBFF\uDFFF)", R"(\x)",   R"(\u12)",
      R"(\uD800)", R"(\uDC00)", R"(\uD800\u0041)", R"(\uZZZZ)", "0123456789abcdef"};
  json::SplitMix64 rng(42);
  for (int round = 0; round < 3000; ++round) {
    std::string raw;
    const auto count = rng.below(6);
    for (uint64_t i = 0; i < count; ++i) raw.append(pieces[rng.below(pieces.size())]);
    INFO("raw: " << raw);
    const auto decoded = ours(raw);
    const auto reference = simdjson_decode(raw);
    REQUIRE(decoded.has_value() == reference.has_value());
    if (decoded) CHECK(*decoded == *reference);
  }
}

TEST_CASE("unescape replaces the output with the decoded text, for std and pmr strings") {
  std::string out = "old contents";
  CHECK(json::unescape(json::JsonStringView{R"(a\"b)", true}, out));
  CHECK(out == "a\"b");
  CHECK(json::unescape(json::JsonStringView{"plain", false}, out));
  CHECK(out == "plain");

  std::pmr::monotonic_buffer_resource arena;
  std::pmr::string in_arena(&arena);
  CHECK(json::unescape(json::JsonStringView{R"(caf\u00e9)", true}, in_arena));
  CHECK(in_arena == "caf\xC3\xA9");
}

TEST_CASE("unescape reports an invalid escape and keeps the part decoded before it") {
  std::string out;
  CHECK_FALSE(json::unescape(json::JsonStringView{R"(ab\qcd)", true}, out));
  CHECK(out == "ab");
}

TEST_CASE("JsonStringView::plain gives the text only when there is nothing to decode") {
  CHECK(json::JsonStringView{"abc", false}.plain() == std::optional<std::string_view>("abc"));
  CHECK_FALSE(json::JsonStringView{R"(a\nb)", true}.plain().has_value());
}
