// tests json/src/deserialize_arriving.cpp's piecewise parse (parse_piece): an array body arriving in
// pieces that do not lie together in memory. Each piece gets a buffer of its own, exactly its bytes and
// base::kPadding bytes of hostile garbage after them (bytes that read as JSON structure, so a parse that
// took the padding for data would go wrong; ASan catches a load past it). After every call the piece and
// its garbage must read as before, and the piece is then scribbled over, as a ring reuses its memory:
// records must hold nothing of it. What is parsed, and each error, must equal the whole-body parse,
// however the body was cut, and the bytes copied to the carry must be the cut records' alone.
#include "ringlab/json/deserialize.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/json/checksum.hpp"
#include "ringlab/json/profiles.hpp"
#include "ringlab/json/record_splitter.hpp"
#include "ringlab/json/serialize.hpp"
#include "../support/piece_ends.hpp"

namespace json = ringlab::json;
using ringlab::base::kPadding;
using ringlab::base::PaddedBuffer;
using ringlab::testing::byte_by_byte;
using ringlab::testing::cut_at;

namespace {

// What a ring's other connections leave after a piece: ends of records, a quote, a closing bracket.
constexpr std::string_view kGarbage = "},{\"]";

// A piece where the ring would land it: its bytes, then kPadding bytes of garbage, then the end of the
// allocation.
std::vector<char> placed(std::string_view piece) {
  std::vector<char> buffer(piece.size() + kPadding);
  std::copy(piece.begin(), piece.end(), buffer.begin());
  for (std::size_t i = 0; i < kPadding; ++i) buffer[piece.size() + i] = kGarbage[i % kGarbage.size()];
  return buffer;
}

// How the body's last call comes: with the last piece, or as an empty span after every piece was given
// with Arrival::partial.
enum class Ending { with_last_piece, empty_call };

struct Fed {
  json::Status status;
  json::PieceArray progress;
  std::vector<std::size_t> records_after_piece;
};

// Where the pieces of a body lie, and where a call leaves its rest.
enum class Layout {
  apart,           // each piece in a buffer of its own, scribbled over when its call returns; Tail::carried
  apart_kept,      // each in its own buffer, kept until the next call returns (Tail::in_place's promise)
  one_after_other, // all in one buffer, each right after the one before, as one connection's receives land in a
                   // ring it has to itself; what has not arrived yet is garbage; Tail::in_place
};

// Feeds `text` in pieces ending at `ends` (the last end is text.size()) through `parse`, laid out as
// `layout` says. After each call the piece and the garbage after it must be as they were (and, in one
// buffer, everything before it too); then a piece whose buffer goes is overwritten, so that a record still
// pointing into it would read garbage.
template <class Record, class Parse>
Fed feed(json::Parser& parser, PaddedBuffer& carry, std::string_view text, const std::vector<std::size_t>& ends,
         std::pmr::vector<Record>& out, Parse parse, Ending ending = Ending::with_last_piece,
         Layout layout = Layout::apart) {
  Fed fed;
  const json::Tail tail = layout == Layout::apart ? json::Tail::carried : json::Tail::in_place;
  std::vector<char> ring;  // one_after_other: the whole body's room, garbage until each piece lands
  if (layout == Layout::one_after_other) {
    ring = placed(text);
    for (std::size_t i = 0; i < text.size(); ++i) ring[i] = kGarbage[i % kGarbage.size()];
  }
  std::vector<char> kept;  // apart_kept: the last piece's buffer
  std::size_t at = 0;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const std::string_view bytes = text.substr(at, ends[i] - at);
    const bool last = i + 1 == ends.size() && ending == Ending::with_last_piece;
    const json::Arrival arrival = last ? json::Arrival::complete : json::Arrival::partial;
    if (layout == Layout::one_after_other) {
      std::copy(bytes.begin(), bytes.end(), ring.begin() + static_cast<std::ptrdiff_t>(at));
      const std::vector<char> before = ring;
      fed.status = parse(parser, carry, fed.progress, std::span<char>(ring.data() + at, bytes.size()), out, arrival,
                         tail);
      REQUIRE_MESSAGE(ring == before, "the pieces so far and the bytes after them are as they were");
    } else {
      const std::vector<char> before = placed(bytes);
      std::vector<char> buffer = before;
      fed.status = parse(parser, carry, fed.progress, std::span<char>(buffer.data(), bytes.size()), out, arrival, tail);
      REQUIRE_MESSAGE(buffer == before, "the piece and the bytes after it are as they were");
      std::fill(kept.begin(), kept.end(), '}');  // the piece before this one: its bytes are no longer promised
      if (layout == Layout::apart_kept) {
        kept = std::move(buffer);
      } else {
        std::fill(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(bytes.size()), '}');
      }
    }
    at = ends[i];
    if (last) break;
    REQUIRE_MESSAGE(fed.status, "a partial call is never an error");
    fed.records_after_piece.push_back(fed.progress.records);
  }
  if (ending == Ending::empty_call) {
    fed.status = parse(parser, carry, fed.progress, std::span<char>(), out, json::Arrival::complete, tail);
  }
  CHECK(fed.progress.body_bytes == text.size());
  CHECK(fed.progress.tail == nullptr);  // the end leaves nothing in place
  if (fed.status) CHECK(fed.progress.records == out.size());
  return fed;
}

