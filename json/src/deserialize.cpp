#include "ringlab/json/deserialize.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>

#include "ringlab/json/fields.hpp"

namespace ringlab::json {

namespace od = simdjson::ondemand;
using simdjson::error_code;

namespace {

// --- errors ------------------------------------------------------------------------------------------

const char* code_name(error_code code) noexcept {
  switch (code) {
    case simdjson::SUCCESS: return "SUCCESS";
    case simdjson::CAPACITY: return "CAPACITY";
    case simdjson::MEMALLOC: return "MEMALLOC";
    case simdjson::TAPE_ERROR: return "TAPE_ERROR";
    case simdjson::DEPTH_ERROR: return "DEPTH_ERROR";
    case simdjson::STRING_ERROR: return "STRING_ERROR";
    case simdjson::T_ATOM_ERROR: return "T_ATOM_ERROR";
    case simdjson::F_ATOM_ERROR: return "F_ATOM_ERROR";
    case simdjson::N_ATOM_ERROR: return "N_ATOM_ERROR";
    case simdjson::NUMBER_ERROR: return "NUMBER_ERROR";
    case simdjson::UTF8_ERROR: return "UTF8_ERROR";
    case simdjson::UNINITIALIZED: return "UNINITIALIZED";
    case simdjson::EMPTY: return "EMPTY";
    case simdjson::UNESCAPED_CHARS: return "UNESCAPED_CHARS";
    case simdjson::UNCLOSED_STRING: return "UNCLOSED_STRING";
    case simdjson::UNSUPPORTED_ARCHITECTURE: return "UNSUPPORTED_ARCHITECTURE";
    case simdjson::INCORRECT_TYPE: return "INCORRECT_TYPE";
    case simdjson::NUMBER_OUT_OF_RANGE: return "NUMBER_OUT_OF_RANGE";
    case simdjson::INDEX_OUT_OF_BOUNDS: return "INDEX_OUT_OF_BOUNDS";
    case simdjson::NO_SUCH_FIELD: return "NO_SUCH_FIELD";
    case simdjson::IO_ERROR: return "IO_ERROR";
    case simdjson::INVALID_JSON_POINTER: return "INVALID_JSON_POINTER";
    case simdjson::INVALID_URI_FRAGMENT: return "INVALID_URI_FRAGMENT";
    case simdjson::UNEXPECTED_ERROR: return "UNEXPECTED_ERROR";
    case simdjson::PARSER_IN_USE: return "PARSER_IN_USE";
    case simdjson::OUT_OF_ORDER_ITERATION: return "OUT_OF_ORDER_ITERATION";
    case simdjson::INSUFFICIENT_PADDING: return "INSUFFICIENT_PADDING";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "INCOMPLETE_ARRAY_OR_OBJECT";
    case simdjson::SCALAR_DOCUMENT_AS_VALUE: return "SCALAR_DOCUMENT_AS_VALUE";
    case simdjson::OUT_OF_BOUNDS: return "OUT_OF_BOUNDS";
    case simdjson::TRAILING_CONTENT: return "TRAILING_CONTENT";
    case simdjson::NUM_ERROR_CODES: break;
  }
  return "UNKNOWN_ERROR";
}

// Where the parse is: the whole body (offsets count from its start) and the record being read, and
// where an error goes. The readers below return a bool and leave the Error here: a std::expected with
// two strings in it, returned through every level of every field, kept the parse loops from holding
// their state in registers.
struct Context {
  const char* body = nullptr;
  std::size_t body_size = 0;
  std::size_t record = kNoRecord;
  Error* error = nullptr;
};

// The field an error is about: "date", "owner.login", "topics[2]". Cheap to pass; spelled out only
// when an error is made.
struct FieldName {
  std::string_view parent;
  std::string_view name;
  std::size_t index = kNoRecord;  // kNoRecord: not an array element

  FieldName() = default;
  FieldName(std::string_view field) noexcept : name(field) {}  // NOLINT: implicit on purpose
  FieldName(const char* field) noexcept : name(field) {}       // NOLINT: implicit on purpose
  FieldName(std::string_view parent_field, std::string_view field) noexcept : parent(parent_field), name(field) {}
  FieldName(std::string_view array, std::size_t element) noexcept : name(array), index(element) {}

