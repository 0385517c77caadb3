// ResponseParser's refusals and limits: malformed and unsupported responses, the head, header-count
// and body limits, and errors that stick until reset().
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parser_rows.hpp"
#include "ringlab/http/parser.hpp"

using namespace ringlab::http;
using namespace ringlab::http::test;

TEST_CASE("response parser: malformed and unsupported responses") {
  check_rows<ResponseParser, ResponseRecorder>({
      {"status code with a letter", "HTTP/1.1 2x0 OK\r\n\r\n", {}, Errc::malformed,
       "llhttp: Invalid response status (HPE_INVALID_STATUS)", 10},
      {"bare LF line endings", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", {}, Errc::malformed,
       "llhttp: Invalid header value char (HPE_INVALID_HEADER_TOKEN)", 33},
      {"space inside a header name (llhttp 8.1 lets it through)", "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", {},
       Errc::malformed, "header name is not a token: 'Bad Name'"},
      {"space before the colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", {}, Errc::malformed,
       "llhttp: Invalid header field char (HPE_INVALID_HEADER_TOKEN)", 32},
      {"unknown protocol version", "HTTP/3.1 200 OK\r\n\r\n", {}, Errc::malformed,
       "llhttp: Invalid HTTP version (HPE_INVALID_VERSION)"},
      {"HTTP/2 connection preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", {}, Errc::malformed,
       "llhttp: Expected HTTP/ (HPE_INVALID_CONSTANT)", 0},
      {"bytes after a Connection: close response",
       "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n",
       {response(200, "OK", {.headers = {{"Connection", "close"}, {"Content-Length", "0"}}, .length = 0, .keep_alive = false})},
       Errc::malformed, "bytes after a message that closes the connection", 57},
      {"protocol upgrade", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", {},
       Errc::unsupported, "protocol upgrade or CONNECT"},
      {"peer closed inside the head", "HTTP/1.1 200 OK\r\nContent-Le", {}, Errc::truncated,
       "peer closed the connection in the head, after 27 bytes", 27, kFinish},
      {"peer closed inside a chunked body", kChunkedHead + "5\r\nhel",
       cut_chunked_response("hel"),
       Errc::truncated, "peer closed the connection in a chunked body, after 3 body bytes", 53, kFinish},
  });
}

TEST_CASE("response parser: head limit holds exactly at max_header_bytes") {
  const ParserLimits limits{.max_header_bytes = 128, .max_body_bytes = 1024};
  const std::string prefix = "HTTP/1.1 200 OK\r\nX-Pad: ";
  const std::string suffix = "\r\nContent-Length: 0\r\n\r\n";
  const std::string at_limit = prefix + std::string(128 - prefix.size() - suffix.size(), 'p') + suffix;
  REQUIRE(at_limit.size() == 128);
  const std::string over_limit = prefix + std::string(129 - prefix.size() - suffix.size(), 'p') + suffix;
  const std::string pad_at = at_limit.substr(prefix.size(), at_limit.size() - prefix.size() - suffix.size());

  check_rows<ResponseParser, ResponseRecorder>(
      {
          {"a head of exactly the limit", at_limit,
           {response(200, "OK", {.headers = {{"X-Pad", pad_at}, {"Content-Length", "0"}}, .length = 0})}},
          {"a head one byte over the limit", over_limit, {}, Errc::header_too_large,
           "head exceeds max_header_bytes (128)", 128},
          {"a head that never ends", "HTTP/1.1 200 OK\r\nX-Long: " + std::string(400, 'x'), {}, Errc::header_too_large,
           "head exceeds max_header_bytes (128)", 128},
      },
      limits);
}

TEST_CASE("response parser: at most kMaxHeaders header fields") {
  auto with_headers = [](std::size_t count) {
    std::string text = "HTTP/1.1 200 OK\r\n";
    HeaderList list;
    for (std::size_t i = 0; i < count; ++i) {
      text += "H" + std::to_string(i) + ": v\r\n";
      list.emplace_back("H" + std::to_string(i), "v");
    }
    text += "\r\n";
    return std::pair{text, list};
  };
  auto [fits, fits_list] = with_headers(kMaxHeaders);
  auto [too_many, unused] = with_headers(kMaxHeaders + 1);
  // 1xx keeps the rows short: no body, and the headers are all that matter.
  fits.replace(9, 6, "204 No");
  too_many.replace(9, 6, "204 No");
  check_rows<ResponseParser, ResponseRecorder>({
      {"kMaxHeaders fields", fits, {response(204, "No", {.headers = fits_list, .length = 0})}},
      {"kMaxHeaders + 1 fields", too_many, {}, Errc::header_too_large, "more than 64 header fields"},
      // The 65th name starts (the limit is crossed) before llhttp refuses a byte inside it: the limit
      // is the error however the bytes are cut, although llhttp never hands over the refused span.
      {"kMaxHeaders + 1 fields, the last name bad", fits.substr(0, fits.size() - 2) + "Bad\xb5Name: v\r\n\r\n", {},
       Errc::header_too_large, "more than 64 header fields"},
  });
}

