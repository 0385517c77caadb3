// How the simdjson readers (deserialize.cpp) match keys and read one field: keys compared as words,
// scalars, owning and viewing text, optional members.
//
// Private to deserialize.cpp, which includes it once; internal linkage (an unnamed namespace). The parse
// loops depend on the per-record readers being inlined into them (reader_records.hpp's read_members says
// why): those are marked always_inline rather than left to GCC's choice, since each has three callers.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ringlab/json/fields.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::json {

namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

// --- keys ----------------------------------------------------------------------------------------------

// A key compared as words: its first 8 bytes (masked when shorter) and its last 8. memcmp with a length
// known only at run time is a library call per candidate key; this is two loads and compares.
struct Key {
  std::string_view text;
  uint64_t head = 0;       // first bytes, little-endian, zero above the key's length
  uint64_t head_mask = 0;  // the bytes of head that belong to the key
  uint64_t tail = 0;       // last 8 bytes, for keys of 9 to 16 bytes
};

constexpr uint64_t little_endian_word(std::string_view bytes) noexcept {
  uint64_t word = 0;
  for (std::size_t i = 0; i < bytes.size() && i < 8; ++i) word |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  return word;
}

constexpr Key make_key(std::string_view text) noexcept {
  Key key;
  key.text = text;
  key.head = little_endian_word(text.substr(0, 8));
  key.head_mask = text.size() >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * text.size())) - 1;
  if (text.size() > 8) key.tail = little_endian_word(text.substr(text.size() - 8));
  return key;
}

// The matching form of a record's field names (fields.hpp), in the same positions.
template <std::size_t N>
consteval std::array<Key, N> make_keys(const std::array<std::string_view, N>& names) {
  std::array<Key, N> keys{};
  for (std::size_t i = 0; i < N; ++i) keys[i] = make_key(names[i]);
  return keys;
}

[[gnu::always_inline]] inline uint64_t load_word(const char* bytes) noexcept {
  uint64_t word;
  std::memcpy(&word, bytes, sizeof word);
  if constexpr (std::endian::native == std::endian::big) word = std::byteswap(word);
  return word;
}

// `raw` is the first byte after a key's opening quote, inside a padded body: the 16 bytes read here
// stay within the body or its padding, whatever the key's length.
[[gnu::always_inline]] inline bool key_equals(const char* raw, const Key& key) noexcept {
  if ((load_word(raw) & key.head_mask) != key.head) return false;
  const std::size_t size = key.text.size();
  if (size > 16) {
    if (std::memcmp(raw + 8, key.text.data() + 8, size - 8) != 0) return false;
  } else if (size > 8) {
    if (load_word(raw + size - 8) != key.tail) return false;
  }
  return raw[size] == '"';
}