  [[nodiscard]] std::string text() const {
    std::string out;
    if (!parent.empty()) (out += parent) += '.';
    out += name;
    if (index != kNoRecord) out += "[" + std::to_string(index) + "]";
    return out;
  }
};

// Errors are rare: kept out of line and cold, so the parse loops keep their registers.
[[gnu::cold, gnu::noinline]] Error build_error(const Context& ctx, FieldName field, error_code code, std::size_t offset,
                                               std::string_view detail = {}) {
  Error error;
  error.record = ctx.record;
  error.field = field.text();
  error.offset = offset;
  error.message = ctx.record == kNoRecord ? std::string("document") : "record " + std::to_string(ctx.record);
  if (!error.field.empty()) error.message += " field " + error.field;
  error.message += ": ";
  error.message += code_name(code);
  error.message += " (";
  error.message += simdjson::error_message(code);
  error.message += ")";
  if (!detail.empty()) {
    error.message += ": ";
    error.message += detail;
  }
  if (offset != kNoOffset) error.message += " at byte " + std::to_string(offset);
  return error;
}

std::unexpected<Error> make_error(const Context& ctx, FieldName field, error_code code, std::size_t offset,
                                  std::string_view detail = {}) {
  return std::unexpected(build_error(ctx, field, code, offset, detail));
}

// For the readers: records the error in the context; returns false so that `return fail_at(...)` ends
// the reader.
[[gnu::cold, gnu::noinline]] bool fail_at(const Context& ctx, FieldName field, error_code code, std::size_t offset) {
  *ctx.error = build_error(ctx, field, code, offset);
  return false;
}

// Where the document's iterator stands: the token that failed, for most errors.
template <class Doc>
std::size_t offset_of(Doc& doc, const Context& ctx) noexcept {
  const char* at = nullptr;
  if (doc.current_location().get(at) != simdjson::SUCCESS) return ctx.body_size;  // past the end
  return static_cast<std::size_t>(at - ctx.body);
}

template <class Doc>
[[gnu::cold, gnu::noinline]] bool fail(Doc& doc, const Context& ctx, FieldName field, error_code code) {
  return fail_at(ctx, field, code, offset_of(doc, ctx));
}

// simdjson rejects a body whose brackets do not balance as a whole, before any record is read. The
// splitter can say which record the bytes go wrong in; its view is added to the message.
[[gnu::cold, gnu::noinline]] std::unexpected<Error> document_error(const Context& ctx, error_code code) {
  const std::string_view body(ctx.body, ctx.body_size);
  RecordSplitter splitter;
  Status where;
  while (true) {
    auto record = splitter.next(body);
    if (!record) {
      where = std::unexpected(record.error());
      break;
    }
    if (!*record) {
      where = splitter.finish(body);
      break;
    }
  }
  if (where) return make_error(ctx, {}, code, 0);
  // "record 3: the body ends inside ..." becomes "record 3: INCOMPLETE_ARRAY_OR_OBJECT (...): the body
  // ends inside ...".
  const std::string& found = where.error().message;
  const std::size_t colon = found.find(": ");
  Error error;
  error.record = where.error().record;
  error.offset = where.error().offset;
  error.message = found.substr(0, colon) + ": " + code_name(code) + " (" + simdjson::error_message(code) + "): " +
                  found.substr(colon == std::string::npos ? 0 : colon + 2);
  return std::unexpected(std::move(error));
}

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
template <std::size_t N>
[[gnu::always_inline]] inline int match_key(od::raw_json_string key, const std::array<Key, N>& keys,
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
using fields::all_of;

// A backslash in `text`. `text` lies in a padded body, so whole words are read past its end and the
// extra bytes masked off: no loop over single bytes, whose exit at a varying length is a branch the
// CPU mispredicts (a byte loop, or memchr, cost a quarter of the whole parse). Strings of up to 16
// bytes, most of them, take two loads and no branch.
[[gnu::always_inline]] inline uint64_t backslash_bytes(uint64_t word, std::size_t keep) noexcept {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const uint64_t x = word ^ (kOnes * '\\');
  const uint64_t mask = keep >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * keep)) - 1;
  return (x - kOnes) & ~x & kHighs & mask;
}

[[gnu::always_inline]] inline bool has_backslash(std::string_view text) noexcept {
  const char* p = text.data();
  const std::size_t n = text.size();
  if (n <= 16) {
    return (backslash_bytes(load_word(p), n) | backslash_bytes(load_word(p + 8), n > 8 ? n - 8 : 0)) != 0;
  }
  uint64_t found = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) found |= backslash_bytes(load_word(p + i), 8);
  found |= backslash_bytes(load_word(p + i), n - i);
  return found != 0;
}

