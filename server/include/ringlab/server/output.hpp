#pragma once
// OutputBatch: the bytes of one or more responses of one connection, gathered for one sendmsg (a
// plain send when they are one iovec).
//
// A connection keeps two: one in flight (handed to the kernel) and one pending (where new responses
// are appended while the other is sent). Appending to the batch in flight is the caller's bug.
//
// Ownership of the bytes a batch sends:
//   - append_copy(): copied into the batch's own byte buffer (heads, chunk framing, small bodies);
//   - append_ref() : not copied; the caller keeps the bytes alive until clear(), either because they
//                    are static, or by hold() (a shared reference to a cached body), or by adopt()
//                    (a string moved into the batch: echo and proxy bodies).
// Views returned by iovecs() live until the next append, consume() or clear().
//
// A referenced body may carry a BodySource (append_body with a source): it then goes to the kernel
// by its own operation (a zero-copy send, a send from registered memory, a splice from a file), and
// iovecs() stops before it; while it is next, iovecs() is that one iovec and current_source() says
// how to send it. Its iovec still points at the body's bytes in memory (flatten() and consume() work
// the same); the source maps an address in them to the registered copy or the file offset.
//
// Memory: clear() keeps every vector's capacity, so a connection that serves the same kind of
// response again allocates nothing. A batch whose byte buffer or vectors grew beyond kRetainBytes
// gives the memory back at clear(): a connection that once echoed 16 MiB should not hold 16 MiB
// while idle. queued_bytes() is what the batch's contents hold (see there); the connection bounds it.
#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ringlab::server {

// How a referenced body reaches the kernel (ServerOptions::body_strategy, server.hpp).
struct BodySource {
  enum class Kind : uint8_t {
    memory,     // an iovec of the batch's sendmsg (the default)
    copy,       // copied into the batch's own bytes, whatever its size
    zero_copy,  // its own IORING_OP_SEND_ZC
    fixed,      // its own IORING_OP_SEND_ZC from registered memory
    file,       // spliced from a file
  };
  Kind kind = Kind::memory;
  const char* origin = nullptr;  // the body's first byte in memory: segments are slices of it
  const char* fixed = nullptr;   // fixed: the copy of `origin` in registered memory
  uint16_t buf_index = 0;        // fixed: the registered buffer holding it
  int file_fd = -1;              // file: the body's bytes from offset 0

  [[nodiscard]] bool own_operation() const noexcept {
    return kind == Kind::zero_copy || kind == Kind::fixed || kind == Kind::file;
  }
};

class OutputBatch {
 public:
  // Default for the size up to which append_body() copies a body next to the head instead of
  // referencing it: one iovec fewer, and for a few hundred bytes the copy costs about what the
  // kernel's per-iovec work does (the server's --inline-body flag changes it, so it can be measured).
  static constexpr std::size_t kInlineBytes = 1024;
  static constexpr std::size_t kRetainBytes = 1u << 20;
  // Above every small-string buffer (libstdc++: 15 bytes).
  static constexpr std::size_t kHeapCapacity = 64;

  explicit OutputBatch(std::size_t inline_limit = kInlineBytes);

  void append_copy(std::string_view bytes);
  // Appends what `write(std::string&)` appends to the string it is given (the batch's own byte
  // buffer): a head is formatted in place instead of being built elsewhere and copied.
  template <class Write>
  void append_written(Write&& write) {
    const std::size_t start = bytes_.size();
    write(bytes_);
    note_written(start);
  }
  void append_ref(std::string_view bytes);
  // Copies bodies up to inline_limit() bytes, references larger ones; the caller guarantees the
  // lifetime of referenced bytes as for append_ref().
  void append_body(std::string_view bytes);
  // The same for a body that `source` says how to send: copy copies it, memory is append_body(), and
  // the others reference it as a segment of its own (bodies up to inline_limit() are copied).
  void append_body(std::string_view bytes, const BodySource& source);
  [[nodiscard]] std::size_t inline_limit() const noexcept { return inline_limit_; }
  // Keeps `owner` alive until clear().
  void hold(std::shared_ptr<const void> owner);
  // Takes `body` over and returns a view of its bytes, valid until clear() (the caller then appends
  // the view, usually with append_body()). The string is kept on the heap, where a move does not
  // move its bytes, so the view stays put while the batch's own vectors grow.
  std::string_view adopt(std::string&& body);