std::string describe(const json::Status& status) { return status ? std::string("ok") : status.error().message; }

// One payload: its generator, its whole-body parse and its piecewise parse.
template <class Record>
struct Payload {
  const char* name;
  void (*append)(std::string&, std::size_t);
  json::Status (*whole)(json::Parser&, simdjson::padded_string_view, std::pmr::vector<Record>&);
  json::Status (*piece)(json::Parser&, PaddedBuffer&, json::PieceArray&, std::span<char>, std::pmr::vector<Record>&,
                        json::Arrival, json::Tail);

  [[nodiscard]] std::string body(std::size_t count) const {
    std::string text;
    append(text, count);
    return text;
  }
};

template <class Record>
Payload<Record> payload_of(const char* name, void (*append)(std::string&, std::size_t)) {
  return {name, append, &json::parse_array<Record>, &json::parse_piece<Record>};
}
const auto kWeather = payload_of<json::WeatherForecast>("weather", &json::append_weather_json);
const auto kRepos = payload_of<json::Repository>("repos", &json::append_repos_json);
const auto kGithub = payload_of<json::GithubRepository>("github", &json::append_github_json);
const auto kProfiles = payload_of<json::ProfileStars>("profiles", &json::append_profiles_json);

// What the whole-body parse of `text` gives: its status, and the checksum of its records.
struct Whole {
  json::Status status;
  uint64_t checksum = 0;
};
template <class Record>
Whole whole(const Payload<Record>& payload, std::string_view text) {
  json::Parser parser;
  const simdjson::padded_string padded(text);
  std::pmr::vector<Record> out;
  Whole result{payload.whole(parser, padded, out), 0};
  result.checksum = json::checksum(std::span<const Record>(out));
  return result;
}

// The records of a whole array body, as the record splitter finds them.
std::vector<json::RecordSpan> record_spans(std::string_view text) {
  std::vector<json::RecordSpan> records;
  json::RecordSplitter splitter;
  while (true) {
    auto record = splitter.next(text);
    REQUIRE(record);
    if (!*record) break;
    records.push_back(**record);
  }
  return records;
}

// The ',' of each record boundary of a body without whitespace between records (a generated one).
std::vector<std::size_t> boundaries(std::string_view text) {
  std::vector<std::size_t> commas;
  for (const json::RecordSpan& record : record_spans(text)) {
    if (record.index > 0) commas.push_back(record.offset - 1);
  }
  for (const std::size_t comma : commas) REQUIRE(text.substr(comma - 1, 3) == "},{");
  return commas;
}

