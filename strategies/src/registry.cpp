// The registry: one recipe per strategy (recipe.hpp), constant data, and the Descriptor rows bench reads,
// made from them at compile time.
//
// Table order: by method (get, post, proxy, echo), then ringlab's own stack, the peers and the reference
// rows, each in the order written below. The baseline of each method is its first row of ringlab's stack.
// That order lets a library peer's three rows (GET, POST, echo) be written together, by peer_rows().
//
// Adding a strategy of ringlab's stack that the generic client can run (another sink, models, receive or
// send mode, connection policy): one row here. A strategy with code of its own: its class in its own source
// file, a maker next to it (declared in its family's header), and a row here naming the maker.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "client_strategy.hpp"
#include "curl_peer.hpp"
#include "json_libraries.hpp"
#include "library_peer.hpp"
#include "recipe.hpp"
#include "recipe_strategy.hpp"
#include "resource_strategy.hpp"
#include "ringlab/base/enum_names.hpp"
#include "ringlab/strategies/strategy.hpp"
#include "socket_peer.hpp"
#include "streaming_sink.hpp"

namespace ringlab::strategies::detail {
// floor_minimal.cpp: the yardstick of json/'s reader, a reference row next to floor_parse.
std::unique_ptr<Strategy> make_floor_parse_minimal(const Recipe& recipe);
}  // namespace ringlab::strategies::detail

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
constexpr std::string_view kSocketPeers = "WebRequest / RestSharp / Flurl peers";
constexpr std::string_view kPost = "POST with body";

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
      Recipe{.name = kLibrary.view(), .description = text.get, .mirrors = text.mirrors, .method = Method::get,
             .peer = true, .make = make},
      Recipe{.name = Joined<kLibrary, "_post">::kView, .description = text.post, .mirrors = text.mirrors,
             .method = Method::post, .peer = true, .make = make},
      Recipe{.name = Joined<kLibrary, "_echo">::kView, .description = text.echo, .mirrors = kEchoPeer,
             .method = Method::echo, .peer = true, .make = make},
  };
}

template <class RecordSink>
std::unique_ptr<Strategy> make_streaming(const Recipe& recipe) {
  return std::make_unique<StreamingStrategy<RecordSink>>(recipe.name, recipe.client.query);
}

