// token_loop: jos's Version 8. His ProjectDeserializer reads Newtonsoft's JsonTextReader token by token:
// on StartObject a new GitHubRepositoryDto, on PropertyName the name kept, on String or Integer a switch on
// that name ("name", "url", "stars"), on EndObject the DTO added to the list. Here rapidjson::Reader reads
// the tokens (in situ, with rapidjson_fresh's fast flags, so that next to rapidjson_fresh, whose handler is the
// generic table-driven one of rapidjson_handler.hpp, only the deserializer differs) and a handler written
// for this one DTO does what his loop does. Every other key's value is skipped as his switch ignores it:
// the tags array by its depth, the floats and the other strings by the name that matches nothing.
//
// Errors (json/'s words, json_libraries.hpp): a body that is not an array of objects, one of the three
// keys with a value of another type, a record without one of them. His loop would leave such a DTO with
// its defaults; ringlab's readers all refuse it, so the rows' checksums prove the same thing.
#include "rapidjson_handler.hpp"  // first: it sets rapidjson's SIMD scans before any rapidjson header

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "json_libraries.hpp"
#include "ringlab/json/fields.hpp"

namespace ringlab::strategies::detail {
namespace {

// The property the last key named, as his switch tells them apart.
enum class Property { other, name, url, stars };

class TokenLoop : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TokenLoop> {
 public:
  TokenLoop(std::pmr::vector<json::ProfileStars>& out, rapidjson::InsituStringStream& stream) noexcept
      : out_(&out), stream_(&stream) {}

  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] json::Error& error() noexcept { return error_; }
  [[nodiscard]] std::size_t record() const noexcept { return depth_ >= 2 ? n_ : json::kNoRecord; }

  // --- the tokens ------------------------------------------------------------------------------------
  bool StartArray() {
    if (++depth_ > rapidjson_sax::kMaxDepth) return fail({}, "DEPTH_ERROR (nested too deep)");
    if (depth_ == 1) return true;  // the list
    return value("an array", depth_ - 1);
  }
  bool EndArray(rapidjson::SizeType) {
    if (--depth_ == 0) out_->erase(out_->begin() + static_cast<std::ptrdiff_t>(n_), out_->end());
    return true;
  }
  bool StartObject() {
    if (++depth_ > rapidjson_sax::kMaxDepth) return fail({}, "DEPTH_ERROR (nested too deep)");
    if (depth_ == 1) return fail({}, "INCORRECT_TYPE (the body is not an array)");
    if (depth_ == 2) {  // a new DTO
      record_ = n_ < out_->size() ? &(*out_)[n_] : &out_->emplace_back();
      record_start_ = stream_->Tell() - 1;
      seen_ = 0;
      property_ = Property::other;
      return true;
    }
    return value("an object", depth_ - 1);
  }
  bool Key(const char* text, rapidjson::SizeType length, bool) {
    if (depth_ != 2) return true;  // a key inside a skipped value
    const std::string_view key(text, length);
    property_ = key == "name" ? Property::name : key == "url" ? Property::url : key == "stars" ? Property::stars
                                                                                               : Property::other;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (depth_ == 2 && seen_ != json::fields::all_of<3>()) {  // still in the DTO: the error names it
      return fail_at(json::fields::first_missing(seen_, json::fields::kProfileStars), "NO_SUCH_FIELD (missing)",
                     record_start_);
    }
    if (--depth_ == 1) ++n_;
    return true;
  }
  bool String(const char* text, rapidjson::SizeType length, bool) {
    if (depth_ != 2 || (property_ != Property::name && property_ != Property::url)) return value("a string", depth_);
    std::pmr::string& field = property_ == Property::name ? record_->name : record_->url;
    field.assign(text, length);
    seen_ |= bit(property_);
    return true;
  }
  bool Int(int i) { return integer(i); }
  bool Uint(unsigned u) { return integer(u); }
  bool Int64(int64_t i) { return integer(i); }
  bool Uint64(uint64_t u) {
    if (u > static_cast<uint64_t>(INT64_MAX)) return value("an integer beyond int64", depth_);
    return integer(static_cast<int64_t>(u));
  }
  bool Double(double) { return value("a number with a fraction or exponent", depth_); }
  bool Bool(bool) { return value("a boolean", depth_); }
  bool Null() { return value("null", depth_); }