// The bytes a body of a generated payload copies to the carry when cut in two at `cut`, derived from
// the section's algorithm: the first piece keeps in place what ends at its last boundary whose '{' it
// holds (a; the body's start when there is none) and copies the rest; the second copies up to its first
// boundary ',' (b) and, after its in-place window, the tail from the body's last boundary (L) on, unless
// it came with Arrival::complete (`ending`), which parses its rest from b where it lies. With no b the
// second piece is all copied; one piece (a cut at either end) copies the tail alone, or nothing when it
// came with Arrival::complete.
std::size_t copied_when_cut(const std::vector<std::size_t>& commas, std::size_t size, std::size_t cut, Ending ending) {
  const bool last_in_place = ending == Ending::with_last_piece;
  const std::size_t tail = commas.empty() ? size : size - commas.back();
  if (cut == 0 || cut == size) return last_in_place ? 0 : tail;
  if (commas.empty()) return size;
  std::size_t a = 0;
  for (const std::size_t comma : commas) {
    if (comma + 1 < cut) a = comma;
  }
  const auto b = std::lower_bound(commas.begin(), commas.end(), cut);
  if (b == commas.end()) return size - a;
  return *b - a + 1 + (last_in_place ? 0 : tail);
}

// A generated body cut in two at every byte (ending both ways), in three at a grid of cuts, and byte by
// byte: the whole-body parse's records and the generator's checksum every time; the bytes copied as
// copied_when_cut() derives them.
template <class Record>
void check_generated(const Payload<Record>& payload, std::size_t count, uint64_t truth) {
  INFO(payload.name << " " << count << " records");
  const std::string text = payload.body(count);
  REQUIRE(whole(payload, text).checksum == truth);
  const std::vector<std::size_t> commas = boundaries(text);
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<Record> out;
  for (const Layout layout : {Layout::apart, Layout::apart_kept, Layout::one_after_other}) {
    INFO("layout " << static_cast<int>(layout));
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
      INFO("cut at byte " << cut);
      const Ending ending = cut % 2 == 0 ? Ending::with_last_piece : Ending::empty_call;
      const Fed fed = feed(parser, carry, text, cut_at(cut, text.size()), out, payload.piece, ending, layout);
      REQUIRE_MESSAGE(fed.status, describe(fed.status));
      CHECK(out.size() == count);
      CHECK(json::checksum(std::span<const Record>(out)) == truth);
      // Left in place, the last piece's rest is parsed there whichever way the end comes; pieces one after
      // the other copy nothing at all.
      if (layout == Layout::apart) {
        CHECK(fed.progress.copied_bytes == copied_when_cut(commas, text.size(), cut, ending));
      } else if (layout == Layout::apart_kept) {
        CHECK(fed.progress.copied_bytes == copied_when_cut(commas, text.size(), cut, Ending::with_last_piece));
      } else {
        CHECK(fed.progress.copied_bytes == 0);
      }
    }
    const std::size_t step = std::max<std::size_t>(1, text.size() / 15);
    for (std::size_t first = 1; first < text.size(); first += step) {
      for (std::size_t second = first + 1; second < text.size(); second += step) {
        INFO("cut at bytes " << first << " and " << second);
        const Fed fed =
            feed(parser, carry, text, {first, second, text.size()}, out, payload.piece, Ending::with_last_piece, layout);
        REQUIRE_MESSAGE(fed.status, describe(fed.status));
        CHECK(json::checksum(std::span<const Record>(out)) == truth);
        if (layout == Layout::one_after_other) CHECK(fed.progress.copied_bytes == 0);
      }
    }
    const Fed fed =
        feed(parser, carry, text, byte_by_byte(text.size()), out, payload.piece, Ending::empty_call, layout);
    REQUIRE_MESSAGE(fed.status, describe(fed.status));
    CHECK(json::checksum(std::span<const Record>(out)) == truth);
    if (layout == Layout::one_after_other) CHECK(fed.progress.copied_bytes == 0);
  }
}

TEST_CASE("pieces: every payload's body cut in two at every byte, in three and byte by byte gives its records") {
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
    check_generated(kWeather, count, json::checksum_weather(count));
    check_generated(kRepos, count, json::checksum_repos(count));
    check_generated(kGithub, count, json::checksum_github(count));
    check_generated(kProfiles, count, json::checksum_profiles(count));
  }
  check_generated(kWeather, 20, json::checksum_weather(20));
  check_generated(kProfiles, 20, json::checksum_profiles(20));
}

