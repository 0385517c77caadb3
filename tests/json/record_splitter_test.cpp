// tests json/src/record_splitter.cpp
#include "ringlab/json/record_splitter.hpp"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "ringlab/json/generate.hpp"
#include "ringlab/json/serialize.hpp"

namespace json = ringlab::json;

namespace {

// Where the server's records are: record i's text is exactly append_json(record i).
template <class Record>
std::vector<json::RecordSpan> expected_spans(std::size_t count, Record (*make)(std::size_t)) {
  std::vector<json::RecordSpan> spans;
  std::size_t offset = 1;  // after '['
  for (std::size_t i = 0; i < count; ++i) {
    std::string text;
    json::append_json(text, make(i));
    spans.push_back({i, offset, text.size()});
    offset += text.size() + 1;  // and the ','
  }
  return spans;
}

// A splitter result that must be an error whose message contains `says`.
void check_error_says(const auto& result, std::string_view says) {
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().message.find(says) != std::string::npos);
}

// Takes every record next() has for `prefix`.
std::vector<json::RecordSpan> drain(json::RecordSplitter& splitter, std::string_view prefix) {
  std::vector<json::RecordSpan> found;
  while (true) {
    auto record = splitter.next(prefix);
    REQUIRE_MESSAGE(record.has_value(), (record ? std::string() : record.error().message));
    if (!*record) return found;
    found.push_back(**record);
  }
}

// Hand-made body: nesting, whitespace, and strings holding braces, brackets, commas, escaped quotes and
// backslashes right before their closing quote.
const std::string kTricky =
    " \n[ {\"a\":\"}]{[,\",\"b\":[1,{\"c\":\"\\\"\"}],\"d\":\"x\\\\\"} ,\n"
    "{\"e\":{\"f\":[[],{}]},\"g\":\"\\\\\\\"}\"}\t,{} ] \r\n";

std::vector<json::RecordSpan> tricky_spans() {
  std::vector<json::RecordSpan> spans;
  const std::string_view body = kTricky;
  const std::size_t first = body.find('{');
  const std::size_t first_end = body.find("} ,") + 1;
  const std::size_t second = body.find("{\"e\"");
  const std::size_t second_end = body.find("\t,");
  const std::size_t third = body.find("{}", second_end);
  spans.push_back({0, first, first_end - first});
  spans.push_back({1, second, second_end - second});
  spans.push_back({2, third, 2});
  return spans;
}

struct Body {
  std::string_view name;  // doctest 2.4.9 prints a const char* in INFO as a pointer
  std::string text;
  std::vector<json::RecordSpan> spans;
};

std::vector<Body> bodies() {
  std::string weather, repos;
  json::append_weather_json(weather, 5);
  json::append_repos_json(repos, 3);
  return {
      {"weather, 5 records", weather, expected_spans(5, json::make_weather)},
      {"repositories, 3 records", repos, expected_spans(3, json::make_repository)},
      {"hand-made nesting and strings", kTricky, tricky_spans()},
      {"empty array", "[]", {}},
      {"empty array with spaces", " [ \n ] ", {}},
  };
}

}  // namespace

TEST_CASE("a body split in two at every byte gives exactly its records") {
  for (const Body& body : bodies()) {
    for (std::size_t cut = 0; cut <= body.text.size(); ++cut) {
      INFO(body.name << ", cut at byte " << cut);
      json::RecordSplitter splitter;
      std::vector<json::RecordSpan> found = drain(splitter, std::string_view(body.text).substr(0, cut));
      const auto rest = drain(splitter, body.text);
      found.insert(found.end(), rest.begin(), rest.end());
      CHECK(found == body.spans);
      const auto done = splitter.finish(body.text);
      CHECK_MESSAGE(done.has_value(), (done ? "" : done.error().message));
      CHECK(splitter.closed());
    }
  }
}

TEST_CASE("fed one byte at a time, a record comes out when its last byte arrives, not before") {
  for (const Body& body : bodies()) {
    INFO(body.name);
    json::RecordSplitter splitter;
    std::vector<json::RecordSpan> found;
    for (std::size_t size = 0; size <= body.text.size(); ++size) {
      // A new copy each time: the body may move between calls (a growing buffer does).
      const std::string prefix = body.text.substr(0, size);
      for (const json::RecordSpan& span : drain(splitter, prefix)) {
        CHECK(span.offset + span.length == size);
        found.push_back(span);
      }
      CHECK(splitter.scanned() == size);
    }
    CHECK(found == body.spans);
    CHECK(splitter.records() == body.spans.size());
  }
}