// Index of `key` in `keys`, or -1. Bodies usually list keys in the usual order, so the key after the
// previous match (`hint`) is tried first; keys are compared on their raw bytes, without unescaping.
// Out of line: read_members calls it only for members off the table's order, and inlined into every
// record's loop it only grew them.
template <std::size_t N>
[[gnu::noinline]] int match_key(od::raw_json_string key, const std::array<Key, N>& keys,
                                            std::size_t& hint) noexcept {
  const char* raw = key.raw();
  if (hint < N && key_equals(raw, keys[hint])) return static_cast<int>(hint++);
  for (std::size_t i = 0; i < N; ++i) {
    if (key_equals(raw, keys[i])) {
      hint = i + 1;
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Whether `raw` (as in key_equals) is key number I of `Keys`, a table known at compile time: the key's
// words and length are immediates in the instructions, with no load from the table and no branch on the
// key's size. The readers try each record's keys this way in the order bodies list them (read_members).
template <const auto& Keys, std::size_t I>
[[gnu::always_inline]] inline bool key_is(const char* raw) noexcept {
  constexpr Key key = Keys[I];
  constexpr std::size_t size = key.text.size();
  // read_members passes a key that parsed (member_at refuses a null one); GCC, inlining simdjson's error
  // paths, does not see it and warns of a null dereference (-Wnull-dereference) unless told.
  if (raw == nullptr) __builtin_unreachable();
  if ((load_word(raw) & key.head_mask) != key.head) return false;
  if constexpr (size > 16) {
    if (std::memcmp(raw + 8, key.text.data() + 8, size - 8) != 0) return false;
  } else if constexpr (size > 8) {
    if (load_word(raw + size - 8) != key.tail) return false;
  }
  return raw[size] == '"';
}

// The keys of each record (fields.hpp: in the order bodies usually list them, which match_key tries first).
using WeatherField = fields::Weather;
using OwnerField = fields::Owner;
using LicenseField = fields::License;
using RepositoryField = fields::Repository;
constexpr auto kWeatherKeys = make_keys(fields::kWeather);
constexpr auto kOwnerKeys = make_keys(fields::kOwner);
constexpr auto kLicenseKeys = make_keys(fields::kLicense);
constexpr auto kRepositoryKeys = make_keys(fields::kRepository);
constexpr auto kGithubKeys = make_keys(fields::kGithub);
constexpr auto kGithubStarsKeys = make_keys(fields::kGithubStars);
constexpr auto kProfileKeys = make_keys(fields::kProfileStars);
using fields::all_of;

// A backslash in `text`. `text` lies in a padded body, so whole words are read past its end and the
// extra bytes masked off: no loop over single bytes, whose exit at a varying length is a branch the
// CPU mispredicts (a byte loop, or memchr, cost a quarter of the whole parse). Strings of up to 16
// bytes, most of them, take one 16-byte compare and a mask computed without a branch.
#if defined(__SSE2__)
// The bytes equal to `c` among the 16 bytes at `p`, one bit each.
[[gnu::always_inline]] inline uint32_t byte_bits(const char* p, char c) noexcept {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(c))));
}
[[gnu::always_inline]] inline uint32_t backslash_bits(const char* p) noexcept { return byte_bits(p, '\\'); }

[[gnu::always_inline]] inline bool has_backslash(std::string_view text) noexcept {
  const char* p = text.data();
  const std::size_t n = text.size();
  // (1 << n) - 1 keeps the first n bits; n <= 16 here, so the shift stays inside 32 bits.
  if (n <= 16) return (backslash_bits(p) & ((uint32_t{1} << n) - 1)) != 0;
  uint32_t found = 0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) found |= backslash_bits(p + i);
  found |= backslash_bits(p + i) & ((uint32_t{1} << (n - i)) - 1);
  return found != 0;
}
#else
// Without SSE2: eight bytes at a time (a word whose byte equals '\\' has its high bit set in `found`).
[[gnu::always_inline]] inline uint64_t backslash_bytes(uint64_t word) noexcept {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const uint64_t x = word ^ (kOnes * '\\');
  return (x - kOnes) & ~x & kHighs;
}

[[gnu::always_inline]] inline bool has_backslash(std::string_view text) noexcept {
  const char* p = text.data();
  const std::size_t n = text.size();
  uint64_t found = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) found |= backslash_bytes(load_word(p + i));
  // The last 0-7 bytes: `keep` holds the low 8 * (n - i) bits, shifted so that no shift reaches 64.
  const uint64_t keep = (~uint64_t{0} >> 1) >> (63 - 8 * (n - i));
  found |= backslash_bytes(load_word(p + i)) & keep;
  return found != 0;
}
#endif

// --- scalar fields -----------------------------------------------------------------------------------

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

[[gnu::always_inline]] inline error_code read(od::value v, int32_t& out) noexcept {
  int64_t wide = 0;
  if (const error_code e = v.get_int64().get(wide)) return e;
  // In range when narrowing keeps the value: one compare where a pair of bounds takes two.
  if (static_cast<int32_t>(wide) != wide) return simdjson::NUMBER_OUT_OF_RANGE;
  out = static_cast<int32_t>(wide);
  return simdjson::SUCCESS;
}
[[gnu::always_inline]] inline error_code read(od::value v, int64_t& out) noexcept { return v.get_int64().get(out); }
[[gnu::always_inline]] inline error_code read(od::value v, bool& out) noexcept { return v.get_bool().get(out); }
[[gnu::always_inline]] inline error_code read(od::value v, double& out) noexcept { return v.get_double().get(out); }

