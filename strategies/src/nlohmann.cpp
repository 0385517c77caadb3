// nlohmann (a JSON library swapped in over the same body, as jos's Version 9 and 10 swap System.Text.Json
// for Utf8Json): the body is received as presized's (in place, into a padded buffer reused across requests),
// parsed by nlohmann::json::parse into a DOM, then mapped field by field onto owning models reused in place.
// Per request: the DOM (a node per value, a std::map per object, a std::string per string and key) is built
// and freed; the records allocate nothing more once they have the body's shape. The mapping reads the DOM
// without exceptions (type checks, then get_ptr); nlohmann's parse errors, which it throws, are caught here
// and become json::Error values.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "json_libraries.hpp"
#include "ringlab/json/fields.hpp"

namespace ringlab::strategies::detail {
namespace {

using Json = nlohmann::json;
using Allocator = std::pmr::polymorphic_allocator<>;

// "a string", "an object": what a DOM value is, for errors.
std::string_view kind_of(const Json& value) noexcept {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number with a fraction or exponent";
    case Json::value_t::binary: return "binary";
    case Json::value_t::discarded: return "a discarded value";
  }
  return "an unknown value";
}

// Maps a DOM onto records. Each reader returns false after recording the error, which names the record
// being read and the field.
class Mapper {
 public:
  explicit Mapper(json::Error& error) noexcept : error_(&error) {}

  void at_record(std::size_t record) noexcept { record_ = record; }

  [[gnu::cold]] bool fail(const FieldPath& field, std::string_view what) {
    *error_ = library_error(record_, field, what);
    return false;
  }
  [[gnu::cold]] bool wrong_type(const FieldPath& field, std::string_view expected, const Json& got) {
    return fail(field,
                "INCORRECT_TYPE (expected " + std::string(expected) + ", got " + std::string(kind_of(got)) + ")");
  }

  // The value of `field` in `object` (an object), or null after a NO_SUCH_FIELD error.
  const Json* member(const Json& object, const FieldPath& field) {
    const auto it = object.find(field.name);
    if (it == object.end()) {
      fail(field, "NO_SUCH_FIELD (missing)");
      return nullptr;
    }
    return &*it;
  }

  template <class T>
  bool get(const Json& object, const FieldPath& field, T& out) {
    const Json* value = member(object, field);
    return value != nullptr && read(*value, field, out);
  }

  // Unsigned first: nlohmann's get_ptr<number_integer_t*> also answers for an unsigned value, whose bits it
  // would read as signed.
  bool read(const Json& value, const FieldPath& field, int64_t& out) {
    if (value.is_number_unsigned()) {
      const uint64_t unsigned_integer = *value.get_ptr<const Json::number_unsigned_t*>();
      if (unsigned_integer > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return fail(field, "NUMBER_OUT_OF_RANGE (" + std::to_string(unsigned_integer) + " does not fit int64)");
      }
      out = static_cast<int64_t>(unsigned_integer);
      return true;
    }
    if (value.is_number_integer()) {
      out = *value.get_ptr<const Json::number_integer_t*>();
      return true;
    }
    return wrong_type(field, "an integer", value);
  }
  bool read(const Json& value, const FieldPath& field, int32_t& out) {
    int64_t wide = 0;
    if (!read(value, field, wide)) return false;
    if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
      return fail(field, "NUMBER_OUT_OF_RANGE (" + std::to_string(wide) + " does not fit int32)");
    }
    out = static_cast<int32_t>(wide);
    return true;
  }
  bool read(const Json& value, const FieldPath& field, double& out) {
    if (value.is_number_float()) {
      out = *value.get_ptr<const Json::number_float_t*>();
    } else if (value.is_number_unsigned()) {
      out = static_cast<double>(*value.get_ptr<const Json::number_unsigned_t*>());
    } else if (value.is_number_integer()) {
      out = static_cast<double>(*value.get_ptr<const Json::number_integer_t*>());
    } else {
      return wrong_type(field, "a number", value);
    }
    return true;
  }
  bool read(const Json& value, const FieldPath& field, bool& out) {
    const auto* boolean = value.get_ptr<const Json::boolean_t*>();
    if (boolean == nullptr) return wrong_type(field, "a boolean", value);
    out = *boolean;
    return true;
  }
  // Assigned, not replaced: the record's string keeps its capacity.
  bool read(const Json& value, const FieldPath& field, std::pmr::string& out) {
    const auto* text = value.get_ptr<const Json::string_t*>();
    if (text == nullptr) return wrong_type(field, "a string", value);
    out.assign(*text);
    return true;
  }
  bool read_optional(const Json& value, const FieldPath& field, std::optional<std::pmr::string>& out,
                     const Allocator& alloc) {
    if (value.is_null()) {
      out.reset();
      return true;
    }
    if (!value.is_string()) return wrong_type(field, "a string or null", value);
    if (!out) out.emplace(alloc);
    return read(value, field, *out);
  }

