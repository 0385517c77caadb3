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
// connection). Deserialization is stamped by the caller (`deserialized`).
struct Timeline {
  uint64_t start = 0;
  uint64_t connected = 0;
  uint64_t request_sent = 0;
  uint64_t first_byte = 0;
  uint64_t head_parsed = 0;
  uint64_t body_done = 0;
  uint64_t deserialized = 0;
};

}  // namespace ringlab::http