 private:
  static uint32_t bit(Property property) noexcept {
    return uint32_t{1} << (static_cast<int>(property) - 1);  // name, url, stars: kProfileStars' order
  }
  static std::string_view name_of(Property property) noexcept {
    return json::fields::kProfileStars[static_cast<std::size_t>(static_cast<int>(property) - 1)];
  }

  bool integer(int64_t stars) {
    if (depth_ != 2 || property_ != Property::stars) return value("an integer", depth_);
    record_->stars = stars;
    seen_ |= bit(property_);
    return true;
  }
  // A value the loop does not take, found in a container at depth `in` (1: the list, 2: a DTO's object):
  // inside a skipped value or under another key, ignored; as a record, or under one of the three keys, the
  // wrong type.
  bool value(std::string_view kind, std::size_t in) {
    if (in == 0) return fail({}, "INCORRECT_TYPE (the body is not an array)");
    if (in == 1) return fail({}, "INCORRECT_TYPE (expected an object, got " + std::string(kind) + ")");
    if (in == 2 && property_ != Property::other) {
      const std::string_view expected = property_ == Property::stars ? "an integer" : "a string";
      return fail(name_of(property_),
                  "INCORRECT_TYPE (expected " + std::string(expected) + ", got " + std::string(kind) + ")");
    }
    return true;
  }
  [[gnu::cold]] bool fail(const FieldPath& field, std::string_view what) {
    return fail_at(field, what, stream_->Tell());
  }
  [[gnu::cold]] bool fail_at(const FieldPath& field, std::string_view what, std::size_t offset) {
    error_ = library_error(record(), field, what, offset);
    failed_ = true;
    return false;
  }

  std::pmr::vector<json::ProfileStars>* out_;
  rapidjson::InsituStringStream* stream_;
  json::ProfileStars* record_ = nullptr;
  std::size_t depth_ = 0;  // 1: in the list; 2: in a DTO's object; more: in a value skipped
  std::size_t n_ = 0;      // DTOs completed
  std::size_t record_start_ = 0;
  uint32_t seen_ = 0;
  Property property_ = Property::other;
  json::Error error_;
  bool failed_ = false;
};

json::Status parse_body(rapidjson::Reader& reader, base::PaddedBuffer& body,
                        std::pmr::vector<json::ProfileStars>& out) {
  return rapidjson_sax::parse_insitu<rapidjson_sax::kFastFlags>(
      reader, body, [&out](rapidjson::InsituStringStream& stream) { return TokenLoop(out, stream); });
}

constexpr std::string_view kProfilesOnly = "token_loop is jos's Version 8 loop over his DTO's keys: /profiles records only";

// LibraryStrategy's parser: jos's DTO only.
struct TokenLoopLibrary {
  static std::string_view skip(Payload payload) noexcept { return payload == Payload::profiles ? "" : kProfilesOnly; }

  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<json::ProfileStars>& out) {
    return parse_body(reader, body, out);
  }
  template <class Record>
  json::Status parse(base::PaddedBuffer&, std::pmr::vector<Record>&) {  // skipped before it can be called
    return std::unexpected(library_error(json::kNoRecord, {}, kProfilesOnly));
  }
  rapidjson::Reader reader;  // kept across bodies, as rapidjson.cpp's
};

}  // namespace

json::Status token_loop_parse(base::PaddedBuffer& body, std::pmr::vector<json::ProfileStars>& out) {
  rapidjson::Reader reader;
  return parse_body(reader, body, out);
}

std::unique_ptr<Strategy> make_token_loop(const Recipe& recipe) {
  return std::make_unique<LibraryStrategy<TokenLoopLibrary>>(recipe);
}

}  // namespace ringlab::strategies::detail