// ---- ringlab's own stack -----------------------------------------------------------------------------
constexpr std::array kOwnStack{
    // The GET baseline (ReadAsStringAsync + Deserialize): what code that does not think about memory does.
    // A fresh std::string grows as the body arrives (about log2(size) reallocations, each copying what came
    // before), is copied once more into a fresh simdjson padded string, and fresh owning models are built
    // from it (the vector grows; repository strings longer than the small-string buffer one by one).
    Recipe{.name = "string_copy",
           .description = "body appended to a fresh std::string, copied into a fresh padded string, parsed into "
                          "fresh owning models (baseline)",
           .mirrors = kBuffered,
           .baseline = true,
           .sink = Sink::string,
           .models = Models::fresh_owning},
    // What .NET's GetStringAsync does with a Content-Length; next to string_copy, what the regrowth of an
    // unsized string costs.
    Recipe{.name = "exact_string",
           .description = "body appended to a fresh std::string reserved to exactly Content-Length (never "
                          "regrown), copied once into a fresh padded string, parsed into fresh owning models",
           .mirrors = kGetString,
           .sink = Sink::exact_string,
           .models = Models::fresh_owning},
    // ReadAsStreamAsync, content buffered: a MemoryStream that ignores Content-Length. Being padded, it is
    // parsed in place (no second copy as in string_copy).
    Recipe{.name = "buffered_stream",
           .description = "body appended to a fresh padded buffer that doubles and copies as it grows, parsed in "
                          "place into fresh owning models",
           .mirrors = kStream,
           .sink = Sink::growing_buffer,
           .models = Models::fresh_owning},
    // ResponseHeadersRead + GetFromJsonAsync: the buffer of Content-Length is offered to the client as the
    // receive window, so the body is received straight into it (only the bytes that came with the head are
    // copied): no allocation per request in steady state.
    Recipe{.name = "presized",
           .description = "one padded buffer of Content-Length reused across requests; body received into it in "
                          "place, parsed into owning models reused in place",
           .mirrors = kHeadersRead},
    // The client's receive_with_send: a kept-alive request whose response fits one receive costs one
    // system call, where send-then-wait costs two (as blocking send + recv does).
    Recipe{.name = "single_enter",
           .description = "as presized, but the request's send and the response's first recv go to the kernel "
                          "together in one io_uring_enter that waits for the response: 1 enter per kept-alive "
                          "request that fits one receive",
           .mirrors = kHeadersRead,
           .client = {.enters = Enters::one}},
    // Next to presized, what reusing the models saves; next to buffered_stream, what presizing the body
    // buffer saves.
    Recipe{.name = "presized_fresh",
           .description = "as presized (body received in place into one padded buffer of Content-Length reused "
                          "across requests), parsed into fresh owning models at each request",
           .mirrors = kFreshObjects,
           .models = Models::fresh_owning},
    // Escapes are left as they are in the views (a verified op's checksum decodes them on the fly). No
    // allocation per record, whatever N: the view vectors keep their capacity.
    Recipe{.name = "views",
           .description = "as presized, parsed into viewing models (string_views into the body): no allocation "
                          "per record",
           .mirrors = kHeadersRead,
           .models = Models::views},
    // jos's Version 8 (a DTO of the three fields read): of each github record the keys stargazers_count,
    // name and url are read by On-Demand, the other 19 skipped unconverted; on /repos, whose records carry
    // the same keys at their top level, the same three. What it measures against views or presized is the
    // price of the fields a caller does not want. Its checksum covers those three fields only.
    Recipe{.name = "three_fields",
           .description = "as presized, parsed into {stars, name, url} alone: On-Demand skips the other 19 fields "
                          "of each github record; its checksum covers those three fields only (weather: skipped)",
           .mirrors = "Version 8: a DTO of the three fields read",
           .partial_checksum = true,
           .models = Models::three_fields},
    Recipe{.name = "nlohmann",
           .description = "as presized, parsed by nlohmann::json::parse into a DOM (built and freed per request), "
                          "then mapped onto owning models reused in place",
           .mirrors = kLibrarySwap,
           .make = &make_nlohmann},
    Recipe{.name = "rapidjson",
           .description = "as presized, parsed in situ by rapidjson's SAX Reader (strings unescaped in the body), "
                          "events written straight into owning models reused in place: no DOM",
           .mirrors = kLibrarySwapReader,
           .make = &make_rapidjson},
    Recipe{.name = "arena",
           .description = "body buffer and owning models from a monotonic_buffer_resource released at each "
                          "request; its buffer is sized once at setup: 0 B/op",
           .mirrors = kPooled,
           .make = &make_arena},
    Recipe{.name = "arena_pool",
           .description = "body buffer and owning models from an unsynchronized_pool_resource, made and freed at "
                          "each request; the pool keeps the memory",
           .mirrors = kPooled,
           .make = &make_arena_pool},
    Recipe{.name = "mimalloc_heap",
           .description = "body buffer and owning models from a mimalloc heap made at each request and destroyed "
                          "whole (mi_heap_new / mi_heap_destroy)",
           .mirrors = kPooled,
           .make = &make_mimalloc_heap},
    // One multishot SQE receives the whole response; the kernel picks a ring buffer for each completion.
    // What goes away is the SQE and the io_uring_enter per receive; the copy into the padded buffer stays.
    Recipe{.name = "provided_buffers",
           .description = "multishot recv into a provided-buffer ring; one copy remains: kernel-chosen buffers -> "
                          "padded buffer (simdjson needs contiguous padded input)",
           .mirrors = kPooled,
           .client = {.receive = http::ReceiveMode::provided_buffers}},
    // The kernel pins and maps the buffer's pages once, at setup, instead of at every receive.
    Recipe{.name = "fixed_buffers",
           .description = "body received by READ_FIXED into a registered (pinned once) padded buffer, parsed in "
                          "place into reused owning models",
           .mirrors = kPooled,
           .sink = Sink::fixed_buffers},
    // Records parsed between receives (streaming_sink.hpp): NDJSON lines as batches into views (its
    // non-streaming twin is views), or the records of the ordinary array cut by json::RecordSplitter.
    Recipe{.name = "streaming",
           .description = "NDJSON body (format=ndjson) received in place; between receives, the whole lines so far "
                          "are parsed as one batch (iterate_many) into views",
           .mirrors = kHeadersRead,
           .client = {.query = "&format=ndjson"},
           .make = &make_streaming<NdjsonStreamingSink>},
    Recipe{.name = "streaming_array",
           .description = "JSON array body received in place; between receives, RecordSplitter cuts the records "
                          "whose last byte is in and each is parsed",
           .mirrors = kHeadersRead,
           .make = &make_streaming<ArrayStreamingSink>},
    // No Content-Length to size the buffer with (the server's default 4 KiB chunks): the buffer keeps the
    // capacity the largest body needed, and each piece slides down over the framing by memmove.
    Recipe{.name = "chunked",
           .description = "as presized, but the server answers Transfer-Encoding: chunked; the body is de-chunked "
                          "in place (memmove over the framing)",
           .mirrors = kHeadersRead,
           .client = {.query = "&chunked=1"}},
    // A connect round trip more per request; the client, closing first, keeps the socket in TIME_WAIT for
    // 60 s (notes() counts them, from /proc/net/tcp and tcp6).
    Recipe{.name = "fresh_connection",
           .description = "as presized, but a new TCP connection per request (connect, then close: one socket left "
                          "in TIME_WAIT per request)",
           .mirrors = "new HttpClient per request vs factory/pooled",
           .client = {.connection = http::ConnectionPolicy::fresh_per_request},
           .counts_time_wait = true},
    // POST /echo of N serialized records (made once at setup by json/'s serializer), the echo received as
    // presized receives and parsed into reused owning models. The three differ only in the send mode.
    Recipe{.name = "send_copy",
           .description = "POST /echo: head and body copied into one buffer, one send; echoed body presized and "
                          "parsed (baseline)",
           .mirrors = kPost,
           .method = Method::post,
           .baseline = true,
           .client = {.send = http::SendMode::copy}},
    Recipe{.name = "writev",
           .description = "POST /echo: head and body as two iovecs, one sendmsg, no copy in user space",
           .mirrors = kPost,
           .method = Method::post,
           .client = {.send = http::SendMode::writev}},
    // The client waits for the notification CQE before the body may be reused. Over loopback the kernel
    // copies every send (the receiving socket is local), so expect only the notification's cost.
    Recipe{.name = "send_zc",
           .description = "POST /echo: head by send, body by SEND_ZC with REPORT_USAGE, waiting for the "
                          "notification; counts the sends the kernel copied anyway",
           .mirrors = kPost,
           .method = Method::post,
           .client = {.send = http::SendMode::zero_copy}},
    // proxy.cpp: N GETs of /proxy per op; the query tells the server how to reach its upstream and what to
    // answer.
    Recipe{.name = "proxy_pooled",
           .description = "N GETs of /proxy per op; the server fetches 10 records from its upstream over a "
                          "kept-alive connection and answers the status alone; each answer read into a fresh "
                          "string (baseline)",
           .mirrors = kProxyFactory,
           .method = Method::proxy,
           .baseline = true,
           .client = {.query = "&conn=pooled&answer=status"},
           .make = &make_proxy_cycles},
    Recipe{.name = "proxy_fresh",
           .description = "as proxy_pooled, but the server opens a new upstream connection per fetch and closes it "
                          "(TIME_WAIT on the server's side, counted in the notes)",
           .mirrors = kProxyNew,
           .method = Method::proxy,
           .client = {.query = "&conn=fresh&answer=status"},
           .make = &make_proxy_cycles},
    Recipe{.name = "proxy_pooled_body",
           .description = "as proxy_pooled, the upstream's body (10 records) passed through to the client",
           .mirrors = kProxyFactory,
           .method = Method::proxy,
           .client = {.query = "&conn=pooled&answer=body"},
           .make = &make_proxy_cycles},
    Recipe{.name = "proxy_fresh_body",
           .description = "as proxy_fresh, the upstream's body (10 records) passed through to the client",
           .mirrors = kProxyNew,
           .method = Method::proxy,
           .client = {.query = "&conn=fresh&answer=body"},
           .make = &make_proxy_cycles},
    // joncloud's net-http-perf: POST of one 17-byte object (kEchoBody) to /echo?chunked=1, the chunked
    // answer appended to a fresh std::string, as ReadAsStringAsync returns one; nothing deserialized.
    Recipe{.name = "echo",
           .description = "POST {\"lorem\":\"ipsum\"} to /echo?chunked=1 on a kept-alive connection; the chunked "
                          "answer appended to a fresh std::string, nothing parsed (baseline)",
           .mirrors = kEchoClient,
           .method = Method::echo,
           .baseline = true,
           .sink = Sink::string,
           .models = Models::answer_only},
    // What .NET Core's HttpWebRequest does, building a new HttpClient per request (the seed's 4.98x).
    Recipe{.name = "echo_fresh",
           .description = "as echo, on a new connection per request, closed after the answer",
           .mirrors = kEchoWebRequest,
           .method = Method::echo,
           .client = {.connection = http::ConnectionPolicy::fresh_per_request},
           .sink = Sink::string,
           .models = Models::answer_only},
};

