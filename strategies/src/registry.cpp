// The registry: one recipe per strategy (recipe.hpp), constant data, and the Descriptor rows bench reads,
// made from them at compile time.
//
// Table order: by method (get, post, proxy, echo), then ringlab's own stack, the peers and the reference
// rows, each in the order written (the peers' in peer_recipes.hpp). The baseline of each method is its
// first row of ringlab's stack. That order lets a library peer's three rows (GET, POST, echo) be written
// together, by peer_rows().
//
// Adding a strategy of ringlab's stack that the generic client can run (another sink, models, receive or
// send mode, connection policy): one row here. A strategy with code of its own: its class in its own source
// file, a maker next to it (declared in its family's header), and a row naming the maker: here for
// ringlab's stack and the references, in peer_recipes.hpp for a peer. A row that also runs cases with
// more than one request in flight (bench --inflight) sets `inflight`: a row of ringlab's stack is then run
// by InflightRecipeStrategy (inflight_recipe.hpp) unless it names a maker of its own in `make_inflight`,
// as the streaming rows and the peers do; the other rows' Descriptor::make_inflight is null.
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "client_strategy.hpp"
#include "json_libraries.hpp"
#include "peer_recipes.hpp"
#include "recipe.hpp"
#include "inflight_recipe.hpp"
#include "recipe_strategy.hpp"
#include "resource_strategy.hpp"
#include "ringlab/base/enum_names.hpp"
#include "ringlab/strategies/strategy.hpp"
#include "streaming_sink.hpp"

namespace ringlab::strategies::detail {
// floor_minimal.cpp: the yardstick of json/'s reader, a reference row next to floor_parse.
std::unique_ptr<Strategy> make_floor_parse_minimal(const Recipe& recipe);

}  // namespace ringlab::strategies::detail

