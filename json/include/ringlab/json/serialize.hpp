#pragma once
// JSON and NDJSON bodies of the deterministic records (generate.hpp), for the server.
//
// Output format, as System.Text.Json writes it with its web defaults: compact (no spaces, no newline
// except between NDJSON records), keys in the order of the model's fields, camelCase weather keys
// (date, temperatureC, summary, temperatureF) and GitHub's snake_case repository and github keys (null
// for an empty optional). Numbers: integers in decimal, doubles as the shortest text that reads back
// to the same double (std::to_chars). Strings: the RFC 8259 short escapes for " \ \b \f \n \r \t,
// \u00XX for other control characters, and every non-ASCII character as \uXXXX (UTF-16, a surrogate
// pair beyond U+FFFF), as System.Text.Json's default encoder does: that is what puts "\u00E9" into
// descriptions. Bytes that are not valid UTF-8 are written as \uFFFD.
//
// Allocation: every function appends to `out`; the only allocation is out's growth (reserve first to
// avoid it), plus, for repositories and github records, one scratch record per call whose strings grow
// over the first few records. Nothing is allocated per record after that.
#include <cstddef>
#include <string>
#include <string_view>

#include "ringlab/json/generate.hpp"
#include "ringlab/json/models.hpp"

namespace ringlab::json {

// "[{...},{...}]" with records 0..count-1; "[]" for count 0.
void append_weather_json(std::string& out, std::size_t count);
void append_repos_json(std::string& out, std::size_t count);
void append_github_json(std::string& out, std::size_t count);
// One record per line, each line ended by '\n'; empty for count 0.
void append_weather_ndjson(std::string& out, std::size_t count);
void append_repos_ndjson(std::string& out, std::size_t count);
void append_github_ndjson(std::string& out, std::size_t count);

// One record, as an object.
void append_json(std::string& out, const WeatherForecast& record);
void append_json(std::string& out, const Repository& record);
void append_json(std::string& out, const GithubRepository& record);
// One JSON string, quotes included, escaped as above.
void append_json_string(std::string& out, std::string_view utf8);

}  // namespace ringlab::json
