#pragma once
// The body sinks every layer above can reuse. Strategies may define their own (see body_sink.hpp).
//
//   StringSink     appends every piece to a std::string (the baseline's copy; grows by the string's
//                  own policy).
//   GrowingSink    appends into a PaddedBuffer that doubles and copies when full, ignoring
//                  Content-Length (a buffered stream).
//   PresizedSink   after the head, reserves one PaddedBuffer of Content-Length bytes and offers it as
//                  the receive window, so the body lands in place (chunked or close-delimited bodies
//                  grow it by doubling, de-chunked in place by memmove: a piece that landed behind
//                  chunk framing slides down to the cursor). With a fixed-buffer index it never
//                  reallocates: a body larger than its capacity is Errc::body_too_large.
//   DiscardSink    counts the bytes and keeps none (for the server's proxy route and load tests).
//
// What each copies in user space (BodySink::copied_bytes): StringSink and GrowingSink every byte, plus
// what each growth moves; PresizedSink only the body bytes that came with the head (they are in the
// client's buffer), pieces slid down over chunk framing, and what a growth moves (a body without
// Content-Length, or larger than the buffer's capacity); DiscardSink none.
//
// Ownership: StringSink and the buffer sinks write into storage the caller owns and passes in; they
// clear it at begin(). The views they return live until the next begin().
#include <string>

#include "ringlab/http/body_sink.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::http {

// StringSink and GrowingSink: every piece appended to `out`, which is cleared at begin() and grows by
// its own policy. No receive window: the bytes arrive in the receiver's buffer and are copied here.
template <class Buffer>
class AppendingSink final : public BodySink {
 public:
  explicit AppendingSink(Buffer& out) noexcept : out_(&out) {}
  Status begin(const ResponseHead&) override {
    out_->clear();
    return {};
  }
  Status on_body(std::string_view bytes) override {
    // A growth moves the bytes already appended (both std::string and PaddedBuffer reallocate and copy).
    if (out_->size() + bytes.size() > out_->capacity()) count_copied(out_->size());
    out_->append(bytes);
    count_copied(bytes.size());
    return {};
  }
  Status end() override { return {}; }

 private:
  Buffer* out_;
};
using StringSink = AppendingSink<std::string>;
using GrowingSink = AppendingSink<base::PaddedBuffer>;

class PresizedSink final : public BodySink {
 public:
  // fixed_buffer_index >= 0: `out` lives in that registered buffer (it must not reallocate then:
  // a body larger than its capacity is Errc::body_too_large).
  explicit PresizedSink(base::PaddedBuffer& out, int fixed_buffer_index = -1) noexcept
      : out_(&out), fixed_index_(fixed_buffer_index) {}
  Status begin(const ResponseHead& head) override;
  ReceiveWindow receive_window() override;
  [[nodiscard]] bool receives_in_place() const noexcept override { return true; }
  Status on_body(std::string_view bytes) override;
  Status end() override { return {}; }

 private:
  base::PaddedBuffer* out_;
  int fixed_index_;
  bool length_known_ = false;  // Content-Length body: reserved whole at begin(), never grown
};

class DiscardSink final : public BodySink {
 public:
  Status begin(const ResponseHead&) override { bytes_ = 0; return {}; }
  Status on_body(std::string_view bytes) override { bytes_ += bytes.size(); return {}; }
  Status end() override { return {}; }
  [[nodiscard]] uint64_t bytes() const noexcept { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

}  // namespace ringlab::http