  bool record(const Json& object, json::WeatherForecast& out) {
    return get(object, "date", out.date) && get(object, "temperatureC", out.temperature_c) &&
           get(object, "summary", out.summary) && get(object, "temperatureF", out.temperature_f);
  }

  // A flat record's field by its type: nullable text may be null.
  template <class T>
  bool field(const Json& object, std::string_view name, T& out, const Allocator&) {
    return get(object, name, out);
  }
  bool field(const Json& object, std::string_view name, std::optional<std::pmr::string>& out,
             const Allocator& alloc) {
    const Json* value = member(object, name);
    return value != nullptr && read_optional(*value, name, out, alloc);
  }

  // A flat record, every field a scalar: member I of what kMembersOf() lists (json::github_members,
  // json::profile_members) read from key I of `keys`, in that order.
  template <auto kMembersOf, class Record, std::size_t N>
  bool flat_record(const Json& object, const std::array<std::string_view, N>& keys, Record& out) {
    const Allocator alloc = out.get_allocator();
    constexpr auto members = kMembersOf();
    static_assert(std::tuple_size_v<decltype(members)> == N);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (field(object, keys[I], out.*std::get<I>(members), alloc) && ...);
    }(std::make_index_sequence<N>{});
  }

  // The 22 fields of a github record.
  bool record(const Json& object, json::GithubRepository& out) {
    return flat_record<&json::github_members<json::GithubRepository>>(object, json::fields::kGithub, out);
  }

  // jos's DTO: name, url and stars; the other 18 keys stay in the DOM, unread.
  bool record(const Json& object, json::ProfileStars& out) {
    return flat_record<&json::profile_members<json::ProfileStars>>(object, json::fields::kProfileStars, out);
  }

  bool owner(const Json& object, json::Owner& out) {
    const Json* owner = member(object, "owner");
    if (owner == nullptr) return false;
    if (!owner->is_object()) return wrong_type("owner", "an object", *owner);
    return get(*owner, {"owner", "login"}, out.login) && get(*owner, {"owner", "id"}, out.id) &&
           get(*owner, {"owner", "node_id"}, out.node_id) && get(*owner, {"owner", "avatar_url"}, out.avatar_url) &&
           get(*owner, {"owner", "html_url"}, out.html_url) && get(*owner, {"owner", "type"}, out.type) &&
           get(*owner, {"owner", "site_admin"}, out.site_admin);
  }

  bool license(const Json& object, std::optional<json::License>& out, const Allocator& alloc) {
    const Json* license = member(object, "license");
    if (license == nullptr) return false;
    if (license->is_null()) {
      out.reset();
      return true;
    }
    if (!license->is_object()) return wrong_type("license", "an object or null", *license);
    if (!out) out.emplace(alloc);
    return get(*license, {"license", "key"}, out->key) && get(*license, {"license", "name"}, out->name) &&
           get(*license, {"license", "spdx_id"}, out->spdx_id);
  }

  // Overwritten in place, so the strings' capacity is reused from one parse to the next.
  bool topics(const Json& object, std::pmr::vector<std::pmr::string>& out) {
    const Json* topics = member(object, "topics");
    if (topics == nullptr) return false;
    if (!topics->is_array()) return wrong_type("topics", "an array", *topics);
    std::size_t n = 0;
    for (const Json& topic : *topics) {
      if (!read(topic, {"topics", n}, n < out.size() ? out[n] : out.emplace_back())) return false;
      ++n;
    }
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
    return true;
  }

  bool record(const Json& object, json::Repository& out) {
    const Allocator alloc = out.get_allocator();
    const auto nullable = [&](std::string_view name, std::optional<std::pmr::string>& field) {
      const Json* value = member(object, name);
      return value != nullptr && read_optional(*value, name, field, alloc);
    };
    return get(object, "id", out.id) && get(object, "node_id", out.node_id) &&
           get(object, "name", out.name) && get(object, "full_name", out.full_name) &&
           get(object, "private", out.is_private) && owner(object, out.owner) &&
           get(object, "html_url", out.html_url) && get(object, "description", out.description) &&
           get(object, "fork", out.fork) && get(object, "url", out.url) &&
           get(object, "created_at", out.created_at) && get(object, "updated_at", out.updated_at) &&
           get(object, "pushed_at", out.pushed_at) && nullable("homepage", out.homepage) &&
           get(object, "size", out.size) && get(object, "stargazers_count", out.stargazers_count) &&
           get(object, "watchers_count", out.watchers_count) && nullable("language", out.language) &&
           get(object, "forks_count", out.forks_count) &&
           get(object, "open_issues_count", out.open_issues_count) &&
           get(object, "archived", out.archived) &&
           get(object, "default_branch", out.default_branch) && topics(object, out.topics) &&
           license(object, out.license, alloc) && get(object, "score", out.score);
  }

 private:
  json::Error* error_;
  std::size_t record_ = json::kNoRecord;
};