TEST_CASE("pieces: one piece holding the whole body copies its last record, the ',' before it and the ']'") {
  const std::string text = kWeather.body(12);
  const std::size_t last_comma = text.rfind("},{") + 1;
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::WeatherForecast> out;
  const Fed fed = feed(parser, carry, text, {text.size()}, out, kWeather.piece, Ending::empty_call);
  REQUIRE(fed.status);
  CHECK(fed.records_after_piece[0] == 11);  // all but the last, in place, in one window
  CHECK(out.size() == 12);
  CHECK(fed.progress.copied_bytes == text.size() - last_comma);
  // The last record is text[last_comma + 1, size - 1): its length, the ',' and the ']'.
  CHECK(fed.progress.copied_bytes == (text.size() - 1 - (last_comma + 1)) + 2);
  CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == json::checksum_weather(12));
}

// The bytes one cut costs, by the records around it, for a generated body: a cut inside record k, or
// just after its '}', copies record k and the ',' (or '[') on each side of it; a cut between a ',' and
// the '{' of record k copies records k - 1 and k and the three separators around them, because that ','
// is not known for a boundary until its '{' comes, and a window cannot begin at a '{'.
std::size_t cut_cost(const std::vector<json::RecordSpan>& records, std::size_t cut) {
  for (const json::RecordSpan& record : records) {
    if (cut > record.offset && cut <= record.offset + record.length) return record.length + 2;
    if (cut == record.offset && record.index > 0) return records[record.index - 1].length + record.length + 3;
  }
  FAIL("the cut is in no record");
  return 0;
}

TEST_CASE("pieces: one piece holding the whole body, given with Arrival::complete, copies nothing") {
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{12}}) {
    INFO(count);
    const std::string text = kWeather.body(count);
    json::Parser parser;
    PaddedBuffer carry;
    std::pmr::vector<json::WeatherForecast> out;
    // feed() checks that the piece and the garbage after it (a ']' among it) are as they were.
    const Fed fed = feed(parser, carry, text, {text.size()}, out, kWeather.piece, Ending::with_last_piece);
    REQUIRE_MESSAGE(fed.status, describe(fed.status));
    CHECK(fed.progress.finished);
    CHECK(fed.progress.copied_bytes == 0);
    CHECK(carry.size() == 0);
    CHECK(out.size() == count);
    CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == json::checksum_weather(count));
  }
  // Whitespace after the array's ']' is still the body's end; anything else sends the rest to the carry.
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::WeatherForecast> out;
  const std::string spaced = kWeather.body(3) + " \r\n";
  const Fed fed = feed(parser, carry, spaced, {spaced.size()}, out, kWeather.piece, Ending::with_last_piece);
  REQUIRE(fed.status);
  CHECK(fed.progress.copied_bytes == 0);
  const std::string trailing = kWeather.body(3) + "x";
  const Fed bad = feed(parser, carry, trailing, {trailing.size()}, out, kWeather.piece, Ending::with_last_piece);
  REQUIRE_FALSE(bad.status);
  CHECK_FALSE(bad.progress.finished);
  CHECK(bad.progress.copied_bytes > 0);
  const Whole expected = whole(kWeather, trailing);
  REQUIRE_FALSE(expected.status);
  CHECK(bad.status.error().message == expected.status.error().message);
}