// ---- peers: client libraries, blocking sockets, epoll ------------------------------------------------
constexpr std::array kSocketAndCurlPeers{
    Recipe{.name = "libcurl",
           .description = "libcurl easy handle reused (keep-alive); write callback appends to a std::string, then "
                          "a padded copy, parsed into reused owning models",
           .mirrors = kSocketPeers,
           .peer = true,
           .make = &make_libcurl},
    Recipe{.name = "libcurl_echo",
           .description = "as echo through libcurl's easy interface (handle reused, keep-alive): "
                          "CURLOPT_POSTFIELDS, answer appended to a std::string by the write callback",
           .mirrors = kEchoPeer,
           .method = Method::echo,
           .peer = true,
           .make = &make_libcurl},
    Recipe{.name = "blocking_sockets",
           .description = "blocking send/recv on a kept-alive socket, ringlab's parser; body received in place "
                          "into a presized padded buffer",
           .mirrors = kSocketPeers,
           .peer = true,
           .make = &make_blocking_sockets},
    Recipe{.name = "epoll",
           .description = "non-blocking socket on an epoll_wait loop, ringlab's parser; body received in place "
                          "into a presized padded buffer",
           .mirrors = kSocketPeers,
           .peer = true,
           .make = &make_epoll},
};

constexpr auto kLibcurlMulti = peer_rows<"libcurl_multi">(
    &make_libcurl_multi,
    {.mirrors = "WebClient",
     .get = "libcurl multi interface, one transfer at a time (poll/perform loop), connection kept in the multi's "
            "cache; write callback into a std::string, then a padded copy",
     .post = "POST /echo through libcurl's multi interface: body from CURLOPT_POSTFIELDS (no copy); echo "
             "written into a std::string, then a padded copy",
     .echo = "as libcurl_echo, driven by libcurl's multi interface"});