TEST_CASE("a body cut into random pieces gives its records") {
  std::string body;
  json::append_repos_json(body, 40);
  const auto expected = expected_spans(40, json::make_repository);
  json::SplitMix64 rng(3);
  for (int round = 0; round < 20; ++round) {
    json::RecordSplitter splitter;
    std::vector<json::RecordSpan> found;
    std::size_t size = 0;
    while (size < body.size()) {
      size = std::min(body.size(), size + 1 + static_cast<std::size_t>(rng.below(3000)));
      const auto more = drain(splitter, std::string_view(body).substr(0, size));
      found.insert(found.end(), more.begin(), more.end());
    }
    CHECK(found == expected);
    CHECK(splitter.finish(body).has_value());
  }
}

TEST_CASE("the splitter never reads past the bytes it is given") {
  // The body ends flush against a page the process may not read: any over-read crashes.
  const long page = sysconf(_SC_PAGESIZE);
  REQUIRE(page > 0);
  const auto page_size = static_cast<std::size_t>(page);
  void* memory = mmap(nullptr, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(memory != MAP_FAILED);
  char* guard = static_cast<char*>(memory) + page_size;
  REQUIRE(mprotect(guard, page_size, PROT_NONE) == 0);
  std::string weather;
  json::append_weather_json(weather, 20);
  for (const std::string& text : {weather, kTricky}) {
    REQUIRE(text.size() <= page_size);
    for (std::size_t size = 0; size <= text.size(); ++size) {
      // Each prefix ends at the guard page too.
      char* moved = guard - size;
      std::memmove(moved, text.data(), size);
      json::RecordSplitter splitter;
      (void)drain(splitter, std::string_view(moved, size));
    }
  }
  munmap(memory, 2 * page_size);
}

TEST_CASE("bad bodies give an error naming the record and the byte") {
  struct Row {
    std::string_view name;  // doctest 2.4.9 prints a const char* in INFO as a pointer
    std::string_view body;
    std::string_view message;  // the whole message
    std::size_t record;
  };
  const Row rows[] = {
      {"not an array", "x[]", "document: expected '[' at the start of the body, found 'x' at byte 0", json::kNoRecord},
      {"an array of numbers", "[1]", "record 0: expected '{' or ']' after '[', found '1' at byte 1", 0},
      {"a trailing comma", "[{},]", "record 1: expected '{' after ',', found ']' at byte 4", 1},
      {"records without a comma", "[{} {}]", "after record 0: expected ',' or ']', found '{' at byte 4", 0},
      {"bytes after the array", "[{}] x", "document: unexpected bytes after the array, found 'x' at byte 5",
       json::kNoRecord},
      {"a second ']'", "[{}]]", "document: unexpected bytes after the array, found ']' at byte 4", json::kNoRecord},
      {"a control byte", "\x01", "document: expected '[' at the start of the body, found byte 0x01 at byte 0",
       json::kNoRecord},
      {"an empty body", "", "document: the body is empty at byte 0", json::kNoRecord},
      {"only whitespace", "  ", "document: the body ends before the array starts at byte 2", json::kNoRecord},
      {"cut inside a record", R"([{"a":1)",
       "record 0: the body ends inside the record that starts at byte 1 at byte 7", 0},
      {"cut inside a string holding a brace", R"([{"a":"\"})",
       "record 0: the body ends inside the record that starts at byte 1 at byte 10", 0},
      {"cut after a comma", "[{},", "record 1: the body ends before the array is closed at byte 4", 1},
      {"cut before ']'", "[{}", "after record 0: the body ends before the array is closed at byte 3", 0},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    json::RecordSplitter splitter;
    std::optional<json::Error> error;
    while (!error) {
      auto record = splitter.next(row.body);
      if (!record) {
        error = record.error();
      } else if (!*record) {
        auto done = splitter.finish(row.body);
        REQUIRE_FALSE(done.has_value());
        error = done.error();
      }
    }
    CHECK(error->message == row.message);
    CHECK(error->record == row.record);
  }
}

TEST_CASE("an error sticks until reset()") {
  json::RecordSplitter splitter;
  REQUIRE_FALSE(splitter.next("x").has_value());
  check_error_says(splitter.next("[{}]"), "expected '['");
  splitter.reset();
  const auto fresh = drain(splitter, "[{}]");
  CHECK(fresh.size() == 1);
  CHECK(splitter.finish("[{}]").has_value());
}

TEST_CASE("a body shorter than what was already scanned is an error, not a re-scan") {
  json::RecordSplitter splitter;
  REQUIRE(splitter.next("[{\"a\":1").has_value());
  check_error_says(splitter.next("[{"), "shorter than the 7 bytes already scanned");
}

TEST_CASE("finish() refuses to end while a complete record is still to be taken") {
  json::RecordSplitter splitter;
  check_error_says(splitter.finish("[{}]"), "record 0 was still to be taken");
}