template <class Record>
json::Status parse_body(std::string_view body, std::pmr::vector<Record>& out) {
  Json document;
  try {
    document = Json::parse(body.begin(), body.end());
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1: the offset of the character it stopped at.
    return std::unexpected(library_error(json::kNoRecord, {}, std::string("nlohmann: ") + e.what(),
                                         e.byte > 0 ? e.byte - 1 : 0));
  } catch (const Json::exception& e) {
    return std::unexpected(library_error(json::kNoRecord, {}, std::string("nlohmann: ") + e.what()));
  } catch (const std::bad_alloc&) {
    return std::unexpected(library_error(json::kNoRecord, {}, "nlohmann: out of memory building the DOM"));
  }
  json::Error error;
  Mapper mapper(error);
  if (!document.is_array()) {
    mapper.wrong_type({}, "an array", document);
    return std::unexpected(std::move(error));
  }
  std::size_t n = 0;
  for (const Json& element : document) {
    mapper.at_record(n);
    if (!element.is_object()) {
      mapper.wrong_type({}, "an object", element);
      return std::unexpected(std::move(error));
    }
    if (!mapper.record(element, n < out.size() ? out[n] : out.emplace_back())) return std::unexpected(std::move(error));
    ++n;
  }
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
  return {};
}

// LibraryStrategy's parser: the DOM is built and freed per body, nothing is kept.
struct NlohmannLibrary {
  static constexpr bool kInSitu = false;  // LibraryFloor: the body is only read
  template <class Record>
  json::Status parse(base::PaddedBuffer& body, std::pmr::vector<Record>& out) {
    return parse_body(body.view(), out);
  }
};

}  // namespace

json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::WeatherForecast>& out) {
  return parse_body(body, out);
}
json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::Repository>& out) {
  return parse_body(body, out);
}
json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::GithubRepository>& out) {
  return parse_body(body, out);
}
json::Status nlohmann_parse(std::string_view body, std::pmr::vector<json::ProfileStars>& out) {
  return parse_body(body, out);
}

std::unique_ptr<Strategy> make_nlohmann(const Recipe& recipe) {
  return std::make_unique<LibraryStrategy<NlohmannLibrary>>(recipe);
}
std::unique_ptr<Strategy> make_floor_parse_nlohmann(const Recipe& recipe) {
  return std::make_unique<LibraryFloor<NlohmannLibrary>>(recipe);
}

}  // namespace ringlab::strategies::detail