constexpr auto kCppHttplib = peer_rows<"cpp_httplib">(
    &make_cpp_httplib,
    {.mirrors = "RestSharp",
     .get = "cpp-httplib Client kept alive; Get() returns a fresh Response whose std::string body the library "
            "grows, then a padded copy, parsed into reused owning models",
     .post = "POST /echo with cpp-httplib's Post(): the body copied into its Request; echo in a fresh "
             "Response's std::string, then a padded copy",
     .echo = "as echo with cpp-httplib's Post(): the object copied into its Request; answer in a fresh "
             "Response's std::string"});
constexpr auto kBeast = peer_rows<"beast">(
    &make_beast,
    {.mirrors = "WebRequest",
     .get = "Boost.Beast tcp_stream kept alive; head then body read into a response_parser<string_body> (a "
            "fresh std::string per request; 512-byte receives, as in Beast's examples), then a padded copy",
     .post = "POST /echo with Boost.Beast: a request<string_body> built once, written as is; echo read into a "
             "response_parser<string_body>, then a padded copy",
     .echo = "as echo with Boost.Beast: request<string_body> built once; answer read by a "
             "response_parser<string_body>"});
constexpr auto kCpprest = peer_rows<"cpprest">(
    &make_cpprest,
    {.mirrors = "HttpClient",
     .get = "C++ REST SDK http_client (pooled, own thread pool); request().get(), then extract_string() copies "
            "the SDK-buffered body out, then a padded copy",
     .post = "POST /echo with the C++ REST SDK: the body copied into each request; echo extracted with "
             "extract_string(), then a padded copy",
     .echo = "as echo with the C++ REST SDK's pooled http_client on its own threads; answer by "
             "extract_string(); a connection goes back to the pool from the SDK's threads, so a request may "
             "open another"});