TEST_CASE("response parser: body limit for each kind of framing") {
  const ParserLimits limits{.max_header_bytes = 1024, .max_body_bytes = 10};
  check_rows<ResponseParser, ResponseRecorder>(
      {
          {"Content-Length at the limit", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
           {response(200, "OK", {.headers = {{"Content-Length", "10"}}, .length = 10, .body = "0123456789"})}},
          {"Content-Length one over the limit", "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n01234567890", {},
           Errc::body_too_large, "Content-Length 11 exceeds max_body_bytes (10)", 39},
          {"chunked at the limit", kChunkedHead + "6\r\n012345\r\n4\r\n6789\r\n0\r\n\r\n",
           {response(200, "OK", {.headers = kChunkedHeaders, .body = "0123456789", .chunked = true})}},
          {"chunked one over the limit, refused when the chunk is announced",
           kChunkedHead + "6\r\n012345\r\n5\r\n67890\r\n0\r\n\r\n",
           cut_chunked_response("012345"),
           Errc::body_too_large, "chunked body of at least 11 bytes exceeds max_body_bytes (10)", 61},
          {"close-delimited at the limit", "HTTP/1.1 200 OK\r\n\r\n0123456789",
           {response(200, "OK", {.body = "0123456789", .keep_alive = false})}, kFinish},
      },
      limits);

  SUBCASE("close-delimited one over the limit") {
    // How much of the body was delivered before the limit depends on the cut, so only the error is
    // compared here.
    const std::string input = "HTTP/1.1 200 OK\r\n\r\n01234567890";
    for (std::size_t step : {input.size(), std::size_t{1}, std::size_t{7}}) {
      INFO("fed in pieces of " << step);
      ResponseParser parser(limits);
      ResponseRecorder recorder;
      Guarded buffer(input);
      std::vector<std::string_view> pieces;
      for (std::size_t i = 0; i < input.size(); i += step) pieces.push_back(buffer.view().substr(i, step));
      feed_pieces(parser, recorder, pieces, true);
      CHECK(recorder.outcome.error == Errc::body_too_large);
      CHECK(recorder.outcome.detail.starts_with("body of at least "));
      CHECK(recorder.outcome.messages.at(0).body.size() <= 10);
    }
  }
}

TEST_CASE("response parser: chunk extensions and trailers count against the head limit") {
  const ParserLimits limits{.max_header_bytes = 64, .max_body_bytes = 1024};
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  // 47 bytes of head fit in 64; what follows is measured on its own.
  check_rows<ResponseParser, ResponseRecorder>(
      {
          {"trailers within the limit", head + "1\r\nx\r\n0\r\nT: " + std::string(60, 't') + "\r\n\r\n",
           {response(200, "OK", {.headers = kChunkedHeaders, .body = "x", .chunked = true})}},
          {"trailers beyond the limit", head + "1\r\nx\r\n0\r\nT: " + std::string(64, 't') + "\r\n\r\n",
           cut_chunked_response("x"),
           Errc::header_too_large, "chunk extensions and trailers exceed max_header_bytes (64)"},
          {"an endless chunk extension", head + "1;" + std::string(100, 'e'),
           cut_chunked_response(),
           Errc::header_too_large, "chunk extensions and trailers exceed max_header_bytes (64)"},
      },
      limits);
}

TEST_CASE("parser errors stick until reset()") {
  ResponseParser parser;
  ResponseRecorder recorder;
  Guarded bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
  auto first = parser.feed(bad.view(), recorder);
  REQUIRE_FALSE(first);
  CHECK(first.error().code == Errc::malformed);
  CHECK(parser.in_message());

  Guarded good("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  auto again = parser.feed(good.view(), recorder);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == first.error().code);
  CHECK(again.error().detail == first.error().detail);
  auto at_finish = parser.finish(recorder);
  REQUIRE_FALSE(at_finish);
  CHECK(at_finish.error().detail == first.error().detail);
  CHECK(recorder.outcome.messages.size() == 1);  // the good response was not looked at

  parser.reset();
  CHECK_FALSE(parser.in_message());
  auto after_reset = parser.feed(good.view(), recorder);
  REQUIRE(after_reset);
  CHECK(*after_reset == good.view().size());
  REQUIRE(recorder.outcome.messages.size() == 2);
  CHECK(recorder.outcome.messages[1].body == "ok");
  CHECK(recorder.outcome.messages[1].complete);
  // Positions count from the reset: the same error again is reported at the same byte.
  parser.reset();
  auto same = parser.feed(bad.view(), recorder);
  REQUIRE_FALSE(same);
  CHECK(same.error().detail == first.error().detail);
}

TEST_CASE("feeding after finish() is an error, finishing twice is not") {
  ResponseParser parser;
  ResponseRecorder recorder;
  Guarded input("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  REQUIRE(parser.feed(input.view(), recorder));
  REQUIRE(parser.finish(recorder));
  CHECK(parser.finish(recorder));
  auto more = parser.feed(input.view(), recorder);
  REQUIRE_FALSE(more);
  CHECK(more.error().code == Errc::malformed);
  CHECK(more.error().detail == "bytes fed after finish() at byte 38");
}
