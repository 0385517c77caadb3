// The registry: one row per strategy, in table order (baseline first within each method). The rows
// are constant data; each `make` is the factory in the strategy's own source file.
#include <array>
#include <string>
#include <vector>

#include "factories.hpp"
#include "ringlab/base/enum_names.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies {
namespace {

using namespace detail;

constexpr std::string_view kBuffered = "GetAsync + ReadAsStringAsync + Deserialize";
constexpr std::string_view kStream = "GetAsync + ReadAsStreamAsync (content buffered)";
constexpr std::string_view kHeadersRead = "ResponseHeadersRead + stream, GetFromJsonAsync";
constexpr std::string_view kPooled = "reuse of buffers / pooled memory";
constexpr std::string_view kProxyFactory =
    "SingleHttpRequestTyped / SingleHttpRequestManual (both reuse the factory's pooled handler)";
constexpr std::string_view kProxyNew = "a new HttpClient per upstream call (the socket exhaustion the factory avoids)";
constexpr std::string_view kGetString = "GetStringAsync + Deserialize (one string of Content-Length)";
constexpr std::string_view kFreshObjects = "ResponseHeadersRead + stream, fresh objects (as .NET)";
constexpr std::string_view kLibrarySwap =
    "JSON library swapped over the same stream (jos V9 System.Text.Json vs V10 Utf8Json)";
constexpr std::string_view kEchoClient = "net-http-perf: HttpClient, one kept for the program's life";
constexpr std::string_view kEchoWebRequest =
    "net-http-perf: HttpWebRequest on .NET Core (a new HttpClient, so a new connection, per request)";
constexpr std::string_view kEchoPeer = "net-http-perf: the same echo through another client library";
constexpr std::string_view kLibrarySwapReader =
    "JSON library swapped (jos V9/V10), token-reader deserializer (jos V8 JsonTextReader)";

constexpr std::array kRegistry{
    Descriptor{"string_copy",
               "body appended to a fresh std::string, copied into a fresh padded string, parsed into fresh "
               "owning models (baseline)",
               kBuffered, Method::get, true, false, &make_string_copy},
    Descriptor{"exact_string",
               "body appended to a fresh std::string reserved to exactly Content-Length (never regrown), copied "
               "once into a fresh padded string, parsed into fresh owning models",
               kGetString, Method::get, false, false, &make_exact_string},
    Descriptor{"buffered_stream",
               "body appended to a fresh padded buffer that doubles and copies as it grows, parsed in place "
               "into fresh owning models",
               kStream, Method::get, false, false, &make_buffered_stream},
    Descriptor{"presized",
               "one padded buffer of Content-Length reused across requests; body received into it in place, "
               "parsed into owning models reused in place",
               kHeadersRead, Method::get, false, false, &make_presized},
    Descriptor{"single_enter",
               "as presized, but the request's send and the response's first recv go to the kernel together in "
               "one io_uring_enter that waits for the response: 1 enter per kept-alive request that fits one "
               "receive",
               kHeadersRead, Method::get, false, false, &make_single_enter},
    Descriptor{"presized_fresh",
               "as presized (body received in place into one padded buffer of Content-Length reused across "
               "requests), parsed into fresh owning models at each request",
               kFreshObjects, Method::get, false, false, &make_presized_fresh},
    Descriptor{"views",
               "as presized, parsed into viewing models (string_views into the body): no allocation per "
               "record",
               kHeadersRead, Method::get, false, false, &make_views},
    Descriptor{"three_fields",
               "as presized, parsed into {stars, name, url} alone: On-Demand skips the other 19 fields of each "
               "github record; its checksum covers those three fields only (weather: skipped)",
               "Version 8: a DTO of the three fields read", Method::get, false, false, &make_three_fields, false,
               true},
    Descriptor{"nlohmann",
               "as presized, parsed by nlohmann::json::parse into a DOM (built and freed per request), then "
               "mapped onto owning models reused in place",
               kLibrarySwap, Method::get, false, false, &make_nlohmann},
    Descriptor{"rapidjson",
               "as presized, parsed in situ by rapidjson's SAX Reader (strings unescaped in the body), events "
               "written straight into owning models reused in place: no DOM",
               kLibrarySwapReader, Method::get, false, false, &make_rapidjson},
    Descriptor{"arena",
               "body buffer and owning models from a monotonic_buffer_resource released at each request; "
               "its buffer is sized once at setup: 0 B/op",
               kPooled, Method::get, false, false, &make_arena},
    Descriptor{"arena_pool",
               "body buffer and owning models from an unsynchronized_pool_resource, made and freed at each "
               "request; the pool keeps the memory",
               kPooled, Method::get, false, false, &make_arena_pool},
    Descriptor{"mimalloc_heap",
               "body buffer and owning models from a mimalloc heap made at each request and destroyed whole "
               "(mi_heap_new / mi_heap_destroy)",
               kPooled, Method::get, false, false, &make_mimalloc_heap},
    Descriptor{"provided_buffers",
               "multishot recv into a provided-buffer ring; one copy remains: kernel-chosen buffers -> "
               "padded buffer (simdjson needs contiguous padded input)",
               kPooled, Method::get, false, false, &make_provided_buffers},
    Descriptor{"fixed_buffers",
               "body received by READ_FIXED into a registered (pinned once) padded buffer, parsed in place "
               "into reused owning models",
               kPooled, Method::get, false, false, &make_fixed_buffers},
    Descriptor{"streaming",
               "NDJSON body (format=ndjson) received in place; between receives, the whole lines so far are "
               "parsed as one batch (iterate_many) into views",
               kHeadersRead, Method::get, false, false, &make_streaming},
    Descriptor{"streaming_array",
               "JSON array body received in place; between receives, RecordSplitter cuts the records whose "
               "last byte is in and each is parsed",
               kHeadersRead, Method::get, false, false, &make_streaming_array},
    Descriptor{"chunked",
               "as presized, but the server answers Transfer-Encoding: chunked; the body is de-chunked in "
               "place (memmove over the framing)",
               kHeadersRead, Method::get, false, false, &make_chunked},
    Descriptor{"fresh_connection",
               "as presized, but a new TCP connection per request (connect, then close: one socket left in "
               "TIME_WAIT per request)",
               "new HttpClient per request vs factory/pooled", Method::get, false, false, &make_fresh_connection},
    Descriptor{"libcurl",
               "libcurl easy handle reused (keep-alive); write callback appends to a std::string, then a "
               "padded copy, parsed into reused owning models",
               "WebRequest / RestSharp / Flurl peers", Method::get, false, true, &make_libcurl},
    Descriptor{"blocking_sockets",
               "blocking send/recv on a kept-alive socket, ringlab's parser; body received in place into a "
               "presized padded buffer",
               "WebRequest / RestSharp / Flurl peers", Method::get, false, true, &make_blocking_sockets},
    Descriptor{"epoll",
               "non-blocking socket on an epoll_wait loop, ringlab's parser; body received in place into a "
               "presized padded buffer",
               "WebRequest / RestSharp / Flurl peers", Method::get, false, true, &make_epoll},
    Descriptor{"libcurl_multi",
               "libcurl multi interface, one transfer at a time (poll/perform loop), connection kept in the "
               "multi's cache; write callback into a std::string, then a padded copy",
               "WebClient", Method::get, false, true, &make_libcurl_multi},
    Descriptor{"cpp_httplib",
               "cpp-httplib Client kept alive; Get() returns a fresh Response whose std::string body the "
               "library grows, then a padded copy, parsed into reused owning models",
               "RestSharp", Method::get, false, true, &make_cpp_httplib},
    Descriptor{"beast",
               "Boost.Beast tcp_stream kept alive; head then body read into a response_parser<string_body> "
               "(a fresh std::string per request; 512-byte receives, as in Beast's examples), then a padded copy",
               "WebRequest", Method::get, false, true, &make_beast},
    Descriptor{"cpprest",
               "C++ REST SDK http_client (pooled, own thread pool); request().get(), then extract_string() "
               "copies the SDK-buffered body out, then a padded copy",
               "HttpClient", Method::get, false, true, &make_cpprest},
    Descriptor{"curlpp",
               "curlpp::Easy reused (libcurl keep-alive); a WriteFunction std::function appends to a "
               "std::string, then a padded copy, parsed into reused owning models",
               "Flurl", Method::get, false, true, &make_curlpp},
    Descriptor{"floor_transfer",
               "reference: kept-alive GET through the same ring into a presized padded buffer, nothing parsed: "
               "what the network alone costs",
               "(physical limit)", Method::get, false, false, &make_floor_transfer, true},
    Descriptor{"floor_parse",
               "reference: the body already in a warm padded buffer, parsed into views and consumed, no "
               "request: what parsing alone costs",
               "(physical limit)", Method::get, false, false, &make_floor_parse, true},
    Descriptor{"send_copy",
               "POST /echo: head and body copied into one buffer, one send; echoed body presized and parsed "
               "(baseline)",
               "POST with body", Method::post, true, false, &make_send_copy},
    Descriptor{"writev",
               "POST /echo: head and body as two iovecs, one sendmsg, no copy in user space",
               "POST with body", Method::post, false, false, &make_writev},
    Descriptor{"send_zc",
               "POST /echo: head by send, body by SEND_ZC with REPORT_USAGE, waiting for the notification; "
               "counts the sends the kernel copied anyway",
               "POST with body", Method::post, false, false, &make_send_zc},
    Descriptor{"libcurl_multi_post",
               "POST /echo through libcurl's multi interface: body from CURLOPT_POSTFIELDS (no copy); echo "
               "written into a std::string, then a padded copy",
               "WebClient", Method::post, false, true, &make_libcurl_multi_post},
    Descriptor{"cpp_httplib_post",
               "POST /echo with cpp-httplib's Post(): the body copied into its Request; echo in a fresh "
               "Response's std::string, then a padded copy",
               "RestSharp", Method::post, false, true, &make_cpp_httplib_post},
    Descriptor{"beast_post",
               "POST /echo with Boost.Beast: a request<string_body> built once, written as is; echo read into a "
               "response_parser<string_body>, then a padded copy",
               "WebRequest", Method::post, false, true, &make_beast_post},
    Descriptor{"cpprest_post",
               "POST /echo with the C++ REST SDK: the body copied into each request; echo extracted with "
               "extract_string(), then a padded copy",
               "HttpClient", Method::post, false, true, &make_cpprest_post},
    Descriptor{"curlpp_post",
               "POST /echo with curlpp: PostFields option (its own copy, made once); echo appended to a "
               "std::string by a WriteFunction, then a padded copy",
               "Flurl", Method::post, false, true, &make_curlpp_post},
    Descriptor{"proxy_pooled",
               "N GETs of /proxy per op; the server fetches 10 records from its upstream over a kept-alive "
               "connection and answers the status alone; each answer read into a fresh string (baseline)",
               kProxyFactory, Method::proxy, true, false, &make_proxy_pooled},
    Descriptor{"proxy_fresh",
               "as proxy_pooled, but the server opens a new upstream connection per fetch and closes it "
               "(TIME_WAIT on the server's side, counted in the notes)",
               kProxyNew, Method::proxy, false, false, &make_proxy_fresh},
    Descriptor{"proxy_pooled_body",
               "as proxy_pooled, the upstream's body (10 records) passed through to the client",
               kProxyFactory, Method::proxy, false, false, &make_proxy_pooled_body},
    Descriptor{"proxy_fresh_body",
               "as proxy_fresh, the upstream's body (10 records) passed through to the client",
               kProxyNew, Method::proxy, false, false, &make_proxy_fresh_body},
    Descriptor{"echo",
               "POST {\"lorem\":\"ipsum\"} to /echo?chunked=1 on a kept-alive connection; the chunked answer "
               "appended to a fresh std::string, nothing parsed (baseline)",
               kEchoClient, Method::echo, true, false, &make_echo},
    Descriptor{"echo_fresh",
               "as echo, on a new connection per request, closed after the answer",
               kEchoWebRequest, Method::echo, false, false, &make_echo_fresh},
    Descriptor{"libcurl_echo",
               "as echo through libcurl's easy interface (handle reused, keep-alive): CURLOPT_POSTFIELDS, answer "
               "appended to a std::string by the write callback",
               kEchoPeer, Method::echo, false, true, &make_libcurl_echo},
    Descriptor{"libcurl_multi_echo",
               "as libcurl_echo, driven by libcurl's multi interface", kEchoPeer, Method::echo, false, true,
               &make_libcurl_multi_echo},
    Descriptor{"cpp_httplib_echo",
               "as echo with cpp-httplib's Post(): the object copied into its Request; answer in a fresh "
               "Response's std::string",
               kEchoPeer, Method::echo, false, true, &make_cpp_httplib_echo},
    Descriptor{"beast_echo",
               "as echo with Boost.Beast: request<string_body> built once; answer read by a "
               "response_parser<string_body>",
               kEchoPeer, Method::echo, false, true, &make_beast_echo},
    Descriptor{"cpprest_echo",
               "as echo with the C++ REST SDK's pooled http_client on its own threads; answer by "
               "extract_string(); a connection goes back to the pool from the SDK's threads, so a request may "
               "open another",
               kEchoPeer, Method::echo, false, true, &make_cpprest_echo},
    Descriptor{"curlpp_echo",
               "as echo with curlpp: PostFields option, answer appended to a std::string by a WriteFunction",
               kEchoPeer, Method::echo, false, true, &make_curlpp_echo},
};

constexpr base::EnumNames<Payload, 3> kPayloadNames{
    {{{Payload::weather, "weather"}, {Payload::repos, "repos"}, {Payload::github, "github"}}}, "?"};
constexpr base::EnumNames<Connection, 2> kConnectionNames{
    {{{Connection::pooled, "pooled"}, {Connection::fresh, "fresh"}}}, "?"};
constexpr base::EnumNames<ServerMode, 2> kServerModeNames{
    {{{ServerMode::cached, "cached"}, {ServerMode::seed, "seed"}}}, "?"};

// The built-in table followed by the rows register_strategy() added. Built on first use, not at static
// initialisation: nothing registers itself.
std::vector<Descriptor>& rows() {
  static std::vector<Descriptor> all(kRegistry.begin(), kRegistry.end());
  return all;
}

}  // namespace