  [[nodiscard]] bool empty() const noexcept { return segments_.empty(); }
  [[nodiscard]] std::size_t total_bytes() const noexcept { return total_bytes_; }
  // Memory the queued answers hold: every byte to send (copied or referenced), the unused capacity
  // of adopted strings (an echo body reserved larger than it is), what the batch's own byte buffer
  // grew beyond its written bytes while filling (it doubles: 1 MiB of heads can hold 2 MiB), and the
  // bookkeeping per segment.
  // Referenced bytes count even when a cache shares them: evicted, they live on through this batch.
  // This, not total_bytes(), is what max_queued_output bounds: 1-byte echoes that each adopted a
  // 4 KiB string hold 4 KiB each, not 1 byte.
  [[nodiscard]] std::size_t queued_bytes() const noexcept {
    return total_bytes_ + adopted_slack_ + written_slack() + segments_.size() * kSegmentOverhead;
  }

  // Resolves the segments to iovecs. Call once before the first send of this batch.
  void prepare();
  // The iovecs not yet (fully) sent, up to the next segment with a source of its own; when that one is
  // next, just its iovec.
  [[nodiscard]] std::span<const iovec> iovecs() const noexcept;
  // The source of the next iovec to send when it needs its own operation; null otherwise.
  [[nodiscard]] const BodySource* current_source() const noexcept;
  // Marks n bytes as sent. Returns true when everything has been sent.
  bool consume(std::size_t n) noexcept;
  // Empties the batch. Adopted strings that are worth reusing (capacity at most kSpareBytes) are moved
  // into `recycled` (cleared, capacity kept) when it is not null, while it holds fewer than
  // kSpareCount: the pool of spares stays small whatever a burst of answers adopted.
  void clear(std::vector<std::string>* recycled = nullptr);
  // Up to 1 MiB, so an echo of a few hundred KB reuses its string instead of allocating (and
  // faulting in) a new one per request; two, so a connection holds at most 2 MiB of spares.
  static constexpr std::size_t kSpareBytes = 1u << 20;
  static constexpr std::size_t kSpareCount = 2;

  // Every byte of the batch in order (tests and diagnostics; allocates).
  [[nodiscard]] std::string flatten() const;

 private:
  void note_written(std::size_t start);
  // Capacity of bytes_ beyond both its written bytes and what it kept from earlier batches (that is
  // the connection's standing cost, bounded by kRetainBytes, not this batch's).
  [[nodiscard]] std::size_t written_slack() const noexcept {
    const std::size_t used = std::max(bytes_.size(), kept_capacity_);
    return bytes_.capacity() > used ? bytes_.capacity() - used : 0;
  }

  struct Segment {
    const char* data;     // null: bytes_ at offset
    std::size_t offset;
    std::size_t length;
    uint32_t source;      // 0: memory; else sources_[source - 1]
  };
  // A segment, its iovec and a share of the vectors' slack.
  static constexpr std::size_t kSegmentOverhead = 2 * (sizeof(Segment) + sizeof(iovec));
  std::string bytes_;
  std::vector<Segment> segments_;
  std::vector<std::shared_ptr<const void>> holds_;
  std::vector<std::string> adopted_;
  std::vector<iovec> iovecs_;
  std::vector<uint32_t> iovec_sources_;  // per iovec, as Segment::source
  std::vector<BodySource> sources_;
  std::size_t next_iovec_ = 0;
  std::size_t total_bytes_ = 0;
  std::size_t adopted_slack_ = 0;  // sum of capacity() - size() of adopted_
  std::size_t kept_capacity_ = 0;  // bytes_.capacity() when the batch was last emptied
  std::size_t inline_limit_;
};

}  // namespace ringlab::server