TEST_CASE("pieces: pieces of several records copy the records cut between them, no more") {
  const std::string text = kRepos.body(20);
  const std::vector<json::RecordSpan> records = record_spans(text);
  REQUIRE(records.size() == 20);
  const std::size_t tail = records.back().length + 2;  // ",{...}]"
  std::size_t longest = 0;
  for (const json::RecordSpan& record : records) longest = std::max(longest, record.length);
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::Repository> out;
  // Three pieces, each holding at least two whole records: cut in records 3 to 5 and 12 to 14, at each
  // kind of place (the ',' before a record, its '{', a byte into it, its middle, its '}').
  const auto cuts_in = [&](std::size_t from, std::size_t to) {
    std::vector<std::size_t> cuts;
    for (std::size_t k = from; k <= to; ++k) {
      const std::size_t o = records[k].offset;
      const std::size_t length = records[k].length;
      for (const std::size_t cut : {o - 1, o, o + 1, o + length / 2, o + length - 1, o + length}) cuts.push_back(cut);
    }
    return cuts;
  };
  for (const std::size_t first : cuts_in(3, 5)) {
    for (const std::size_t second : cuts_in(12, 14)) {
      INFO("cut at bytes " << first << " and " << second);
      const Fed fed = feed(parser, carry, text, {first, second, text.size()}, out, kRepos.piece);
      REQUIRE_MESSAGE(fed.status, describe(fed.status));
      CHECK(json::checksum(std::span<const json::Repository>(out)) == json::checksum_repos(20));
      // The last piece comes with Arrival::complete: its rest after the second cut's record is parsed in
      // place, the last record with it.
      CHECK(fed.progress.copied_bytes == cut_cost(records, first) + cut_cost(records, second));
      // Never more than two records a cut (and their separators): 2 * longest + 3 a cut.
      CHECK(fed.progress.copied_bytes <= 2 * (2 * longest + 3));
      // Given apart, as an empty call after every piece, the body's end copies the tail too.
      const Fed apart = feed(parser, carry, text, {first, second, text.size()}, out, kRepos.piece, Ending::empty_call);
      REQUIRE(apart.status);
      CHECK(apart.progress.copied_bytes == cut_cost(records, first) + cut_cost(records, second) + tail);
      // The records before the first cut, and those between the cuts, are parsed as their piece comes.
      CHECK(fed.records_after_piece[0] >= 2);
      CHECK(fed.records_after_piece[1] >= 11);
    }
  }
}

// One weather record with `summary` as its raw JSON text (quotes included) and `extra` fields first.
std::string weather_record(std::string_view summary, std::string_view extra = {}) {
  return "{" + std::string(extra) + R"("date":"2024-01-01","temperatureC":5,"summary":)" + std::string(summary) +
         R"(,"temperatureF":41})";
}

TEST_CASE("pieces: bytes that only look like a boundary give the whole-body parse's records, however cut") {
  // Valid records holding '},{' (or '}, {') where no record ends: inside a string, after an escaped
  // quote, inside a record's own array of objects; whitespace around the real boundaries.
  const std::string records[] = {
      weather_record(R"("},{")"),
      weather_record(R"("a},{b")"),
      weather_record(R"("q\"},{\"x")"),
      weather_record(R"("Mild")", R"("x":[{"a":1},{"b":[{},{}]}],)"),
      weather_record(R"("} , {")", R"("y":{"z":[{"a":"},{"}]},)"),
      weather_record(R"("Cold")"),
      weather_record(R"("},{")"),
  };
  std::string text = " [";
  for (const std::string& record : records) {
    if (text.size() > 2) text += " ,\n ";
    text += record;
  }
  text += " ]\n";
  const Whole truth = whole(kWeather, text);
  REQUIRE(truth.status);
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::WeatherForecast> out;
  std::vector<std::vector<std::size_t>> splits;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) splits.push_back(cut_at(cut, text.size()));
  for (std::size_t first = 1; first + 40 < text.size(); first += 13) splits.push_back({first, first + 40, text.size()});
  splits.push_back(byte_by_byte(text.size()));
  for (const Layout layout : {Layout::apart, Layout::apart_kept, Layout::one_after_other}) {
    for (const std::vector<std::size_t>& ends : splits) {
      INFO("layout " << static_cast<int>(layout) << ", pieces ending at " << doctest::toString(ends));
      const Fed fed = feed(parser, carry, text, ends, out, kWeather.piece, Ending::with_last_piece, layout);
      REQUIRE_MESSAGE(fed.status, describe(fed.status));
      CHECK(out.size() == 7);
      CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == truth.checksum);
    }
  }
}

struct Bad {
  const char* name;
  std::string text;
};