std::span<const Descriptor> registry() { return rows(); }

const Descriptor* find(std::string_view name) {
  for (const Descriptor& descriptor : rows()) {
    if (descriptor.name == name) return &descriptor;
  }
  return nullptr;
}

Status register_strategy(const Descriptor& descriptor) {
  if (descriptor.name.empty()) return std::unexpected(Error{"register_strategy: a strategy needs a name"});
  const std::string name(descriptor.name);
  if (descriptor.make == nullptr) return std::unexpected(Error{"register_strategy: " + name + " has no make()"});
  if (find(descriptor.name) != nullptr) {
    return std::unexpected(Error{"register_strategy: a strategy named " + name + " is already registered"});
  }
  if (descriptor.baseline) {
    return std::unexpected(Error{"register_strategy: " + name +
                                 " cannot be a baseline: each method keeps its built-in one"});
  }
  rows().push_back(descriptor);
  return {};
}

std::string_view payload_name(Payload payload) noexcept { return kPayloadNames.name(payload); }
std::optional<Payload> parse_payload(std::string_view name) noexcept { return kPayloadNames.parse(name); }
std::string_view connection_name(Connection connection) noexcept { return kConnectionNames.name(connection); }
std::optional<Connection> parse_connection(std::string_view name) noexcept { return kConnectionNames.parse(name); }
std::string_view server_mode_name(ServerMode mode) noexcept { return kServerModeNames.name(mode); }
std::optional<ServerMode> parse_server_mode(std::string_view name) noexcept { return kServerModeNames.parse(name); }

}  // namespace ringlab::strategies