// Owning text: simdjson unescapes into the parser's string buffer, then it is copied into the record.
[[gnu::always_inline]] inline error_code read(od::value v, std::pmr::string& out) {
  std::string_view text;
  if (const error_code e = v.get_string().get(text)) return e;
  out.assign(text);
  return simdjson::SUCCESS;
}

// Viewing text: the raw token, whose end simdjson already knows (it runs to the next structural
// character, trailing whitespace included). Text with escapes is also run through get_string(), only to
// reject what an owning parse would reject; its decoded copy lands in the parser and is dropped.
[[gnu::always_inline]] inline error_code read(od::value v, JsonStringView& out) noexcept {
  std::string_view token = v.raw_json_token();
  if (token.empty() || token.front() != '"') return simdjson::INCORRECT_TYPE;
#if defined(__SSE2__)
  // Most strings close within 16 bytes: one load finds the closing quote and any backslash before it,
  // without the trailing-whitespace walk and the separate escape scan below.
  {
    const char* text = token.data() + 1;
    const uint32_t quotes = byte_bits(text, '"');
    const uint32_t before_quote = (quotes & (0 - quotes)) - 1;  // the bits below the first quote
    if (quotes != 0 && (byte_bits(text, '\\') & before_quote) == 0) {
      od::raw_json_string consumed;
      if (const error_code e = v.get_raw_json_string().get(consumed)) return e;
      out.raw = std::string_view(text, static_cast<std::size_t>(std::countr_zero(quotes)));
      out.has_escapes = false;
      return simdjson::SUCCESS;
    }
  }
#endif
  while (token.size() > 1 && is_space(token.back())) token.remove_suffix(1);
  if (token.size() < 2 || token.back() != '"') return simdjson::STRING_ERROR;
  const std::string_view raw(token.data() + 1, token.size() - 2);  // size >= 2 here: no bounds check needed
  const bool escapes = has_backslash(raw);
  if (escapes) {
    std::string_view decoded;
    if (const error_code e = v.get_string().get(decoded)) return e;
  } else {
    od::raw_json_string consumed;
    if (const error_code e = v.get_raw_json_string().get(consumed)) return e;
  }
  // Member by member: GCC 12 builds an aggregate temporary here with two 8-byte stores read back as
  // one 16-byte load, a store-forwarding stall that cost more than the rest of the parse.
  out.raw = raw;
  out.has_escapes = escapes;
  return simdjson::SUCCESS;
}

using Allocator = std::pmr::polymorphic_allocator<>;

template <class Text>
error_code read_optional(od::value v, std::optional<Text>& out, const Allocator& alloc) {
  bool null = false;
  if (const error_code e = v.is_null().get(null)) return e;
  if (null) {
    out.reset();
    return simdjson::SUCCESS;
  }
  if (!out) {
    if constexpr (std::is_same_v<Text, std::pmr::string>) {
      out.emplace(alloc);
    } else {
      out.emplace();
    }
  }
  return read(v, *out);
}

Allocator allocator_of(const Repository& record) noexcept { return record.get_allocator(); }
Allocator allocator_of(const RepositoryView&) noexcept { return {}; }  // views allocate nothing
Allocator allocator_of(const GithubRepository& record) noexcept { return record.get_allocator(); }
Allocator allocator_of(const GithubRepositoryView&) noexcept { return {}; }
Allocator allocator_of(const GithubStars& record) noexcept { return record.get_allocator(); }
Allocator allocator_of(const GithubStarsView&) noexcept { return {}; }
Allocator allocator_of(const ProfileStars& record) noexcept { return record.get_allocator(); }
Allocator allocator_of(const ProfileStarsView&) noexcept { return {}; }

// One member of a record whose fields are listed as a table (github_members), by its type.
template <class T>
[[gnu::always_inline]] inline error_code read_member(od::value v, T& out, const Allocator&) {
  return read(v, out);
}
template <class Text>
[[gnu::always_inline]] inline error_code read_member(od::value v, std::optional<Text>& out, const Allocator& alloc) {
  return read_optional(v, out, alloc);
}

}  // namespace
}  // namespace ringlab::json
