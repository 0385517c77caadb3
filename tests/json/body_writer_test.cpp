// tests json/src/body_writer.cpp
#include "ringlab/json/body_writer.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ringlab/json/profiles.hpp"
#include "ringlab/json/serialize.hpp"

namespace json = ringlab::json;

namespace {

struct Body {
  json::RecordKind kind;
  json::BodyLayout layout;
  std::size_t count;
  std::string whole;  // what the append_* function writes for the same records
};

std::vector<Body> bodies() {
  const auto whole = [](void (*append)(std::string&, std::size_t), std::size_t count) {
    std::string out;
    append(out, count);
    return out;
  };
  using json::BodyLayout;
  using json::RecordKind;
  std::vector<Body> out;
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{57}}) {
    out.push_back({RecordKind::weather, BodyLayout::array, count, whole(json::append_weather_json, count)});
    out.push_back({RecordKind::weather, BodyLayout::lines, count, whole(json::append_weather_ndjson, count)});
    out.push_back({RecordKind::repos, BodyLayout::array, count, whole(json::append_repos_json, count)});
    out.push_back({RecordKind::repos, BodyLayout::lines, count, whole(json::append_repos_ndjson, count)});
    out.push_back({RecordKind::github, BodyLayout::array, count, whole(json::append_github_json, count)});
    out.push_back({RecordKind::github, BodyLayout::lines, count, whole(json::append_github_ndjson, count)});
    out.push_back({RecordKind::profiles, BodyLayout::array, count, whole(json::append_profiles_json, count)});
    out.push_back({RecordKind::profiles, BodyLayout::lines, count, whole(json::append_profiles_ndjson, count)});
  }
  return out;
}

}  // namespace

TEST_CASE("pieces of any size concatenate to the whole body, each ending after a record") {
  json::BodyWriter writer;  // one writer for every body: start() leaves nothing of the previous one
  for (const Body& body : bodies()) {
    for (std::size_t at_least : {std::size_t{1}, std::size_t{100}, std::size_t{4096}, SIZE_MAX}) {
      INFO("kind ", static_cast<int>(body.kind), " layout ", static_cast<int>(body.layout), " count ", body.count,
           " at least ", at_least);
      writer.start(body.kind, body.layout, body.count);
      std::string joined;
      std::vector<std::string> pieces;
      bool done = false;
      while (!done && pieces.size() <= body.count + 1) {
        std::string piece;
        done = writer.write(piece, at_least);
        pieces.push_back(piece);
        joined += piece;
      }
      REQUIRE(done);
      CHECK(writer.done());
      CHECK(writer.records_written() == body.count);
      CHECK(joined == body.whole);
      // Every piece but the last reached the size asked for and ends where a record ends.
      for (std::size_t i = 0; i + 1 < pieces.size(); ++i) {
        CHECK(pieces[i].size() >= at_least);
        const char end = pieces[i].back();
        CHECK((body.layout == json::BodyLayout::lines ? end == '\n' : end == '}'));
      }
      // A complete body stays complete and appends nothing until the next start().
      std::string after;
      CHECK(writer.write(after, at_least));
      CHECK(after.empty());
    }
  }
}

TEST_CASE("a piece is appended after what the string already holds and is counted from there") {
  json::BodyWriter writer;
  writer.start(json::RecordKind::weather, json::BodyLayout::array, 100);
  std::string out = "prefix";
  CHECK_FALSE(writer.write(out, 1));
  // One record asked for: '[' and the first record, whatever the prefix's length.
  CHECK(out.substr(0, 7) == "prefix[");
  CHECK(out.back() == '}');
  CHECK(writer.records_written() == 1);
}

TEST_CASE("a writer that was never started writes nothing") {
  json::BodyWriter writer;
  std::string out;
  CHECK(writer.done());
  CHECK(writer.write(out, 10));
  CHECK(out.empty());
}
