#include "ringlab/http/sinks.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

namespace ringlab::http {
namespace {

// A chunked or close-delimited body has no size up front: the window it is received into never
// shrinks below this, so the receives stay large while the buffer doubles.
constexpr std::size_t kMinimumWindow = 16 * 1024;

bool lies_within(const char* p, const char* begin, const char* end) {
  // std::less gives a total order over unrelated pointers, where the built-in < does not.
  return !std::less<const char*>{}(p, begin) && std::less<const char*>{}(p, end);
}

}  // namespace

Status PresizedSink::begin(const ResponseHead& head) {
  out_->clear();
  length_known_ = head.content_length.has_value();
  if (!head.content_length) {
    // Chunked or close-delimited: start from what the buffer already has (a buffer reused across
    // responses keeps its capacity), growing by doubling if the body needs more.
    if (fixed_index_ < 0 && out_->capacity() < kMinimumWindow) out_->reserve(kMinimumWindow);
    return {};
  }
  const uint64_t length = *head.content_length;
  if (fixed_index_ >= 0) {
    // The buffer is registered memory: moving it would take the body out of it.
    if (length > out_->capacity()) {
      return fail(Errc::body_too_large, "Content-Length " + std::to_string(length) + " exceeds the fixed buffer (" +
                                            std::to_string(out_->capacity()) + " bytes)");
    }
    return {};
  }
  out_->reserve(static_cast<std::size_t>(length));
  return {};
}

ReceiveWindow PresizedSink::receive_window() {
  // A Content-Length body was reserved whole: its spare is exactly what is left of it. Otherwise
  // keep the window large by doubling (never for registered memory, which cannot move).
  if (!length_known_ && fixed_index_ < 0 && out_->spare().size() < kMinimumWindow) {
    count_copied(out_->size());  // the growth moves what the buffer holds
    out_->reserve(std::max(out_->capacity() * 2, out_->size() + kMinimumWindow));
  }
  return ReceiveWindow{out_->spare(), fixed_index_};
}

Status PresizedSink::on_body(std::string_view bytes) {
  char* cursor = out_->data() + out_->size();
  if (bytes.data() == cursor) {
    // Received in place: the bytes are already where they belong.
    out_->commit(bytes.size());
    return {};
  }
  if (out_->data() != nullptr && lies_within(bytes.data(), out_->data(), out_->data() + out_->capacity())) {
    // Received into the window but behind chunk framing: slide the piece down over the framing.
    // It lies after the cursor, so it fits without growing (and growing would move it).
    std::memmove(cursor, bytes.data(), bytes.size());
    out_->commit(bytes.size());
    count_copied(bytes.size());
    return {};
  }
  // Bytes from elsewhere (the client's buffer: the part of the body that came with the head).
  if (bytes.size() > out_->spare().size()) {
    if (fixed_index_ >= 0) {
      return fail(Errc::body_too_large,
                  "body exceeds the fixed buffer (" + std::to_string(out_->capacity()) + " bytes)");
    }
    count_copied(out_->size());  // the growth moves what the buffer holds
    out_->reserve(std::max(out_->size() + bytes.size(), out_->capacity() * 2));
  }
  std::memcpy(out_->data() + out_->size(), bytes.data(), bytes.size());
  out_->commit(bytes.size());
  count_copied(bytes.size());
  return {};
}

}  // namespace ringlab::http