constexpr auto kCurlpp = peer_rows<"curlpp">(
    &make_curlpp,
    {.mirrors = "Flurl",
     .get = "curlpp::Easy reused (libcurl keep-alive); a WriteFunction std::function appends to a std::string, "
            "then a padded copy, parsed into reused owning models",
     .post = "POST /echo with curlpp: PostFields option (its own copy, made once); echo appended to a "
             "std::string by a WriteFunction, then a padded copy",
     .echo = "as echo with curlpp: PostFields option, answer appended to a std::string by a WriteFunction"});

// ---- reference rows: physical limits (floors.cpp, floor_minimal.cpp) ---------------------------------
constexpr std::array kReferences{
    Recipe{.name = "floor_transfer",
           .description = "reference: kept-alive GET through the same ring into a presized padded buffer, nothing "
                          "parsed: what the network alone costs",
           .mirrors = "(physical limit)",
           .reference = true,
           .make = &make_floor_transfer},
    Recipe{.name = "floor_parse",
           .description = "reference: the body already in a warm padded buffer, parsed into views and consumed, no "
                          "request: what parsing alone costs",
           .mirrors = "(physical limit)",
           .reference = true,
           .make = &make_floor_parse},
    Recipe{.name = "floor_parse_minimal",
           .description = "reference: floor_parse's warm body parsed by a minimal On-Demand loop of the four "
                          "weather fields into plain structs: the yardstick of json/'s reader (weather only)",
           .mirrors = "(physical limit)",
           .reference = true,
           .make = &make_floor_parse_minimal},
};

// ---- the table ---------------------------------------------------------------------------------------

// The groups within a method, in table order.
constexpr int group_of(const Recipe& recipe) { return recipe.reference ? 2 : recipe.peer ? 1 : 0; }

// Every part's rows, by method then group, each in the order written (a stable sort).
template <std::size_t... N>
constexpr auto in_table_order(const std::array<Recipe, N>&... parts) {
  std::array<Recipe, (N + ...)> table{};
  std::size_t next = 0;
  for (const Method method : {Method::get, Method::post, Method::proxy, Method::echo}) {
    for (int group = 0; group < 3; ++group) {
      auto take = [&](const auto& part) {
        for (const Recipe& recipe : part) {
          if (recipe.method == method && group_of(recipe) == group) table[next++] = recipe;
        }
      };
      (take(parts), ...);
    }
  }
  return table;
}

constexpr auto kRecipes =
    in_table_order(kOwnStack, kSocketAndCurlPeers, kLibcurlMulti, kCppHttplib, kBeast, kCpprest, kCurlpp, kReferences);

// The factory of row `index`: its own maker, or RecipeStrategy with the row's sink and models.
template <std::size_t index>
std::unique_ptr<Strategy> make_row() {
  constexpr const Recipe& recipe = kRecipes[index];
  // A plain `if`: with the sanitizers on, GCC does not take a function's address compared with null as
  // a constant expression. Both branches compile for every row (a row with a maker keeps the default
  // sink and models, which RecipeStrategy can run).
  if (recipe.make != nullptr) return recipe.make(recipe);
  return make_recipe_strategy<recipe.sink, recipe.models>(recipe);
}

constexpr Descriptor describe(const Recipe& recipe, std::unique_ptr<Strategy> (*make)()) {
  return Descriptor{.name = recipe.name,
                    .description = recipe.description,
                    .mirrors = recipe.mirrors,
                    .method = recipe.method,
                    .baseline = recipe.baseline,
                    .peer = recipe.peer,
                    .make = make,
                    .reference = recipe.reference,
                    .partial_checksum = recipe.partial_checksum};
}

template <std::size_t... index>
constexpr std::array<Descriptor, sizeof...(index)> descriptors(std::index_sequence<index...>) {
  return {describe(kRecipes[index], &make_row<index>)...};
}

constexpr auto kRegistry = descriptors(std::make_index_sequence<kRecipes.size()>{});

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

std::span<const detail::Recipe> detail::recipes() noexcept { return kRecipes; }

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