TEST_CASE("pieces: bad bodies fail at the end with the whole-body parse's record and offset, however cut") {
  const std::string good = kWeather.body(6);
  const std::vector<std::size_t> commas = boundaries(good);
  std::string bad_value = good;  // record 3's temperatureC
  bad_value.replace(good.find("\"temperatureC\":", commas[2]) + 15, 1, "x");
  std::string bad_key = good;  // record 4 without its summary
  bad_key.replace(good.find("\"summary\"", commas[3]), 9, "\"summarx\"");
  const Bad bads[] = {
      {"truncated inside the last record", good.substr(0, good.size() - 8)},
      {"truncated inside a string of record 3", good.substr(0, commas[2] + 12)},
      {"truncated after a boundary ','", good.substr(0, commas[3] + 1)},
      {"truncated after a whole record", good.substr(0, commas[3])},
      {"array never closed", good.substr(0, good.size() - 1)},
      {"a bad value in record 3", bad_value},
      {"a missing field in record 4", bad_key},
      {"garbage between records", good.substr(0, commas[1]) + " x" + good.substr(commas[1])},
      {"a record that is not an object", good.substr(0, commas[1]) + ",7" + good.substr(commas[1])},
      {"a comma before the closing bracket", good.substr(0, good.size() - 1) + ",]"},
      {"bytes after the array", good + " x"},
      {"a record after the array", good + ",{}"},
      {"not an array", weather_record(R"("Mild")")},
      {"an array of numbers", "[1,2,3]"},
      {"empty body", ""},
      {"whitespace only", " \n"},
  };
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::WeatherForecast> out;
  for (const Bad& bad : bads) {
    INFO(std::string_view(bad.name));
    const Whole expected = whole(kWeather, bad.text);
    REQUIRE_FALSE(expected.status);
    INFO("whole-body parse: " << expected.status.error().message);
    for (std::size_t cut = 0; cut <= bad.text.size() + 1; ++cut) {
      const bool by_byte = cut > bad.text.size();
      INFO((by_byte ? std::string("byte by byte") : "cut at byte " + std::to_string(cut)));
      const std::vector<std::size_t> ends = by_byte ? byte_by_byte(bad.text.size()) : cut_at(cut, bad.text.size());
      const Ending ending = cut % 2 == 0 ? Ending::with_last_piece : Ending::empty_call;
      for (const Layout layout : {Layout::apart, Layout::apart_kept, Layout::one_after_other}) {
        INFO("layout " << static_cast<int>(layout));
        const Fed fed = feed(parser, carry, bad.text, ends, out, kWeather.piece, ending, layout);
        REQUIRE_FALSE(fed.status);
        INFO(fed.status.error().message);
        CHECK(fed.status.error().record == expected.status.error().record);
        CHECK(fed.status.error().offset == expected.status.error().offset);
        CHECK(fed.status.error().field == expected.status.error().field);
        CHECK(fed.status.error().message == expected.status.error().message);
      }
    }
  }
}

TEST_CASE("pieces: an error inside a string of a record past the first window names that record and its ','") {
  // simdjson's first stage rejects the control byte and the splitter cannot place it: the whole-body
  // parse names the document at byte 0. Past the body's first window the piecewise parse knows better:
  // the records before the final window parsed, so the error is in the first record of that window or
  // after it, from the ',' it starts at (as parse_arriving says it).
  const std::string good = kWeather.body(5);
  const std::vector<std::size_t> commas = boundaries(good);
  std::string bad = good;
  bad[good.find("\"summary\":\"", commas[3]) + 11] = '\x01';  // a raw control byte in record 4
  const Whole expected = whole(kWeather, bad);
  REQUIRE_FALSE(expected.status);
  CHECK(expected.status.error().record == json::kNoRecord);
  CHECK(expected.status.error().offset == 0);
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::WeatherForecast> out;
  // One piece: records 0 to 3 in place, record 4 in the carry's final window, from the ',' before it.
  const Fed one = feed(parser, carry, bad, {bad.size()}, out, kWeather.piece);
  REQUIRE_FALSE(one.status);
  INFO(one.status.error().message);
  CHECK(one.status.error().record == 4);
  CHECK(one.status.error().offset == commas[3]);
  CHECK(one.status.error().message.find("UNESCAPED_CHARS") != std::string::npos);
  CHECK(one.status.error().message.find("in this record or one after it") != std::string::npos);
  // Byte by byte nothing parses early: the carry is the whole body and the error the whole-body one.
  const Fed bytes = feed(parser, carry, bad, byte_by_byte(bad.size()), out, kWeather.piece);
  REQUIRE_FALSE(bytes.status);
  CHECK(bytes.status.error().message == expected.status.error().message);
}

