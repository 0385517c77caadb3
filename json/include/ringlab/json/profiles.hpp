#pragma once
// The profiles payload (GET /profiles): a repository's stars, name and url followed by a generated person's
// profile, as the records of joseftw's jos.httpclient GitHub dummy API are (the jos suite and seed, named
// after his write-up, read them), and the DTO every one of his Versions deserializes them into.
//
// ProfileRecord is a record as his repositories.N.json files list it: 21 keys, in this order,
//   stars, name, url, _id, index, guid, isActive, balance, picture, age, eyeColor, gender, company, email,
//   phone, address, about, registered, latitude, longitude, tags
// (integers, strings, a bool, two floating-point numbers and an array of seven strings; "about" ends in
// "\r\n", so every body has escapes). Only the generator and the serializer make them; no reader fills one.
//
// ProfileStars is his GitHubRepositoryDto, {Name, Url, Stars}: the three keys name, url and stars of
// each record, the other 18 left to the JSON library to skip. Every Version reads into it, so every
// row of ringlab reads these three fields and no others, and their checksums (checksum.hpp,
// checksum_profiles) agree. stars is an int in his class; an int64_t here, as ringlab's other integers.
// ProfileStarsView is the viewing form (string views into the body, as models.hpp's views).
//
// Allocation: fill_profile() overwrites a record in place and reuses its strings' capacity. ProfileStars is
// allocator-aware as the records of models.hpp are.
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ringlab/json/models.hpp"

namespace ringlab::json {

struct ProfileRecord {
  int64_t stars = 0;
  std::string name;     // "COMSTRUCT": the company's name in capitals
  std::string url;      // "https://github.com/eiusmod"
  std::string id;       // JSON key "_id": 24 hex digits
  int64_t index = 0;    // the record's position in the body
  std::string guid;     // "f899bfc9-c70f-48a6-9507-1c0475894559"
  bool is_active = false;  // "isActive"
  std::string balance;  // "$3,225.92"
  std::string picture;  // "http://placehold.it/32x32"
  int64_t age = 0;
  std::string eye_color;  // "eyeColor"
  std::string gender;
  std::string company;
  std::string email;
  std::string phone;    // "+1 (880) 583-2876"
  std::string address;  // "309 Vine Street, Crenshaw, Illinois, 9133"
  std::string about;    // lorem ipsum sentences ending in "\r\n"
  std::string registered;  // "2015-12-16T08:37:58 -01:00"
  double latitude = 0.0;   // six decimals, as his files have them
  double longitude = 0.0;
  std::vector<std::string> tags;  // seven lorem ipsum words

  friend bool operator==(const ProfileRecord&, const ProfileRecord&) = default;
};

// The generator's record `index` (generate.hpp's rules: it depends on the index alone).
void fill_profile(std::size_t index, ProfileRecord& out);
[[nodiscard]] ProfileRecord make_profile(std::size_t index);

// "[{...},{...}]" of records 0..count-1 ("[]" for 0), compact, keys in the order above, doubles in their
// shortest round-trip form, strings escaped as serialize.hpp escapes them; NDJSON: one record a line.
void append_profiles_json(std::string& out, std::size_t count);
void append_profiles_ndjson(std::string& out, std::size_t count);
void append_json(std::string& out, const ProfileRecord& record);

struct ProfileStars {
  using allocator_type = std::pmr::polymorphic_allocator<>;

  std::pmr::string name;
  std::pmr::string url;
  int64_t stars = 0;

  ProfileStars() = default;
  explicit ProfileStars(const allocator_type& alloc) : name(alloc), url(alloc) {}
  ProfileStars(const ProfileStars& other, const allocator_type& alloc)
      : name(other.name, alloc), url(other.url, alloc), stars(other.stars) {}
  ProfileStars(ProfileStars&& other, const allocator_type& alloc)
      : name(std::move(other.name), alloc), url(std::move(other.url), alloc), stars(other.stars) {}

  [[nodiscard]] allocator_type get_allocator() const noexcept { return name.get_allocator(); }
  friend bool operator==(const ProfileStars&, const ProfileStars&) = default;
};

struct ProfileStarsView {
  JsonStringView name;
  JsonStringView url;
  int64_t stars = 0;
};

// In field order (fields::ProfileStars, fields::kProfileStars): the order of his class and of the checksum.
template <class Form>
constexpr auto profile_members() noexcept {
  return std::tuple{&Form::name, &Form::url, &Form::stars};
}

}  // namespace ringlab::json