// --- scalar fields -----------------------------------------------------------------------------------

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

[[gnu::always_inline]] inline error_code read(od::value v, int32_t& out) noexcept {
  int64_t wide = 0;
  if (const error_code e = v.get_int64().get(wide)) return e;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return simdjson::NUMBER_OUT_OF_RANGE;
  }
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
  while (token.size() > 1 && is_space(token.back())) token.remove_suffix(1);
  if (token.size() < 2 || token.back() != '"') return simdjson::STRING_ERROR;
  const std::string_view raw = token.substr(1, token.size() - 2);
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

// One member of a record whose fields are listed as a table (github_members), by its type.
template <class T>
[[gnu::always_inline]] inline error_code read_member(od::value v, T& out, const Allocator&) {
  return read(v, out);
}
template <class Text>
[[gnu::always_inline]] inline error_code read_member(od::value v, std::optional<Text>& out, const Allocator& alloc) {
  return read_optional(v, out, alloc);
}


// --- records -----------------------------------------------------------------------------------------

template <class Doc, class Weather>
bool read_weather(Doc& doc, od::object object, Weather& out, const Context& ctx, std::size_t start) {
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, {}, e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, {}, e);
    const int k = match_key(key, kWeatherKeys, hint);
    error_code e = simdjson::SUCCESS;
    switch (static_cast<WeatherField>(k)) {
      case WeatherField::date: e = read(value, out.date); break;
      case WeatherField::temperature_c: e = read(value, out.temperature_c); break;
      case WeatherField::summary: e = read(value, out.summary); break;
      case WeatherField::temperature_f: e = read(value, out.temperature_f); break;
      default: continue;  // unknown key: On-Demand skips its value
    }
    if (e) return fail(doc, ctx, kWeatherKeys[static_cast<std::size_t>(k)].text, e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<kWeatherKeys.size()>()) {
    return fail_at(ctx, fields::first_missing(seen, fields::kWeather), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

template <class Doc, class OwnerForm>
bool read_owner(Doc& doc, od::value v, OwnerForm& out, const Context& ctx) {
  const std::size_t start = static_cast<std::size_t>(v.raw_json_token().data() - ctx.body);
  od::object object;
  if (const error_code e = v.get_object().get(object)) return fail(doc, ctx, "owner", e);
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, "owner", e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, "owner", e);
    const int k = match_key(key, kOwnerKeys, hint);
    error_code e = simdjson::SUCCESS;
    switch (static_cast<OwnerField>(k)) {
      case OwnerField::login: e = read(value, out.login); break;
      case OwnerField::id: e = read(value, out.id); break;
      case OwnerField::node_id: e = read(value, out.node_id); break;
      case OwnerField::avatar_url: e = read(value, out.avatar_url); break;
      case OwnerField::html_url: e = read(value, out.html_url); break;
      case OwnerField::type: e = read(value, out.type); break;
      case OwnerField::site_admin: e = read(value, out.site_admin); break;
      default: continue;
    }
    if (e) return fail(doc, ctx, FieldName("owner", kOwnerKeys[static_cast<std::size_t>(k)].text), e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<kOwnerKeys.size()>()) {
    return fail_at(ctx, FieldName("owner", fields::first_missing(seen, fields::kOwner)), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

template <class Doc, class LicenseForm>
bool read_license(Doc& doc, od::value v, std::optional<LicenseForm>& out, const Allocator& alloc,
                    const Context& ctx) {
  bool null = false;
  if (const error_code e = v.is_null().get(null)) return fail(doc, ctx, "license", e);
  if (null) {
    out.reset();
    return true;
  }
  const std::size_t start = static_cast<std::size_t>(v.raw_json_token().data() - ctx.body);
  od::object object;
  if (const error_code e = v.get_object().get(object)) return fail(doc, ctx, "license", e);
  if (!out) {
    if constexpr (std::is_same_v<LicenseForm, License>) {
      out.emplace(alloc);
    } else {
      out.emplace();
    }
  }
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, "license", e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, "license", e);
    const int k = match_key(key, kLicenseKeys, hint);
    error_code e = simdjson::SUCCESS;
    switch (static_cast<LicenseField>(k)) {
      case LicenseField::key: e = read(value, out->key); break;
      case LicenseField::name: e = read(value, out->name); break;
      case LicenseField::spdx_id: e = read(value, out->spdx_id); break;
      default: continue;
    }
    if (e) return fail(doc, ctx, FieldName("license", kLicenseKeys[static_cast<std::size_t>(k)].text), e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<kLicenseKeys.size()>()) {
    return fail_at(ctx, FieldName("license", fields::first_missing(seen, fields::kLicense)), simdjson::NO_SUCH_FIELD,
                      start);
  }
  return true;
}

// Owning topics: overwritten in place, so the strings' capacity is reused from one parse to the next.
template <class Doc>
bool read_topics(Doc& doc, od::value v, std::pmr::vector<std::pmr::string>& out, const Context& ctx) {
  od::array array;
  if (const error_code e = v.get_array().get(array)) return fail(doc, ctx, "topics", e);
  std::size_t n = 0;
  for (auto element : array) {
    od::value item;
    error_code e = element.get(item);
    if (!e) e = read(item, n < out.size() ? out[n] : out.emplace_back());
    if (e) return fail(doc, ctx, FieldName("topics", n), e);
    ++n;
  }
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
  return true;
}

// Viewing topics: each element is validated as a viewing string; the view keeps the array's text from
// '[' to ']'. The last token ends where the next one starts (whitespace included), that is at ']'.
template <class Doc>
bool read_topics(Doc& doc, od::value v, JsonStringArrayView& out, const Context& ctx) {
  const std::string_view open = v.raw_json_token();
  const char* end = open.data() + open.size();
  od::array array;
  if (const error_code e = v.get_array().get(array)) return fail(doc, ctx, "topics", e);
  std::size_t n = 0;
  for (auto element : array) {
    od::value item;
    error_code e = element.get(item);
    if (!e) {
      const std::string_view token = item.raw_json_token();
      JsonStringView text;
      e = read(item, text);
      end = token.data() + token.size();
    }
    if (e) return fail(doc, ctx, FieldName("topics", n), e);
    ++n;
  }
  if (end >= ctx.body + ctx.body_size || *end != ']') return fail(doc, ctx, "topics", simdjson::TAPE_ERROR);
  out = JsonStringArrayView(std::string_view(open.data(), static_cast<std::size_t>(end + 1 - open.data())), n);
  return true;
}

template <class Doc, class Repo>
bool read_repository(Doc& doc, od::object object, Repo& out, const Context& ctx, std::size_t start) {
  const Allocator alloc = allocator_of(out);
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, {}, e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, {}, e);
    const int k = match_key(key, kRepositoryKeys, hint);
    error_code e = simdjson::SUCCESS;
    bool nested = true;
    switch (static_cast<RepositoryField>(k)) {
      case RepositoryField::id: e = read(value, out.id); break;
      case RepositoryField::node_id: e = read(value, out.node_id); break;
      case RepositoryField::name: e = read(value, out.name); break;
      case RepositoryField::full_name: e = read(value, out.full_name); break;
      case RepositoryField::is_private: e = read(value, out.is_private); break;
      case RepositoryField::owner: nested = read_owner(doc, value, out.owner, ctx); break;
      case RepositoryField::html_url: e = read(value, out.html_url); break;
      case RepositoryField::description: e = read(value, out.description); break;
      case RepositoryField::fork: e = read(value, out.fork); break;
      case RepositoryField::url: e = read(value, out.url); break;
      case RepositoryField::created_at: e = read(value, out.created_at); break;
      case RepositoryField::updated_at: e = read(value, out.updated_at); break;
      case RepositoryField::pushed_at: e = read(value, out.pushed_at); break;
      case RepositoryField::homepage: e = read_optional(value, out.homepage, alloc); break;
      case RepositoryField::size: e = read(value, out.size); break;
      case RepositoryField::stargazers_count: e = read(value, out.stargazers_count); break;
      case RepositoryField::watchers_count: e = read(value, out.watchers_count); break;
      case RepositoryField::language: e = read_optional(value, out.language, alloc); break;
      case RepositoryField::forks_count: e = read(value, out.forks_count); break;
      case RepositoryField::open_issues_count: e = read(value, out.open_issues_count); break;
      case RepositoryField::archived: e = read(value, out.archived); break;
      case RepositoryField::default_branch: e = read(value, out.default_branch); break;
      case RepositoryField::topics: nested = read_topics(doc, value, out.topics, ctx); break;
      case RepositoryField::license: nested = read_license(doc, value, out.license, alloc, ctx); break;
      case RepositoryField::score: e = read(value, out.score); break;
      default: continue;
    }
    if (!nested) return false;
    if (e) return fail(doc, ctx, kRepositoryKeys[static_cast<std::size_t>(k)].text, e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<kRepositoryKeys.size()>()) {
    return fail_at(ctx, fields::first_missing(seen, fields::kRepository), simdjson::NO_SUCH_FIELD, start);
  }
  return true;
}

// A record whose fields are all scalars or strings, listed by `members` and matched by `keys` (the
// github records; and GithubStars, whose three keys leave the other 19 of a github record unknown, so
// that On-Demand skips their values unread). As the others: keys in any order, unknown keys skipped, a
// key given twice counts with its last value, a missing one is an error naming it.
template <class Doc, class Record, class Members, std::size_t N>
bool read_flat(Doc& doc, od::object object, Record& out, const Context& ctx, std::size_t start,
               const Members& members, const std::array<Key, N>& keys, const std::array<std::string_view, N>& names) {
  static_assert(std::tuple_size_v<Members> == N, "one key per member");
  const Allocator alloc = allocator_of(out);
  uint32_t seen = 0;
  std::size_t hint = 0;
  for (auto field : object) {
    od::raw_json_string key;
    if (const error_code e = field.key().get(key)) return fail(doc, ctx, {}, e);
    od::value value;
    if (const error_code e = field.value().get(value)) return fail(doc, ctx, {}, e);
    const int k = match_key(key, keys, hint);
    if (k < 0) continue;  // unknown key: On-Demand skips its value
    error_code e = simdjson::SUCCESS;
    with_member(out, members, static_cast<std::size_t>(k),
                [&](auto& member) { e = read_member(value, member, alloc); });
    if (e) return fail(doc, ctx, keys[static_cast<std::size_t>(k)].text, e);
    seen |= uint32_t{1} << k;
  }
  if (seen != all_of<N>()) return fail_at(ctx, fields::first_missing(seen, names), simdjson::NO_SUCH_FIELD, start);
  return true;
}

template <class Doc, class Record>
bool read_record(Doc& doc, od::object object, Record& out, const Context& ctx, std::size_t start) {
  if constexpr (std::is_same_v<Record, WeatherForecast> || std::is_same_v<Record, WeatherView>) {
    return read_weather(doc, object, out, ctx, start);
  } else if constexpr (std::is_same_v<Record, GithubRepository> || std::is_same_v<Record, GithubRepositoryView>) {
    return read_flat(doc, object, out, ctx, start, github_members<Record>(), kGithubKeys, fields::kGithub);
  } else if constexpr (std::is_same_v<Record, GithubStars> || std::is_same_v<Record, GithubStarsView>) {
    return read_flat(doc, object, out, ctx, start, github_stars_members<Record>(), kGithubStarsKeys,
                     fields::kGithubStars);
  } else {
    return read_repository(doc, object, out, ctx, start);
  }
}

// The next record slot: an existing record to overwrite, or a new one.
template <class Record>
Record& slot(std::pmr::vector<Record>& out, std::size_t n) {
  return n < out.size() ? out[n] : out.emplace_back();
}

template <class Record>
void trim(std::pmr::vector<Record>& out, std::size_t n) {
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
}

// --- bodies --------------------------------------------------------------------------------------------

template <class Record>
Status parse_array(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<Record>& out) {
  Error error;
  Context ctx{body.data(), body.size(), kNoRecord, &error};
  od::document doc;
  if (const error_code e = parser.iterate(body).get(doc)) return document_error(ctx, e);
  od::array array;
  if (const error_code e = doc.get_array().get(array)) {
    if (e == simdjson::INCORRECT_TYPE) return make_error(ctx, {}, e, offset_of(doc, ctx), "the body is not an array");
    return document_error(ctx, e);
  }
  std::size_t n = 0;
  for (auto element : array) {
    ctx.record = n;
    od::value value;
    od::object object;
    bool ok = true;
    if (const error_code e = element.get(value)) {
      ok = fail(doc, ctx, {}, e);
    } else {
      const auto start = static_cast<std::size_t>(value.raw_json_token().data() - ctx.body);
      if (const error_code e2 = value.get_object().get(object)) {
        ok = fail(doc, ctx, {}, e2);
      } else {
        ok = read_record(doc, object, slot(out, n), ctx, start);
      }
    }
    if (!ok) return std::unexpected(std::move(error));
    ++n;
  }
  trim(out, n);
  ctx.record = kNoRecord;
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) {
    return make_error(ctx, {}, simdjson::TRAILING_CONTENT, static_cast<std::size_t>(rest - ctx.body),
                      "after the array");
  }
  return {};
}

template <class Record>
Status parse_lines(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<Record>& out,
                   std::size_t window_bytes) {
  Error error;
  Context ctx{body.data(), body.size(), kNoRecord, &error};
  // With threads enabled simdjson indexes the next window on a helper thread: work a measurement of
  // the calling thread would not see.
  parser.threaded = false;
  od::document_stream stream;
  if (const error_code e = parser.iterate_many(body.data(), body.size(), window_bytes).get(stream)) {
    return make_error(ctx, {}, e, 0);
  }
  std::size_t n = 0;
  for (auto it = stream.begin(); it != stream.end(); ++it) {
    ctx.record = n;
    const std::size_t start = it.current_index();
    od::document_reference doc;
    if (const error_code e = (*it).get(doc)) return make_error(ctx, {}, e, start);
    od::object object;
    bool ok = true;
    if (const error_code e = doc.get_object().get(object)) {
      ok = fail(doc, ctx, {}, e);
    } else {
      ok = read_record(doc, object, slot(out, n), ctx, start);
    }
    if (!ok) return std::unexpected(std::move(error));
    ++n;
  }
  trim(out, n);
  // A last record cut short is not a document to simdjson: it only shows as truncated bytes. With no
  // document at all, truncated_bytes() reads indexes of an earlier body; the bytes left tell instead.
  std::size_t cut = 0;
  if (n > 0) {
    cut = std::min(stream.truncated_bytes(), body.size());
  } else {
    const std::size_t first = std::string_view(body).find_first_not_of(" \t\r\n");
    cut = first == std::string_view::npos ? 0 : body.size() - first;
  }
  if (cut > 0) {
    ctx.record = n;
    return make_error(ctx, {}, simdjson::INCOMPLETE_ARRAY_OR_OBJECT, body.size() - cut,
                      "the body ends inside this record");
  }
  return {};
}

template <class Record>
Status parse_one(Parser& parser, simdjson::padded_string_view body, RecordSpan record, Record& out) {
  Error error;
  Context ctx{body.data(), body.size(), record.index, &error};
  if (record.offset > body.size() || record.length > body.size() - record.offset) {
    return make_error(ctx, {}, simdjson::OUT_OF_BOUNDS, record.offset,
                      "the span of " + std::to_string(record.length) + " bytes runs past the " +
                          std::to_string(body.size()) + "-byte body");
  }
  const simdjson::padded_string_view view(body.data() + record.offset, record.length,
                                          body.capacity() - record.offset);
  od::document doc;
  if (const error_code e = parser.iterate(view).get(doc)) return make_error(ctx, {}, e, record.offset);
  od::object object;
  bool ok = true;
  if (const error_code e = doc.get_object().get(object)) {
    ok = fail(doc, ctx, {}, e);
  } else {
    ok = read_record(doc, object, out, ctx, record.offset);
  }
  if (!ok) return std::unexpected(std::move(error));
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) {
    return make_error(ctx, {}, simdjson::TRAILING_CONTENT, static_cast<std::size_t>(rest - ctx.body),
                      "after the record");
  }
  return {};
}

}  // namespace

