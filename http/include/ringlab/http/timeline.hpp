#pragma once
// The phase timeline of one request, and the clock that stamps it. Below both the exchange
// (response_receiver.hpp) and the client, so that each can stamp without knowing the other.
//
// Threads: plain values; a Timeline is written by the thread doing the request.
#include <cstdint>

namespace ringlab::http {

// Returns the current tick (the unit is the source's: bench passes its cycle counter).
using TickSource = uint64_t (*)() noexcept;

// Ticks at each phase of one request; 0 where the phase did not happen (no connect on a reused
// connection, no body bytes in an empty body). Deserialization is stamped by the caller
// (`deserialized`).
//
// first_body_byte and last_body_byte are when the exchange handed the body's first and last bytes to
// the sink (the response parser's body callback, before the sink runs): with a body that is sent as
// it is produced they show how soon its first bytes arrive and how long the rest takes; a body sent
// whole arrives in a few receives close together. They lie between head_parsed and body_done (a body
// and the end of the message may arrive in different receives).
//
// client_begin .. client_closed: stamped only where a client is made per request (bench's fresh client):
// when its op began, when the last op's client was destroyed, when the new one was built and set up (ring
// or event loop, buffers), and when it was torn down after its request (ring and connection closed).
struct Timeline {
  uint64_t client_begin = 0;
  uint64_t client_freed = 0;
  uint64_t client_ready = 0;
  uint64_t client_closed = 0;
  uint64_t start = 0;
  uint64_t connected = 0;
  uint64_t request_sent = 0;
  uint64_t first_byte = 0;
  uint64_t head_parsed = 0;
  uint64_t first_body_byte = 0;
  uint64_t last_body_byte = 0;
  uint64_t body_done = 0;
  uint64_t deserialized = 0;

  // Clears the request's stamps (start .. deserialized) for a new attempt; a client's own stamps stay.
  void clear_request() noexcept {
    const Timeline client{.client_begin = client_begin,
                          .client_freed = client_freed,
                          .client_ready = client_ready,
                          .client_closed = client_closed};
    *this = client;
  }
};

}  // namespace ringlab::http
