// Tests of http/src/headers.cpp: header lookup and the token and case helpers.
#include <doctest/doctest.h>

#include <string>

#include "ringlab/http/headers.hpp"

using namespace ringlab::http;

TEST_CASE("Headers::find is case-insensitive and returns the first match") {
  Headers headers;
  headers.items[0] = {"Content-Type", "application/json"};
  headers.items[1] = {"content-length", "12"};
  headers.items[2] = {"X-Dup", "first"};
  headers.items[3] = {"x-dup", "second"};
  headers.items[4] = {"Not-Counted", "beyond count"};
  headers.count = 4;

  struct Row {
    const char* name;
    std::optional<std::string_view> value;
  };
  const Row rows[] = {
      {"Content-Type", "application/json"},
      {"content-type", "application/json"},
      {"CONTENT-LENGTH", "12"},
      {"x-DUP", "first"},
      {"Content-Typ", std::nullopt},
      {"Content-Types", std::nullopt},
      {"", std::nullopt},
      {"Not-Counted", std::nullopt},  // only the first `count` items are headers
  };
  for (const Row& row : rows) {
    INFO("name: '" << std::string(row.name) << "'");
    CHECK(headers.find(row.name) == row.value);
  }
}

TEST_CASE("Headers::find on no headers finds nothing") {
  const Headers headers;
  CHECK_FALSE(headers.find("Host"));
  CHECK(headers.begin() == headers.end());
}

TEST_CASE("iequals folds ASCII letters only") {
  CHECK(iequals("Keep-Alive", "keep-alive"));
  CHECK(iequals("", ""));
  CHECK_FALSE(iequals("close", "closed"));
  // '@' and '`' sit next to 'A' and 'a' ... 'Z' and 'z': folding by bit tricks would confuse them.
  CHECK_FALSE(iequals("@", "`"));
  CHECK_FALSE(iequals("[", "{"));
  CHECK_FALSE(iequals("\xc3\x89", "\xc3\xa9"));  // no folding beyond ASCII
}

TEST_CASE("is_token accepts tchar and nothing else") {
  CHECK(is_token("Content-Length"));
  CHECK(is_token("!#$%&'*+-.^_`|~09azAZ"));
  CHECK_FALSE(is_token(""));
  using namespace std::string_view_literals;
  for (char c : " \t\r\n\"(),/:;<=>?@[\\]{}\x7f\x80\0"sv) {
    INFO("byte " << int(static_cast<unsigned char>(c)));
    CHECK_FALSE(is_token(std::string("a") + c));
  }
}