TEST_CASE("pieces: the carry is kept across bodies, cleared by each body's first call") {
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::WeatherForecast> out;
  // A body given up halfway (its last piece ends inside a record) leaves bytes in the carry.
  const std::string given_up = kWeather.body(9);
  json::PieceArray abandoned;
  std::vector<char> half = placed(given_up.substr(0, given_up.size() / 2));
  REQUIRE(kWeather.piece(parser, carry, abandoned, std::span<char>(half.data(), given_up.size() / 2), out,
                         json::Arrival::partial, json::Tail::carried));
  REQUIRE(carry.size() > 0);
  for (const std::size_t count : {std::size_t{6}, std::size_t{2}, std::size_t{0}, std::size_t{3}}) {
    INFO(count);
    const std::string text = kWeather.body(count);
    const Fed fed = feed(parser, carry, text, cut_at(text.size() / 2, text.size()), out, kWeather.piece);
    REQUIRE_MESSAGE(fed.status, describe(fed.status));
    CHECK(out.size() == count);
    CHECK(json::checksum(std::span<const json::WeatherForecast>(out)) == json::checksum_weather(count));
    CHECK(fed.progress.copied_bytes ==
          copied_when_cut(boundaries(text), text.size(), text.size() / 2, Ending::with_last_piece));
    // Finished in place, the carry is empty; else it holds the body from its offset on.
    CHECK(carry.view() ==
          (fed.progress.finished ? std::string_view() : std::string_view(text).substr(fed.progress.carry_offset)));
  }
  // The carry's memory is reused: a body no longer than the first needs no more of it.
  const char* memory = carry.data();
  const std::string again = kWeather.body(6);
  REQUIRE(feed(parser, carry, again, cut_at(again.size() / 2, again.size()), out, kWeather.piece).status);
  CHECK(carry.data() == memory);
}

// The first `cut` bytes of `text` as one piece, in a buffer of its own, its rest left in place.
template <class Record>
std::vector<char> first_left_in_place(json::Parser& parser, PaddedBuffer& carry, json::PieceArray& progress,
                                      std::string_view text, std::size_t cut, std::pmr::vector<Record>& out) {
  std::vector<char> first = placed(text.substr(0, cut));
  REQUIRE(json::parse_piece(parser, carry, progress, std::span<char>(first.data(), cut), out, json::Arrival::partial,
                            json::Tail::in_place));
  return first;  // moved: the bytes stay where the tail points
}

