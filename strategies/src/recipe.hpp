#pragma once
// Recipe: one row of the strategy table (registry.cpp), with named fields. A strategy of ringlab's own
// stack is its recipe and nothing else: what the client does (connection policy, receive mode, send mode,
// one or two io_uring enters, the target's extra query), where the body lands (the sink), and what it is
// parsed into (the models). RecipeStrategy (recipe_strategy.hpp) runs every such row, so that two rows
// that differ in the table differ in those fields only.
//
// A row whose code differs from the generic client (streaming, the floors, proxy, the memory resources of
// arena and mimalloc_heap, the JSON libraries, the peers) names its class through `make`, a maker defined
// next to that class (its family's header declares it); its other fields describe it in the table.
//
// Lifetime: the rows are constant data of the program; a strategy made from a row may keep a reference
// to it (RecipeStrategy does), and the strings it points to are string literals.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "ringlab/http/client.hpp"
#include "ringlab/http/inflight_client.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

struct Recipe;
// Makes the strategy of a row with code of its own; gets the row (its name, method and client fields).
using MakeStrategy = std::unique_ptr<Strategy> (*)(const Recipe& recipe);

// How many io_uring_enter calls a kept-alive request whose response fits one receive costs.
enum class Enters {
  send_then_wait,  // two: the send goes first, then the receive is awaited
  one,             // the send and the first receive queued together, one enter that waits for the receive
};

// What the client does for a row.
struct ClientRecipe {
  http::ConnectionPolicy connection = http::ConnectionPolicy::keep_alive;
  http::ReceiveMode receive = http::ReceiveMode::own_buffer;
  // POST and echo rows: how the head and the body go out (http::Request's default for the others).
  http::SendMode send = http::Request{}.send;
  Enters enters = Enters::send_then_wait;
  // Appended to a GET target ("&chunked=1"; the proxy's "&conn=...&answer=...").
  std::string_view query{};
  // The provided-buffer rows' ring: how many buffers (a power of two) of how many bytes. One ring per
  // client, shared by its connections; the defaults are http's (64 x 64 KiB). A case may ask for another
  // (CaseConfig::ring, bench --ring-buffers and --ring-buffer-bytes): ring_for().
  RingGeometry ring{.buffers = http::InflightOptions{}.provided_buffer_count,
                    .buffer_bytes = http::InflightOptions{}.provided_buffer_bytes};
  // provided_incremental: a ring for each connection instead of one shared (http's
  // InflightOptions::ring_per_connection), each `ring` at one connection; with N, each buffer holds
  // ring.buffer_bytes / N, rounded down to a power of two and never under a page (own_ring_bytes()), so
  // that the N rings together hold about what one does.
  bool ring_per_connection = false;
};

// The bytes of each buffer of a connection's own ring with `connections` connections (see above).
[[nodiscard]] inline unsigned own_ring_bytes(unsigned buffer_bytes, std::size_t connections) noexcept {
  constexpr unsigned kPage = 4096;
  const auto share = static_cast<unsigned>(buffer_bytes / std::max<std::size_t>(connections, 1));
  return std::max(kPage, std::bit_floor(share));
}

// The ring a case of a row receives into: the row's, field by field, unless the case asks for another.
[[nodiscard]] inline RingGeometry ring_for(const ClientRecipe& client, const RingGeometry& asked) noexcept {
  return {.buffers = asked.buffers != 0 ? asked.buffers : client.ring.buffers,
          .buffer_bytes = asked.buffer_bytes != 0 ? asked.buffer_bytes : client.ring.buffer_bytes};
}

// Where the body lands.
enum class Sink {
  string,          // a std::string made anew at every request, appended to and regrown (StringSink)
  exact_string,    // as string, reserved to exactly Content-Length once the head is parsed
  growing_buffer,  // a padded buffer made anew at every request, doubling as it fills (GrowingSink)
  presized_buffer, // one padded buffer kept across requests, sized to Content-Length, received into in place
  fixed_buffers,   // one padded buffer registered with the ring at setup, received into by READ_FIXED
  // As presized_buffer (one buffer kept across requests, as .NET's ArrayPool keeps the one GetStringAsync
  // rents), then copied once into a fresh std::string of exactly the body's size (and simdjson's padding),
  // which is parsed: GetStringAsync's pooled read, then its string.
  pooled_string,
};

// What the body is parsed into.
enum class Models {
  fresh_owning,   // owning models made anew at every request (.NET's deserializers)
  reused_owning,  // owning models overwritten in place (strings keep their capacity)
  views,          // viewing models: string_views into the body
  three_fields,   // {stars, name, url} of each record alone (json::GithubStars); weather: skipped
  answer_only,    // nothing parsed: the answer's size is consumed, its checksum is the echo's
};

// The fields in the order a row of the table names them: what it is, then the description last, so that a
// row is a line of fields and the description under it.
struct Recipe {
  std::string_view name = {};     // "presized"
  std::string_view mirrors = {};  // the .NET pattern of the seeds it corresponds to (a kind of row may set it)
  Method method = Method::get;
  bool baseline = false;          // Descriptor::baseline
  bool peer = false;              // Descriptor::peer
  bool reference = false;         // Descriptor::reference
  bool partial_checksum = false;  // Descriptor::partial_checksum
  std::string_view parse_floor = {};  // Descriptor::parse_floor
  ClientRecipe client{};
  Sink sink = Sink::presized_buffer;
  Models models = Models::reused_owning;
  // notes() counts the sockets in TIME_WAIT on the server's port, at the case's start and now.
  bool counts_time_wait = false;
  // A strategy with code of its own; null: RecipeStrategy runs the fields above.
  MakeStrategy make = nullptr;
  // The row has a strategy for cases with more than one request in flight (Descriptor::make_inflight),
  // made by make_inflight. A flag beside the pointer because the table is built at compile time, where
  // GCC with the sanitizers does not take a function's address compared with null as a constant.
  bool inflight = false;
  MakeStrategy make_inflight = nullptr;
  std::string_view description = {};  // the table's one line (Descriptor::description)
};

// The built-in rows in table order (registry() starts with one Descriptor per row, in this order).
[[nodiscard]] std::span<const Recipe> recipes() noexcept;

}  // namespace ringlab::strategies::detail