namespace ringlab::strategies {
namespace {

using namespace detail;
using namespace detail::peer_recipes;

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
constexpr std::string_view kLibrarySwapReader =
    "JSON library swapped (jos V9/V10), token-reader deserializer (jos V8 JsonTextReader)";
constexpr std::string_view kStreamedFresh =
    "GetStreamAsync / GetFromJsonAsync / ResponseHeadersRead + ReadAsStreamAsync or ReadFromJsonAsync: "
    "DeserializeAsync over the connection's stream, fresh objects";
constexpr std::string_view kGetStringPooled = "GetStringAsync (.NET 5+): ArrayPool buffer, then one string";
constexpr std::string_view kPost = "POST with body";
constexpr std::string_view kPhysicalLimit = "(physical limit)";

// The kinds of rows: each sets what its rows share, the row names the rest (and may name another mirror).
constexpr Recipe post(Recipe row) {
  row.method = Method::post;
  if (row.mirrors.empty()) row.mirrors = kPost;
  return row;
}
// proxy.cpp: N GETs of /proxy per op; the row's query tells the server how to reach its upstream and what
// to answer.
constexpr Recipe proxy(Recipe row) {
  row.method = Method::proxy;
  row.make = &make_proxy_cycles;
  return row;
}
// The echo's answer appended to a fresh std::string, as ReadAsStringAsync returns one; nothing deserialized.
constexpr Recipe echo(Recipe row) {
  row.method = Method::echo;
  row.sink = Sink::string;
  row.models = Models::answer_only;
  return row;
}
constexpr Recipe reference(Recipe row) {
  row.reference = true;
  if (row.mirrors.empty()) row.mirrors = kPhysicalLimit;
  return row;
}

template <class RecordSink>
std::unique_ptr<Strategy> make_streaming(const Recipe& recipe) {
  return std::make_unique<StreamingStrategy<RecordSink>>(recipe.name, recipe.client.query);
}

// The same sinks, one per connection, with N requests in flight.
template <class RecordSink>
std::unique_ptr<Strategy> make_inflight_streaming(const Recipe& recipe) {
  return std::make_unique<InflightStreamingStrategy<RecordSink>>(recipe);
}

// ---- ringlab's own stack -----------------------------------------------------------------------------
constexpr std::array kOwnStack{
    // The GET baseline (ReadAsStringAsync + Deserialize): what code that does not think about memory does.
    // A fresh std::string grows as the body arrives (about log2(size) reallocations, each copying what came
    // before), is copied once more into a fresh simdjson padded string, and fresh owning models are built
    // from it (the vector grows; repository strings longer than the small-string buffer one by one).
    Recipe{.name = "string_copy", .mirrors = kBuffered, .baseline = true, .sink = Sink::string,
           .models = Models::fresh_owning, .inflight = true,
           .description = "body appended to a fresh std::string, copied into a fresh padded string, parsed into "
                          "fresh owning models (baseline)"},
    // What .NET's GetStringAsync does with a Content-Length; next to string_copy, what the regrowth of an
    // unsized string costs.
    Recipe{.name = "exact_string", .mirrors = kGetString, .sink = Sink::exact_string, .models = Models::fresh_owning,
           .description = "body appended to a fresh std::string reserved to exactly Content-Length (never "
                          "regrown), copied once into a fresh padded string, parsed into fresh owning models"},
    // ReadAsStreamAsync, content buffered: a MemoryStream that ignores Content-Length. Being padded, it is
    // parsed in place (no second copy as in string_copy).
    Recipe{.name = "buffered_stream", .mirrors = kStream, .sink = Sink::growing_buffer, .models = Models::fresh_owning,
           .description = "body appended to a fresh padded buffer that doubles and copies as it grows, parsed in "
                          "place into fresh owning models"},
    // ResponseHeadersRead + GetFromJsonAsync: the buffer of Content-Length is offered to the client as the
    // receive window, so the body is received straight into it (only the bytes that came with the head are
    // copied): no allocation per request in steady state.
    Recipe{.name = "presized", .mirrors = kHeadersRead, .inflight = true,
           .description = "one padded buffer of Content-Length reused across requests; body received into it in "
                          "place, parsed into owning models reused in place"},
    // The client's receive_with_send: a kept-alive request whose response fits one receive costs one
    // system call, where send-then-wait costs two (as blocking send + recv does).
    Recipe{.name = "single_enter", .mirrors = kHeadersRead, .client = {.enters = Enters::one},
           .description = "as presized, but the request's send and the response's first recv go to the kernel "
                          "together in one io_uring_enter that waits for the response: 1 enter per kept-alive "
                          "request that fits one receive"},
    // Next to presized, what reusing the models saves; next to buffered_stream, what presizing the body
    // buffer saves.
    Recipe{.name = "presized_fresh", .mirrors = kFreshObjects, .models = Models::fresh_owning,
           .description = "as presized (body received in place into one padded buffer of Content-Length reused "
                          "across requests), parsed into fresh owning models at each request"},
    // Escapes are left as they are in the views (a verified op's checksum decodes them on the fly). No
    // allocation per record, whatever N: the view vectors keep their capacity.
    Recipe{.name = "views", .mirrors = kHeadersRead, .parse_floor = "floor_parse", .models = Models::views,
           .inflight = true,
           .description = "as presized, parsed into viewing models (string_views into the body): no allocation "
                          "per record"},
    // jos's Version 8 (a DTO of the three fields read): of each github record the keys stargazers_count,
    // name and url are read by On-Demand, the other 19 skipped unconverted; on /repos, whose records carry
    // the same keys at their top level, the same three. What it measures against views or presized is the
    // price of the fields a caller does not want. Its checksum covers those three fields only.
    Recipe{.name = "three_fields", .mirrors = "Version 8: a DTO of the three fields read", .partial_checksum = true,
           .models = Models::three_fields,
           .description = "as presized, parsed into {stars, name, url} alone: On-Demand skips the other 19 fields "
                          "of each github record; its checksum covers those three fields only (weather: skipped)"},
    Recipe{.name = "nlohmann", .mirrors = kLibrarySwap, .parse_floor = "floor_parse_nlohmann", .make = &make_nlohmann,
           .description = "as presized, parsed by nlohmann::json::parse into a DOM (built and freed per request), "
                          "then mapped onto owning models reused in place"},
    // rapidjson at its documented fast settings (rapidjson_handler.hpp's kFastFlags): in situ, its SIMD
    // string scan, normal-precision numbers, no UTF-8 validation. rapidjson_strict keeps the strict flags
    // rapidjson ran with before: next to rapidjson, what UTF-8 validation (which also turns the SIMD string
    // scan off) and full-precision numbers cost, the two checks simdjson's reader does not drop.
    Recipe{.name = "rapidjson", .mirrors = kLibrarySwapReader, .parse_floor = "floor_parse_rapidjson",
           .make = &make_rapidjson,
           .description = "as presized, parsed in situ by rapidjson's SAX Reader (strings unescaped in the body; "
                          "fast flags: SIMD string scan, normal-precision numbers, no UTF-8 validation), events "
                          "written straight into owning models reused in place: no DOM"},
    Recipe{.name = "rapidjson_strict", .mirrors = kLibrarySwapReader, .parse_floor = "floor_parse_rapidjson",
           .make = &make_rapidjson_strict,
           .description = "as rapidjson, under the Reader's strict flags: UTF-8 validation (its SIMD string scan "
                          "then off) and full-precision numbers"},
    // jos's Versions 8 and 10 under his conditions (bench jos; bench/src/seeds/jos.hpp maps every Version):
    // fresh objects at every request, as presized_fresh, which is his Version 9. rapidjson_fresh is the
    // library swapped over the same receive (his Version 10, Utf8Json for System.Text.Json); token_loop
    // reads the same rapidjson tokens through a hand-written loop over the DTO's three keys (his Version 8,
    // ProjectDeserializer over JsonTextReader), so that the pair isolates the hand-written loop.
    Recipe{.name = "rapidjson_fresh", .mirrors = "Version 10: Utf8Json over the same stream (fresh objects)",
           .parse_floor = "floor_parse_rapidjson", .models = Models::fresh_owning, .make = &make_rapidjson,
           .description = "as rapidjson (in situ SAX, events written straight into the records), into fresh "
                          "owning models at each request, as presized_fresh"},
    Recipe{.name = "token_loop", .mirrors = "Version 8: a hand-written loop over JsonTextReader's tokens",
           .parse_floor = "floor_parse_rapidjson", .models = Models::fresh_owning, .make = &make_token_loop,
           .description = "jos only: rapidjson's tokens in situ through a hand-written loop that keeps the last "
                          "key and takes name, url and stars into fresh DTOs, as jos's ProjectDeserializer"},
    Recipe{.name = "arena", .mirrors = kPooled, .make = &make_arena,
           .description = "body buffer and owning models from a monotonic_buffer_resource released at each "
                          "request; its buffer is sized once at setup: 0 B/op"},
    Recipe{.name = "arena_pool", .mirrors = kPooled, .make = &make_arena_pool,
           .description = "body buffer and owning models from an unsynchronized_pool_resource, made and freed at "
                          "each request; the pool keeps the memory"},
    Recipe{.name = "mimalloc_heap", .mirrors = kPooled, .make = &make_mimalloc_heap,
           .description = "body buffer and owning models from a mimalloc heap made at each request and destroyed "
                          "whole (mi_heap_new / mi_heap_destroy)"},
    // One multishot SQE receives the whole response; the kernel picks a ring buffer for each completion.
    // What goes away is the SQE and the io_uring_enter per receive; the copy into the padded buffer stays.
    Recipe{.name = "provided_buffers", .mirrors = kPooled, .client = {.receive = http::ReceiveMode::provided_buffers},
           .inflight = true,
           .description = "multishot recv into a provided-buffer ring; one copy remains: kernel-chosen buffers -> "
                          "padded buffer (simdjson needs contiguous padded input)"},
    // provided_buffers with bundles: one completion for as many ring buffers as the socket's queued bytes fill,
    // so fewer completions (and io_uring_enter waits) per large body; the same copy out of the buffers.
    Recipe{.name = "provided_bundles", .mirrors = kPooled, .client = {.receive = http::ReceiveMode::provided_bundles},
           .inflight = true,
           .description = "provided_buffers with each receive a bundle (IORING_RECVSEND_BUNDLE): one completion "
                          "for several ring buffers; the same copy into the padded buffer"},
    // No copy into a body buffer: one incremental ring (IOU_PBUF_RING_INC) shared by the connections, each
    // receive landing where the ring's last one left off, so a body's pieces lie apart between other
    // connections' pieces; each piece's whole records are parsed where they landed (json::parse_piece),
    // and only a record cut between two pieces is copied (streaming_sink.hpp's PieceArraySink). The ring
    // holds provided_buffers' 4 MiB in 16 buffers of 256 KiB: a receive takes at most what is left of one
    // buffer, so larger buffers mean fewer receives (and cuts) per body, and an incremental buffer is shared
    // by every receive that lands in it, where provided_buffers' single receives each take a whole one.
    // With one connection the ring is its alone, its pieces lie one after the other (the ring is mapped
    // twice, so across its end too), and a cut record is parsed where it lies: nothing copied.
    Recipe{.name = "provided_incremental", .mirrors = kHeadersRead,
           .client = {.receive = http::ReceiveMode::provided_incremental,
                      .ring = {.buffers = 16, .buffer_bytes = 256 * 1024}},
           .make = &make_inflight_streaming<PieceArraySink>, .inflight = true,
           .make_inflight = &make_inflight_streaming<PieceArraySink>,
           .description = "single recvs into one incremental provided-buffer ring (IOU_PBUF_RING_INC, 16 x 256 KiB) "
                          "shared by the connections; each piece's whole records parsed where they landed into reused owning "
                          "models; only records cut between pieces are copied, and none with one connection"},
    // provided_incremental with a ring for each connection: each connection alone on its ring, so its pieces
    // always lie one after the other and a cut record is parsed where it lies at any N (nothing copied). The
    // rings split what one ring of 2 x 1 MiB holds (2 x 1 MiB at one connection, 2 x 16 KiB each at 64,
    // 2 x 4 KiB each at 256), so a receive takes at most a buffer: more receives per body as N grows.
    Recipe{.name = "provided_incremental_own", .mirrors = kHeadersRead,
           .client = {.receive = http::ReceiveMode::provided_incremental,
                      .ring = {.buffers = 2, .buffer_bytes = 1024 * 1024},
                      .ring_per_connection = true},
           .make = &make_inflight_streaming<PieceArraySink>, .inflight = true,
           .make_inflight = &make_inflight_streaming<PieceArraySink>,
           .description = "single recvs into an incremental provided-buffer ring of each connection's own (2 buffers, "
                          "1 MiB each at one connection, split by N); each piece parsed where it landed, a record cut "
                          "between pieces with the next piece where it lies: no body byte copied"},
    // No copy of the body on the client's CPU: the kernel maps its receive pages (TCP_ZEROCOPY_RECEIVE) into
    // the client's address space, where they are parsed as views parses its body (mapped.cpp).
    Recipe{.name = "mapped", .mirrors = kHeadersRead, .parse_floor = "floor_parse", .client = {.query = "&pages=1"},
           .models = Models::views, .make = &make_mapped,
           .description = "blocking socket; the body's pages mapped by the kernel (TCP_ZEROCOPY_RECEIVE) from a "
                          "page-aligned zero-copy answer (pages=1), parsed where they lie into views; only the "
                          "last partial page is copied"},
    // The kernel pins and maps the buffer's pages once, at setup, instead of at every receive.
    Recipe{.name = "fixed_buffers", .mirrors = kPooled, .sink = Sink::fixed_buffers, .inflight = true,
           .description = "body received by READ_FIXED into a registered (pinned once) padded buffer, parsed in "
                          "place into reused owning models"},
    // Records parsed between receives (streaming_sink.hpp): NDJSON lines as batches into views (its
    // non-streaming twin is views), or the records of the ordinary array complete so far, one document per
    // receive (json::parse_arriving).
    Recipe{.name = "streaming", .mirrors = kHeadersRead, .parse_floor = "floor_parse",
           .client = {.query = "&format=ndjson"},
           .make = &make_streaming<NdjsonStreamingSink>, .inflight = true,
           .make_inflight = &make_inflight_streaming<NdjsonStreamingSink>,
           .description = "NDJSON body (format=ndjson) received in place; between receives, the whole lines so far "
                          "are parsed as one batch (iterate_many) into views"},
    Recipe{.name = "streaming_array", .mirrors = kHeadersRead, .make = &make_streaming<ArrayStreamingSink>,
           .inflight = true, .make_inflight = &make_inflight_streaming<ArrayStreamingSink>,
           .description = "JSON array body received in place; between receives, the records complete so far "
                          "(up to the last '},{' in) are parsed as one document"},
    // ---- the seed methods of nikouu's HttpClientBenchmarking that no row above does as .NET does
    // (bench/src/seeds/nikouu.hpp maps all nine). GetStreamAsync, GetFromJsonAsync, and ReadAsStreamAsync or
    // ReadFromJsonAsync after ResponseHeadersRead: JsonSerializer.DeserializeAsync reads the connection's
    // stream and builds a new List<T> of new records as the bytes arrive; streaming_array does the same
    // parse but overwrites kept records, which no seed method does.
    Recipe{.name = "streaming_array_fresh", .mirrors = kStreamedFresh, .models = Models::fresh_owning,
           .make = &make_streaming<FreshArrayStreamingSink>, .inflight = true,
           .make_inflight = &make_inflight_streaming<FreshArrayStreamingSink>,
           .description = "as streaming_array (JSON array body received in place; between receives, the records "
                          "complete so far parsed as one document), each record parsed into fresh owning models "
                          "made anew at every request"},
    // GetStringAsync (.NET 5 and later): the body is copied into a buffer rented from ArrayPool (kept across
    // requests, so no allocation in steady state), then decoded into one string of exactly its size, which
    // is deserialized into fresh objects. exact_string is that only with a Content-Length; chunked (the
    // seeds' servers) it regrows as string_copy does.
    Recipe{.name = "pooled_string", .mirrors = kGetStringPooled, .sink = Sink::pooled_string,
           .models = Models::fresh_owning,
           .description = "body received in place into one padded buffer kept across requests, copied into a fresh "
                          "std::string of exactly its size (and simdjson's padding), parsed from it into fresh "
                          "owning models"},
    // No Content-Length to size the buffer with (the server's default 4 KiB chunks): the buffer keeps the
    // capacity the largest body needed, and each piece slides down over the framing by memmove.
    Recipe{.name = "chunked", .mirrors = kHeadersRead, .client = {.query = "&chunked=1"},
           .description = "as presized, but the server answers Transfer-Encoding: chunked; the body is de-chunked "
                          "in place (memmove over the framing)"},
    // A connect round trip more per request; the client, closing first, keeps the socket in TIME_WAIT for
    // 60 s (notes() counts them, from /proc/net/tcp and tcp6).
    Recipe{.name = "fresh_connection", .mirrors = "new HttpClient per request vs factory/pooled",
           .client = {.connection = http::ConnectionPolicy::fresh_per_request}, .counts_time_wait = true,
           .description = "as presized, but a new TCP connection per request (connect, then close: one socket left "
                          "in TIME_WAIT per request)"},
    // POST /echo of N serialized records (made once at setup by json/'s serializer), the echo received as
    // presized receives and parsed into reused owning models. The three differ only in the send mode.
    post({.name = "send_copy", .baseline = true, .client = {.send = http::SendMode::copy},
          .description = "POST /echo: head and body copied into one buffer, one send; echoed body presized and "
                         "parsed (baseline)"}),
    post({.name = "writev", .client = {.send = http::SendMode::writev},
          .description = "POST /echo: head and body as two iovecs, one sendmsg, no copy in user space"}),
    // The client waits for the notification CQE before the body may be reused. Over loopback the kernel
    // copies every send (the receiving socket is local), so expect only the notification's cost.
    post({.name = "send_zc", .client = {.send = http::SendMode::zero_copy},
          .description = "POST /echo: head by send, body by SEND_ZC with REPORT_USAGE, waiting for the "
                         "notification; counts the sends the kernel copied anyway"}),
    proxy({.name = "proxy_pooled", .mirrors = kProxyFactory, .baseline = true,
           .client = {.query = "&conn=pooled&answer=status"},
           .description = "N GETs of /proxy per op; the server fetches 10 records from its upstream over a "
                          "kept-alive connection and answers the status alone; each answer read into a fresh "
                          "string (baseline)"}),
    proxy({.name = "proxy_fresh", .mirrors = kProxyNew, .client = {.query = "&conn=fresh&answer=status"},
           .description = "as proxy_pooled, but the server opens a new upstream connection per fetch and closes it "
                          "(TIME_WAIT on the server's side, counted in the notes)"}),
    proxy({.name = "proxy_pooled_body", .mirrors = kProxyFactory, .client = {.query = "&conn=pooled&answer=body"},
           .description = "as proxy_pooled, the upstream's body (10 records) passed through to the client"}),
    proxy({.name = "proxy_fresh_body", .mirrors = kProxyNew, .client = {.query = "&conn=fresh&answer=body"},
           .description = "as proxy_fresh, the upstream's body (10 records) passed through to the client"}),
    // The typed-vs-manual article's two benchmarks, row for row: its endpoints call the upstream through a
    // ManualClient (an HttpClient configured by hand) or a TypedClient (configured by IHttpClientFactory),
    // both over the factory's pooled handler, and answer the status. proxy_manual is proxy_pooled with the
    // path named; proxy_typed differs from it in the server's client=typed alone (server/src/upstream.hpp).
    proxy({.name = "proxy_manual", .mirrors = "SingleHttpRequestManual (ManualClient: HttpClient configured by hand)",
           .client = {.query = "&conn=pooled&answer=status&client=manual"},
           .description = "as proxy_pooled, the server's handler starting the pooled upstream fetch itself "
                          "(client=manual)"}),
    proxy({.name = "proxy_typed", .mirrors = "SingleHttpRequestTyped (TypedClient: HttpClient from IHttpClientFactory)",
           .client = {.query = "&conn=pooled&answer=status&client=typed"},
           .description = "as proxy_manual, the fetch made by the worker's typed client, built once from the "
                          "same upstream pool, whose method performs it and reports the status (client=typed)"}),
    // joncloud's net-http-perf: POST of one 17-byte object (kEchoBody) to /echo?chunked=1.
    echo({.name = "echo", .mirrors = kEchoClient, .baseline = true,
          .description = "POST {\"lorem\":\"ipsum\"} to /echo?chunked=1 on a kept-alive connection; the chunked "
                         "answer appended to a fresh std::string, nothing parsed (baseline)"}),
    // What .NET Core's HttpWebRequest does, building a new HttpClient per request (the seed's 4.98x).
    echo({.name = "echo_fresh", .mirrors = kEchoWebRequest,
          .client = {.connection = http::ConnectionPolicy::fresh_per_request},
          .description = "as echo, on a new connection per request, closed after the answer"}),
};

// ---- reference rows: physical limits (floors.cpp, floor_minimal.cpp; the libraries' in their files)
constexpr std::array kReferences{
    reference({.name = "floor_transfer", .make = &make_floor_transfer,
               .description = "reference: kept-alive GET through the same ring into a presized padded buffer, "
                              "nothing parsed: what the network alone costs"}),
    reference({.name = "floor_parse", .make = &make_floor_parse,
               .description = "reference: the body already in a warm padded buffer, parsed into views and consumed, "
                              "no request: what parsing alone costs"}),
    reference({.name = "floor_parse_rapidjson", .make = &make_floor_parse_rapidjson,
               .description = "reference: floor_parse's warm body parsed by rapidjson as the rapidjson rows parse "
                              "it (in situ SAX into owning models), after one copy of the body, which in situ "
                              "parsing overwrites"}),
    reference({.name = "floor_parse_nlohmann", .make = &make_floor_parse_nlohmann,
               .description = "reference: floor_parse's warm body parsed by nlohmann as the nlohmann row parses it "
                              "(a DOM, mapped onto owning models)"}),
    reference({.name = "floor_parse_minimal", .make = &make_floor_parse_minimal,
               .description = "reference: floor_parse's warm body parsed by a minimal On-Demand loop of the four "
                              "weather fields into plain structs: the yardstick of json/'s reader (weather only)"}),
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

// The strategy of `recipe`: made by `own`, the row's maker of its own (Recipe::make or make_inflight),
// when it names one, else by `generic`, which runs the row's fields. A plain `if`, at run time: with the
// sanitizers on, GCC does not take a function's address compared with null as a constant expression.
std::unique_ptr<Strategy> make_own_or(MakeStrategy own, MakeStrategy generic, const Recipe& recipe) {
  if (own != nullptr) return own(recipe);
  return generic(recipe);
}

// The factory of row `index`: its own maker, or RecipeStrategy with the row's sink and models. Both
// compile for every row (a row with a maker keeps the default sink and models, which RecipeStrategy can
// run).
template <std::size_t index>
std::unique_ptr<Strategy> make_row() {
  constexpr const Recipe& recipe = kRecipes[index];
  return make_own_or(recipe.make, &make_recipe_strategy<recipe.sink, recipe.models>, recipe);
}

// The many-in-flight factory of row `index` (Descriptor::make_inflight): only rows with `inflight` get it.
// A row of ringlab's stack without a maker of its own runs as InflightRecipeStrategy with its sink and
// models (inflight_recipe.hpp); that template is made only for the rows that set `inflight`, since it
// takes fewer sinks and models than RecipeStrategy.
template <std::size_t index>
std::unique_ptr<Strategy> make_inflight_row() {
  constexpr const Recipe& recipe = kRecipes[index];
  if constexpr (!recipe.inflight) {
    return nullptr;
  } else {
    return make_own_or(recipe.make_inflight, &make_inflight_recipe_strategy<recipe.sink, recipe.models>, recipe);
  }
}

using Factory = std::unique_ptr<Strategy> (*)();

constexpr Descriptor describe(const Recipe& recipe, Factory make, Factory make_inflight) {
  return Descriptor{.name = recipe.name,
                    .description = recipe.description,
                    .mirrors = recipe.mirrors,
                    .method = recipe.method,
                    .baseline = recipe.baseline,
                    .peer = recipe.peer,
                    .make = make,
                    .reference = recipe.reference,
                    .parse_floor = recipe.parse_floor,
                    .partial_checksum = recipe.partial_checksum,
                    .make_inflight = recipe.inflight ? make_inflight : nullptr};
}

template <std::size_t... index>
constexpr std::array<Descriptor, sizeof...(index)> descriptors(std::index_sequence<index...>) {
  return {describe(kRecipes[index], &make_row<index>, &make_inflight_row<index>)...};
}

constexpr auto kRegistry = descriptors(std::make_index_sequence<kRecipes.size()>{});

constexpr base::EnumNames<Payload, 4> kPayloadNames{
    {{{Payload::weather, "weather"}, {Payload::repos, "repos"}, {Payload::github, "github"}, {Payload::profiles, "profiles"}}},
    "?"};
constexpr base::EnumNames<Connection, 2> kConnectionNames{
    {{{Connection::pooled, "pooled"}, {Connection::fresh, "fresh"}}}, "?"};
constexpr base::EnumNames<ServerMode, 2> kServerModeNames{
    {{{ServerMode::cached, "cached"}, {ServerMode::seed, "seed"}}}, "?"};

// The built-in table followed by the rows register_strategy() added. Built on first use, not at static
// initialisation: nothing registers itself. Its room for added rows is reserved at once and never
// exceeded, so the vector never moves: a span or a Descriptor* taken from it stays valid.
std::vector<Descriptor>& rows() {
  static std::vector<Descriptor> all = [] {
    std::vector<Descriptor> table;
    table.reserve(kRegistry.size() + kMaxRegisteredStrategies);
    table.assign(kRegistry.begin(), kRegistry.end());
    return table;
  }();
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
  if (rows().size() == rows().capacity()) {
    return std::unexpected(Error{"register_strategy: " + name + ": at most " + std::to_string(kMaxRegisteredStrategies) +
                                 " strategies can be added (kMaxRegisteredStrategies: the registry never moves)"});
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
