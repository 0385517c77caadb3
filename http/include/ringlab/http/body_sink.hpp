#pragma once
// BodySink: the seam where strategies plug into the client. It decides where the bytes of a
// response body land and how often they are copied; nothing below it changes when a strategy is added.
//
// The client calls, for each response:
//   begin(head)          once the head is parsed (status, headers, content_length if known);
//   receive_window()     before each receive of body bytes: a sink that wants the body in its own
//                        memory returns the writable region where the next bytes should land (and,
//                        for registered memory, its fixed-buffer index); an empty window means "no
//                        preference": the client receives into its own buffer;
//   on_body(bytes)       for each de-chunked piece of body. If bytes.data() is the sink's write
//                        cursor, the bytes were received in place and the sink only advances; else it
//                        copies or moves them (chunk framing removed in place is such a move);
//   end()                when the body is complete.
// Body bytes that arrived in the same receive as the head are always in the client's buffer: a
// sink copies those, then gets the rest in place. A sink that says it receives in place
// (receives_in_place) has the head received by itself, in receives of at most kHeadReceiveBytes, when the
// last response was larger than the client's receive buffer, so that little of a large body comes with it.
//
// A sink returns an error (Errc::sink or body_too_large) to abort the response; the client then closes
// the connection. Views passed to on_body() live only during the call, with one exception a caller opts
// into: bytes kept in place (below).
//
// Kept in place: a sink that parses each piece where it landed (kernel-provided buffers) may leave the
// last bytes of the last piece it was given where they lie (a record cut at the piece's end) and say how
// many with kept_in_place(), to parse them with the next piece when that one begins right after them in
// memory (the caller may say they are to be read elsewhere first, kept_moved(), where the same bytes are
// mapped again); a next piece anywhere else makes the sink copy them then. The caller keeps those bytes readable,
// unchanged and writable until the next on_body(), end() or let_go(); let_go() copies them into the
// sink's own memory (counted) and they are the caller's again. A caller that cannot keep memory past
// on_body() calls let_go() when kept_in_place() is not 0 (ResponseReceiver::received_elsewhere does,
// unless told the caller keeps them).
//
// Copies: copied_bytes() counts the body bytes the sink copied or moved in user space since it was made
// (never reset; a caller takes differences): every byte it copies from a view that was not its own
// cursor, every byte slid over chunk framing, and every byte its storage moved when it grew. Bytes
// received in place count nothing: the kernel's copy into the window is the receive's, not the sink's.
// A sink that only counts or drops bytes copies none.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ringlab/http/error.hpp"
#include "ringlab/http/headers.hpp"

namespace ringlab::http {

struct ReceiveWindow {
  std::span<char> bytes{};
  int fixed_buffer_index = -1;  // >= 0: `bytes` lies in registered buffer with this index
};

// The most a receive before the head is parsed takes, for a sink that receives in place: a head of a
// few hundred bytes, and the body bytes after it that then need a copy, instead of a whole receive
// buffer of them (64 KiB by default: 65,414 bytes copied per 771,775-byte body at 10,000 records).
inline constexpr std::size_t kHeadReceiveBytes = 4096;

class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual Status begin(const ResponseHead& head) = 0;
  virtual ReceiveWindow receive_window() { return {}; }
  // True when receive_window() offers the body's memory once the head is parsed. Asked before the head:
  // the receiver then keeps the head's receives small (kHeadReceiveBytes).
  [[nodiscard]] virtual bool receives_in_place() const noexcept { return false; }
  virtual Status on_body(std::string_view bytes) = 0;
  virtual Status end() = 0;
  // A sink that hands the bytes to another sink reports that one's count (override).
  [[nodiscard]] virtual uint64_t copied_bytes() const noexcept { return copied_bytes_; }
  // Bytes at the end of the last on_body() piece the sink reads again where they lie (see above).
  [[nodiscard]] virtual std::size_t kept_in_place() const noexcept { return 0; }
  // Copies the bytes kept in place into the sink's own memory; the caller may then reuse theirs.
  virtual void let_go() {}
  // The bytes kept in place are to be read `by` bytes further on: the caller's memory holds the same bytes
  // there too (memory mapped twice), and its next piece follows them there.
  virtual void kept_moved(std::ptrdiff_t /*by*/) {}

 protected:
  void count_copied(std::size_t bytes) noexcept { copied_bytes_ += bytes; }

 private:
  uint64_t copied_bytes_ = 0;
};

}  // namespace ringlab::http