simdjson::padded_string_view padded_view(const base::PaddedBuffer& body) noexcept {
  return simdjson::padded_string_view(body.data(), body.size(), body.capacity() + base::kPadding);
}

inline namespace RINGLAB_JSON_PARSER_ABI {

Status parse_weather(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<WeatherForecast>& out) {
  return parse_array(parser, body, out);
}
Status parse_weather_views(Parser& parser, PaddedBody body, std::pmr::vector<WeatherView>& out) {
  return parse_array(parser, body.view(), out);
}
Status parse_repos(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<Repository>& out) {
  return parse_array(parser, body, out);
}
Status parse_repos_views(Parser& parser, PaddedBody body, std::pmr::vector<RepositoryView>& out) {
  return parse_array(parser, body.view(), out);
}

Status parse_weather_ndjson(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<WeatherForecast>& out,
                            std::size_t window_bytes) {
  return parse_lines(parser, body, out, window_bytes);
}
Status parse_weather_ndjson_views(Parser& parser, PaddedBody body, std::pmr::vector<WeatherView>& out,
                                  std::size_t window_bytes) {
  return parse_lines(parser, body.view(), out, window_bytes);
}
Status parse_repos_ndjson(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<Repository>& out,
                          std::size_t window_bytes) {
  return parse_lines(parser, body, out, window_bytes);
}
Status parse_repos_ndjson_views(Parser& parser, PaddedBody body, std::pmr::vector<RepositoryView>& out,
                                std::size_t window_bytes) {
  return parse_lines(parser, body.view(), out, window_bytes);
}

Status parse_weather_record(Parser& parser, simdjson::padded_string_view body, RecordSpan record,
                            WeatherForecast& out) {
  return parse_one(parser, body, record, out);
}
Status parse_weather_record_view(Parser& parser, PaddedBody body, RecordSpan record, WeatherView& out) {
  return parse_one(parser, body.view(), record, out);
}
Status parse_repository_record(Parser& parser, simdjson::padded_string_view body, RecordSpan record,
                               Repository& out) {
  return parse_one(parser, body, record, out);
}
Status parse_repository_record_view(Parser& parser, PaddedBody body, RecordSpan record, RepositoryView& out) {
  return parse_one(parser, body.view(), record, out);
}

Status parse_github(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<GithubRepository>& out) {
  return parse_array(parser, body, out);
}
Status parse_github_views(Parser& parser, PaddedBody body, std::pmr::vector<GithubRepositoryView>& out) {
  return parse_array(parser, body.view(), out);
}
Status parse_github_ndjson(Parser& parser, simdjson::padded_string_view body, std::pmr::vector<GithubRepository>& out,
                           std::size_t window_bytes) {
  return parse_lines(parser, body, out, window_bytes);
}
Status parse_github_ndjson_views(Parser& parser, PaddedBody body, std::pmr::vector<GithubRepositoryView>& out,
                                 std::size_t window_bytes) {
  return parse_lines(parser, body.view(), out, window_bytes);
}
Status parse_github_record(Parser& parser, simdjson::padded_string_view body, RecordSpan record,
                           GithubRepository& out) {
  return parse_one(parser, body, record, out);
}
Status parse_github_record_view(Parser& parser, PaddedBody body, RecordSpan record, GithubRepositoryView& out) {
  return parse_one(parser, body.view(), record, out);
}
Status parse_github_three_fields(Parser& parser, simdjson::padded_string_view body,
                                 std::pmr::vector<GithubStars>& out) {
  return parse_array(parser, body, out);
}
Status parse_github_three_fields_views(Parser& parser, PaddedBody body, std::pmr::vector<GithubStarsView>& out) {
  return parse_array(parser, body.view(), out);
}

}  // inline namespace RINGLAB_JSON_PARSER_ABI
}  // namespace ringlab::json
