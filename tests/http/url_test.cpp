// Tests of http/src/url.cpp. Every input sits flush against a PROT_NONE page.
#include <doctest/doctest.h>

#include <string>

#include "guarded.hpp"
#include "ringlab/http/url.hpp"

using namespace ringlab::http;
using ringlab::http::test::Guarded;

TEST_CASE("Url::parse splits valid http URLs into host, port and target") {
  struct Row {
    const char* text;
    const char* host;
    uint16_t port;
    const char* target;
  };
  const Row rows[] = {
      {"http://127.0.0.1:8080/weather?count=10", "127.0.0.1", 8080, "/weather?count=10"},
      {"http://localhost/", "localhost", 80, "/"},
      {"http://localhost", "localhost", 80, "/"},
      {"http://example.com:1/a/b/c", "example.com", 1, "/a/b/c"},
      {"http://host:65535/", "host", 65535, "/"},
      {"HTTP://Host.Example:80/x", "Host.Example", 80, "/x"},
      {"http://[::1]:8080/repos?count=3", "::1", 8080, "/repos?count=3"},
      {"http://[::1]/", "::1", 80, "/"},
      {"http://[::ffff:127.0.0.1]:9000", "::ffff:127.0.0.1", 9000, "/"},
      {"http://[2001:DB8::1]/", "2001:DB8::1", 80, "/"},
      {"http://host:/path", "host", 80, "/path"},  // RFC 3986 3.2.3: empty port means the default
      {"http://host/path#fragment", "host", 80, "/path"},
      {"http://host#fragment", "host", 80, "/"},
      {"http://host:00080/", "host", 80, "/"},
      {"http://my_host-1.local~/", "my_host-1.local~", 80, "/"},
      {"http://h/%7Euser/a%20b?q=%22x%22&y", "h", 80, "/%7Euser/a%20b?q=%22x%22&y"},
  };
  for (const Row& row : rows) {
    INFO("url: " << std::string(row.text));
    Guarded text(row.text);
    auto url = Url::parse(text.view());
    REQUIRE(url);
    CHECK(url->host == row.host);
    CHECK(url->port == row.port);
    CHECK(url->target == row.target);
  }
}

TEST_CASE("Url::parse returns views into the text it was given") {
  Guarded text("http://[::1]:8080/x?y");
  auto url = Url::parse(text.view());
  REQUIRE(url);
  CHECK(url->host.data() == text.view().data() + 8);
  CHECK(url->target.data() == text.view().data() + 17);
}

TEST_CASE("Url::parse refuses other schemes as unsupported and anything else as bad_url") {
  struct Row {
    const char* text;
    Errc code;
    const char* detail;  // for bad_url, what follows the quoted text: "'TEXT': detail"
  };
  const Row rows[] = {
      {"https://127.0.0.1/", Errc::unsupported, "scheme 'https' (only http:// is supported)"},
      {"ftp://host/", Errc::unsupported, "scheme 'ftp' (only http:// is supported)"},
      {"HTTPS://host/", Errc::unsupported, "scheme 'HTTPS' (only http:// is supported)"},
      {"http://user:pw@host/", Errc::unsupported, "'http://user:pw@host/': user information in the URL"},
      {"", Errc::bad_url, "expected scheme://host"},
      {"127.0.0.1:8080/x", Errc::bad_url, "expected scheme://host"},
      {"://host/", Errc::bad_url, "expected scheme://host"},
      {"1http://host/", Errc::bad_url, "expected scheme://host"},
      {"ht tp://host/", Errc::bad_url, "invalid character in the scheme"},
      {"http://", Errc::bad_url, "empty host"},
      {"http:///path", Errc::bad_url, "empty host"},
      {"http://:80/", Errc::bad_url, "empty host"},
      {"http://ho st/", Errc::bad_url, "invalid character in the host"},
      {"http://host%2e/", Errc::bad_url, "invalid character in the host"},
      {"http://host:0/", Errc::bad_url, "port out of range 1..65535"},
      {"http://host:65536/", Errc::bad_url, "port out of range 1..65535"},
      {"http://host:99999999999999999999/", Errc::bad_url, "port out of range 1..65535"},
      {"http://host:-1/", Errc::bad_url, "port is not a decimal number"},
      {"http://host:8o/", Errc::bad_url, "port is not a decimal number"},
      {"http://host:80:81/", Errc::bad_url, "port is not a decimal number"},
      {"http://[::1/", Errc::bad_url, "unterminated '[' in the host"},
      {"http://[]/", Errc::bad_url, "empty IPv6 literal"},
      {"http://[127.0.0.1]/", Errc::bad_url, "IPv6 literal without ':'"},
      {"http://[fe80::1%25eth0]/", Errc::bad_url, "invalid character in the IPv6 literal"},
      {"http://[::1]x/", Errc::bad_url, "expected ':port' after ']'"},
      {"http://[::1]:0/", Errc::bad_url, "port out of range 1..65535"},
      {"http://host?q=1", Errc::bad_url, "a query needs a path ('/?...')"},
      {"http://host/a b", Errc::bad_url, "space, control or non-ASCII byte in the path (percent-encode it)"},
      {"http://host/\xc3\xa9", Errc::bad_url, "space, control or non-ASCII byte in the path (percent-encode it)"},
  };
  for (const Row& row : rows) {
    INFO("url: " << std::string(row.text));
    Guarded text(row.text);
    auto url = Url::parse(text.view());
    REQUIRE_FALSE(url);
    CHECK(url.error().code == row.code);
    const std::string quoted = row.code == Errc::bad_url ? "'" + std::string(row.text) + "': " : "";
    CHECK(url.error().detail == quoted + row.detail);
  }
}

TEST_CASE("Url::parse refuses a control byte anywhere, including CR and LF") {
  const std::string base = "http://host:8080/path?q=1";
  for (char bad : {'\r', '\n', '\0', '\t', '\x7f'}) {
    for (std::size_t at = 0; at <= base.size(); ++at) {
      std::string text = base;
      text.insert(at, 1, bad);
      INFO("byte " << int(bad) << " inserted at " << at);
      Guarded guarded(text);
      auto url = Url::parse(guarded.view());
      CHECK_FALSE(url);
    }
  }
}
