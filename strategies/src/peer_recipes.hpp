#pragma once
// The peer rows of the strategy table (registry.cpp puts them in table order): client libraries, blocking
// sockets and epoll, each a strategy with code of its own (its maker, declared in its family's header).
// A library peer's three rows (GET, POST, echo) are written together, by peer_rows().
//
// Adding a peer: its class and maker in its own source file, and its row (or peer_rows call) here, listed
// in registry.cpp's kRecipes.
//
// Constant data, included by registry.cpp only.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

#include "curl_peer.hpp"
#include "library_peer.hpp"
#include "recipe.hpp"
#include "socket_peer.hpp"

namespace ringlab::strategies::detail::peer_recipes {

inline constexpr std::string_view kEchoPeer = "net-http-perf: the same echo through another client library";
inline constexpr std::string_view kSocketPeers = "WebRequest / RestSharp / Flurl peers";

// A row of a strategy that is not ringlab's io_uring stack.
constexpr Recipe peer(Recipe row) {
  row.peer = true;
  return row;
}

// A string literal as a template argument, so that peer_rows() can name a library's rows after it.
template <std::size_t N>
struct Literal {
  char text[N]{};
  constexpr Literal(const char (&literal)[N]) { std::copy_n(literal, N, text); }  // NOLINT: implicit by design
  [[nodiscard]] constexpr std::string_view view() const { return {text, N - 1}; }
};

// kName followed by kSuffix, in storage of the program ("cpp_httplib" "_post").
template <Literal kName, Literal kSuffix>
struct Joined {
  static constexpr auto kText = [] {
    std::array<char, kName.view().size() + kSuffix.view().size()> text{};
    std::ranges::copy(kName.view(), text.begin());
    std::ranges::copy(kSuffix.view(), text.begin() + static_cast<std::ptrdiff_t>(kName.view().size()));
    return text;
  }();
  static constexpr std::string_view kView{kText.data(), kText.size()};
};

// What differs between the three rows of a library peer.
struct PeerText {
  std::string_view mirrors;  // the GET and POST rows'; echo rows mirror kEchoPeer
  std::string_view get;      // the three descriptions
  std::string_view post;
  std::string_view echo;
};

// A library peer's rows: GET of the case's records, POST /echo of them (`kLibrary`_post) and the echo of
// one small object (`kLibrary`_echo), all made by `make` (LibraryPeer takes the method from the row).
template <Literal kLibrary>
constexpr std::array<Recipe, 3> peer_rows(MakeStrategy make, const PeerText& text) {
  return {
      peer({.name = kLibrary.view(), .mirrors = text.mirrors, .make = make, .description = text.get}),
      peer({.name = Joined<kLibrary, "_post">::kView, .mirrors = text.mirrors, .method = Method::post, .make = make,
            .description = text.post}),
      peer({.name = Joined<kLibrary, "_echo">::kView, .mirrors = kEchoPeer, .method = Method::echo, .make = make,
            .description = text.echo}),
  };
}

// `rows` (peer_rows()) with the GET row also run with --inflight N, by the strategy `make_inflight` makes.
constexpr std::array<Recipe, 3> with_inflight_get(std::array<Recipe, 3> rows, MakeStrategy make_inflight) {
  rows[0].inflight = true;
  rows[0].make_inflight = make_inflight;
  return rows;
}

inline constexpr std::array kSocketAndCurlPeers{
    peer({.name = "libcurl", .mirrors = kSocketPeers, .make = &make_libcurl,
          .description = "libcurl easy handle reused (keep-alive); write callback appends to a std::string, then a "
                         "padded copy, parsed into reused owning models"}),
    peer({.name = "libcurl_echo", .mirrors = kEchoPeer, .method = Method::echo, .make = &make_libcurl,
          .description = "as echo through libcurl's easy interface (handle reused, keep-alive): CURLOPT_POSTFIELDS, "
                         "answer appended to a std::string by the write callback"}),
    // With --inflight N: N worker threads, one blocking connection each (blocking_inflight.cpp).
    peer({.name = "blocking_sockets", .mirrors = kSocketPeers, .make = &make_blocking_sockets, .inflight = true,
          .make_inflight = &make_blocking_sockets_inflight,
          .description = "blocking send/recv on a kept-alive socket, ringlab's parser; body received in place into "
                         "a presized padded buffer; with N in flight, N worker threads, one connection each"}),
    // One strategy for one request and for N: connections on one epoll instance, a request in flight on
    // each (epoll_inflight.cpp; at N = 1 the row measured alone).
    peer({.name = "epoll", .mirrors = kSocketPeers, .make = &make_epoll_inflight, .inflight = true,
          .make_inflight = &make_epoll_inflight,
          .description = "non-blocking socket on an epoll_wait loop, ringlab's parser; body received in place into "
                         "a presized padded buffer"}),
};

// The GET row, with --inflight N: N easy handles in one multi (libcurl_multi.cpp).
inline constexpr auto kLibcurlMulti = with_inflight_get(
    peer_rows<"libcurl_multi">(
        &make_libcurl_multi,
        {.mirrors = "WebClient",
         .get = "libcurl multi interface, one transfer at a time (poll/perform loop), connection kept in the multi's "
                "cache; write callback into a std::string, then a padded copy; with N in flight, N easy handles at "
                "once",
         .post = "POST /echo through libcurl's multi interface: body from CURLOPT_POSTFIELDS (no copy); echo "
                 "written into a std::string, then a padded copy",
         .echo = "as libcurl_echo, driven by libcurl's multi interface"}),
    &make_libcurl_multi_inflight);
inline constexpr auto kCppHttplib = peer_rows<"cpp_httplib">(
    &make_cpp_httplib,
    {.mirrors = "RestSharp",
     .get = "cpp-httplib Client kept alive; Get() returns a fresh Response whose std::string body the library "
            "grows, then a padded copy, parsed into reused owning models",
     .post = "POST /echo with cpp-httplib's Post(): the body copied into its Request; echo in a fresh "
             "Response's std::string, then a padded copy",
     .echo = "as echo with cpp-httplib's Post(): the object copied into its Request; answer in a fresh "
             "Response's std::string"});
// The GET row with --inflight N: N connections on one io_context, N requests in flight (beast_inflight.cpp).
inline constexpr auto kBeast = with_inflight_get(
    peer_rows<"beast">(
        &make_beast,
        {.mirrors = "WebRequest",
         .get = "Boost.Beast tcp_stream kept alive; head then body read into a response_parser<string_body> (a "
                "fresh std::string per request; 512-byte receives, as in Beast's examples), then a padded copy",
         .post = "POST /echo with Boost.Beast: a request<string_body> built once, written as is; echo read into a "
                 "response_parser<string_body>, then a padded copy",
         .echo = "as echo with Boost.Beast: request<string_body> built once; answer read by a "
                 "response_parser<string_body>"}),
    &make_beast_inflight);
inline constexpr auto kCpprest = peer_rows<"cpprest">(
    &make_cpprest,
    {.mirrors = "HttpClient",
     .get = "C++ REST SDK http_client (pooled, own thread pool); request().get(), then extract_string() copies "
            "the SDK-buffered body out, then a padded copy",
     .post = "POST /echo with the C++ REST SDK: the body copied into each request; echo extracted with "
             "extract_string(), then a padded copy",
     .echo = "as echo with the C++ REST SDK's pooled http_client on its own threads; answer by "
             "extract_string(); a connection goes back to the pool from the SDK's threads, so a request may "
             "open another"});
inline constexpr auto kCurlpp = peer_rows<"curlpp">(
    &make_curlpp,
    {.mirrors = "Flurl",
     .get = "curlpp::Easy reused (libcurl keep-alive); a WriteFunction std::function appends to a std::string, "
            "then a padded copy, parsed into reused owning models",
     .post = "POST /echo with curlpp: PostFields option (its own copy, made once); echo appended to a "
             "std::string by a WriteFunction, then a padded copy",
     .echo = "as echo with curlpp: PostFields option, answer appended to a std::string by a WriteFunction"});

}  // namespace ringlab::strategies::detail::peer_recipes
