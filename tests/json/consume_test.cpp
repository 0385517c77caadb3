// tests json/include/ringlab/json/consume.hpp: the fold every strategy applies to its records inside the
// clock. It must see every record (count and order) and the fields it reads, and nothing more.
#include "ringlab/json/consume.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "ringlab/json/generate.hpp"

namespace json = ringlab::json;

namespace {

std::vector<json::WeatherForecast> records(std::size_t count) {
  std::vector<json::WeatherForecast> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(json::make_weather(i));
  return out;
}

uint64_t consumed(const std::vector<json::WeatherForecast>& r) {
  return json::consume(std::span<const json::WeatherForecast>(r));
}

}  // namespace

TEST_CASE("the consumption fold sees every record, their order and the fields it reads") {
  const auto ten = records(10);
  CHECK(consumed(ten) == consumed(records(10)));  // deterministic
  CHECK(consumed(ten) != consumed(records(9)));   // one record fewer
  auto swapped = ten;
  std::swap(swapped[2], swapped[7]);
  CHECK(consumed(swapped) != consumed(ten));  // order
  auto warmer = ten;
  warmer[4].temperature_c += 1;
  CHECK(consumed(warmer) != consumed(ten));  // a field it reads
  CHECK(consumed({}) == 0);
}

TEST_CASE("incremental and whole-span consumption agree, and views of plain text consume as owning records") {
  const auto five = records(5);
  json::Consumer one_by_one;
  for (const auto& r : five) one_by_one.add(r);
  CHECK(one_by_one.records() == 5);
  CHECK(one_by_one.value() == consumed(five));

  std::vector<json::WeatherView> views;
  for (const auto& r : five) {
    views.push_back({{r.date, false}, r.temperature_c, {r.summary, false}, r.temperature_f});
  }
  CHECK(json::consume(std::span<const json::WeatherView>(views)) == consumed(five));
}