TEST_CASE("pieces: a tail left in place is copied by carry_tail(), or read where move_tail() says the same bytes are") {
  const std::string text = kRepos.body(9);
  const std::vector<std::size_t> commas = boundaries(text);
  const std::size_t cut = commas[4] + 10;  // inside record 5
  const std::size_t kept = cut - commas[4];
  json::Parser parser;
  PaddedBuffer carry;
  std::pmr::vector<json::Repository> out;
  json::PieceArray progress;
  std::vector<char> first = first_left_in_place(parser, carry, progress, text, cut, out);
  // Records 0 to 4 parsed; the tail, from record 4's ',' on, left where it lies.
  CHECK(progress.records == 5);
  REQUIRE(progress.tail == first.data() + commas[4]);
  CHECK(progress.carry_offset == commas[4]);
  CHECK(progress.copied_bytes == 0);
  CHECK(carry.size() == 0);
  SUBCASE("carry_tail() copies it; a piece elsewhere then completes the cut record in the carry") {
    json::carry_tail(carry, progress);
    CHECK(progress.tail == nullptr);
    CHECK(carry.view() == std::string_view(text).substr(commas[4], kept));
    CHECK(progress.copied_bytes == kept);
    json::carry_tail(carry, progress);  // nothing left in place: nothing more
    CHECK(progress.copied_bytes == kept);
    std::fill(first.begin(), first.end(), '}');  // its memory is the caller's again
    std::vector<char> rest = placed(std::string_view(text).substr(cut));
    REQUIRE(json::parse_piece(parser, carry, progress, std::span<char>(rest.data(), text.size() - cut), out,
                              json::Arrival::complete, json::Tail::in_place));
    // The cut record's rest up to the next boundary ',' joined it in the carry; the rest was parsed in place.
    CHECK(progress.copied_bytes == commas[5] + 1 - commas[4]);
  }
  SUBCASE("move_tail(): as a ring mapped twice, the same bytes end where the next piece begins elsewhere") {
    std::vector<char> other = placed(std::string_view(text).substr(commas[4]));
    json::move_tail(progress, other.data() - progress.tail);
    CHECK(progress.tail == other.data());
    std::fill(first.begin(), first.end(), '}');  // the first region's bytes are no longer read
    REQUIRE(json::parse_piece(parser, carry, progress, std::span<char>(other.data() + kept, text.size() - cut), out,
                              json::Arrival::complete, json::Tail::in_place));
    CHECK(progress.copied_bytes == 0);
    json::move_tail(progress, 100);  // nothing left in place: nothing moves
    CHECK(progress.tail == nullptr);
  }
  CHECK(out.size() == 9);
  CHECK(json::checksum(std::span<const json::Repository>(out)) == json::checksum_repos(9));
}

TEST_CASE("pieces: bodies parsed at once into one shared vector find each record at its own index") {
  // As the piece sinks of one strategy share their models: a short body ends (and trims the vector to
  // its records) while a longer one is halfway; the longer one's next records must still land at their
  // own indexes, and no record a call reports may lie outside the vector.
  json::Parser parser;
  std::pmr::vector<json::WeatherForecast> shared;
  struct Body {
    std::string text;
    PaddedBuffer carry;
    json::PieceArray progress;
    json::Checksum folded;  // each call's records, taken at once, as a sink folds them
    std::size_t at = 0;
  };
  Body bodies[2];
  Body& longer = bodies[0];
  Body& shorter = bodies[1];
  longer.text = kWeather.body(12);
  shorter.text = kWeather.body(2);
  constexpr std::size_t kPiece = 45;  // under a record: every piece ends inside one
  bool trimmed_below_longer = false;
  for (bool any = true; any;) {
    any = false;
    for (Body& body : bodies) {
      if (body.at > body.text.size()) continue;
      any = true;
      // The shorter body starts once the longer one is five records in, so that it ends while the longer
      // one's records reach past its own.
      if (&body == &shorter && longer.progress.records < 5) continue;
      const std::size_t size = std::min(kPiece, body.text.size() - body.at);
      std::vector<char> buffer = placed(std::string_view(body.text).substr(body.at, size));
      body.at += size;
      const bool last = body.at == body.text.size();
      const std::size_t before = body.progress.records;
      const json::Status status =
          kWeather.piece(parser, body.carry, body.progress, std::span<char>(buffer.data(), size), shared,
                         last ? json::Arrival::complete : json::Arrival::partial, json::Tail::carried);
      REQUIRE_MESSAGE(status, describe(status));
      // The call's records lie in the vector (a call that made none claims nothing of it).
      if (body.progress.records > before) REQUIRE(body.progress.records <= shared.size());
      for (std::size_t i = before; i < body.progress.records; ++i) {
        CHECK(shared[i].date == json::make_weather(i).date);
        body.folded.add(shared[i]);
      }
      if (last && &body == &shorter) trimmed_below_longer = shared.size() < longer.progress.records;
      if (last) body.at = body.text.size() + 1;  // done
    }
  }
  CHECK(trimmed_below_longer);  // the case this test is for did happen
  CHECK(longer.folded.value() == json::checksum_weather(12));
  CHECK(shorter.folded.value() == json::checksum_weather(2));
}

}  // namespace
