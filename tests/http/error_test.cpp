// Tests of http/src/error.cpp: names, messages and the mapping of net/ errors.
#include <doctest/doctest.h>

#include <cerrno>
#include <set>
#include <string>

#include "ringlab/http/error.hpp"

using namespace ringlab::http;

TEST_CASE("every Errc has its own name") {
  const Errc all[] = {Errc::refused,     Errc::reset,       Errc::timeout, Errc::truncated,
                      Errc::malformed,   Errc::header_too_large, Errc::body_too_large,
                      Errc::unsupported, Errc::bad_url,     Errc::sink,    Errc::io};
  std::set<std::string> names;
  for (Errc code : all) names.insert(errc_name(code));
  CHECK(names.size() == std::size(all));
  CHECK(std::string(errc_name(Errc::header_too_large)) == "header_too_large");
  CHECK(std::string(errc_name(static_cast<Errc>(999))) == "unknown");
}

TEST_CASE("Error::message says kind, peer and detail") {
  CHECK(Error{Errc::malformed, "llhttp: bad at byte 3", "127.0.0.1:8080"}.message() ==
        "malformed 127.0.0.1:8080: llhttp: bad at byte 3");
  CHECK(Error{Errc::bad_url, "'x': expected scheme://host", ""}.message() == "bad_url: 'x': expected scheme://host");
  CHECK(Error{Errc::timeout, "", "[::1]:80"}.message() == "timeout [::1]:80");
}

TEST_CASE("Error::from maps errno values to kinds and keeps op and peer") {
  struct Row {
    int code;
    Errc expected;
    const char* detail;
  };
  const Row rows[] = {
      {ECONNREFUSED, Errc::refused, "connect: Connection refused (ECONNREFUSED)"},
      {ECONNRESET, Errc::reset, "connect: Connection reset by peer (ECONNRESET)"},
      {EPIPE, Errc::reset, "connect: Broken pipe (EPIPE)"},
      {ETIMEDOUT, Errc::timeout, "connect: Connection timed out (ETIMEDOUT)"},
      {ECANCELED, Errc::timeout, "connect: Operation canceled (ECANCELED)"},
      {ETIME, Errc::timeout, "connect: Timer expired (ETIME)"},
      {EMFILE, Errc::io, "connect: Too many open files (EMFILE)"},
      {ENOMEM, Errc::io, "connect: Cannot allocate memory (ENOMEM)"},
      {99999, Errc::io, "connect: Unknown error (E?)"},
  };
  for (const Row& row : rows) {
    INFO("errno " << row.code);
    const Error error = Error::from(ringlab::net::Error{"connect", row.code, "127.0.0.1:1"});
    CHECK(error.code == row.expected);
    CHECK(error.detail == row.detail);
    CHECK(error.peer == "127.0.0.1:1");
  }
}

TEST_CASE("fail() builds the error branch of a Result") {
  Result<int> result = fail(Errc::sink, "full", "peer");
  REQUIRE_FALSE(result);
  CHECK(result.error().code == Errc::sink);
  CHECK(result.error().detail == "full");
  CHECK(result.error().peer == "peer");
}
