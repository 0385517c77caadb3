#pragma once
// Where the fixed and sendfile body strategies put a cached body besides its bytes (server.hpp,
// "Body strategies"). Private to server/src.
//
// FixedArea: one buffer registered with a worker's ring (io_uring_register_buffers, index 0), into
// which cached bodies are copied once (first fit, 64-byte aligned). A body's range is given back when
// the last reference to the body goes (BodyPlacement::keep), so a send from it never outlives it.
// The area lives as long as its last body (each keep holds it), the registration as long as the ring.
//
// Body files: each body in its own unlinked file (O_TMPFILE, else mkstemp and unlink) in $TMPDIR or
// /tmp, written once; closed with the body.
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ringlab/server/body_cache.hpp"
#include "ringlab/server/server.hpp"

namespace ringlab::net {
class Ring;
}

namespace ringlab::server {

class FixedArea : public std::enable_shared_from_this<FixedArea> {
 public:
  // Maps `bytes` and registers them with `ring`; the error names what failed.
  static Result<std::shared_ptr<FixedArea>> create(net::Ring& ring, std::size_t bytes);
  ~FixedArea();
  FixedArea(const FixedArea&) = delete;
  FixedArea& operator=(const FixedArea&) = delete;

  // Copies `body`'s bytes into the area and fills its placement; false when they do not fit now.
  bool place(Body& body);
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_bytes_; }

 private:
  FixedArea() = default;
  void release(std::size_t offset, std::size_t length) noexcept;

  char* memory_ = nullptr;
  std::size_t size_ = 0;
  std::size_t free_bytes_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> length, never adjacent (merged)
};

// Writes `body`'s bytes to a new unlinked file and fills its placement; false on any failure.
bool place_in_file(Body& body);

}  // namespace ringlab::server
