#include "ringlab/server/output.hpp"

#include <utility>

namespace ringlab::server {

OutputBatch::OutputBatch(std::size_t inline_limit) : inline_limit_(inline_limit) {
  bytes_.reserve(4096);
  segments_.reserve(16);
  iovecs_.reserve(16);
}

void OutputBatch::append_copy(std::string_view bytes) {
  const std::size_t start = bytes_.size();
  bytes_.append(bytes);
  note_written(start);
}

void OutputBatch::note_written(std::size_t start) {
  const std::size_t length = bytes_.size() - start;
  if (length == 0) return;
  // Adjacent copies share one segment: a head, chunk framing and a small body become one iovec.
  if (!segments_.empty() && segments_.back().data == nullptr &&
      segments_.back().offset + segments_.back().length == start) {
    segments_.back().length += length;
  } else {
    segments_.push_back({nullptr, start, length});
  }
  total_bytes_ += length;
}

void OutputBatch::append_ref(std::string_view bytes) {
  if (bytes.empty()) return;
  segments_.push_back({bytes.data(), 0, bytes.size()});
  total_bytes_ += bytes.size();
}

void OutputBatch::append_body(std::string_view bytes) {
  if (bytes.size() <= inline_limit_) {
    append_copy(bytes);
  } else {
    append_ref(bytes);
  }
}

void OutputBatch::hold(std::shared_ptr<const void> owner) { holds_.push_back(std::move(owner)); }

std::string_view OutputBatch::adopt(std::string&& body) {
  // A string in its small-string buffer would move its bytes when adopted_ grows; one on the heap
  // keeps them. Strings from a connection's pool are always on the heap, so this rarely allocates.
  if (body.capacity() < kHeapCapacity) body.reserve(kHeapCapacity);
  adopted_.push_back(std::move(body));
  return adopted_.back();
}

void OutputBatch::prepare() {
  iovecs_.clear();
  for (const Segment& segment : segments_) {
    const char* base = segment.data != nullptr ? segment.data : bytes_.data() + segment.offset;
    iovecs_.push_back({const_cast<char*>(base), segment.length});
  }
  next_iovec_ = 0;
}

std::span<const iovec> OutputBatch::iovecs() const noexcept {
  return {iovecs_.data() + next_iovec_, iovecs_.size() - next_iovec_};
}

bool OutputBatch::consume(std::size_t n) noexcept {
  while (n > 0 && next_iovec_ < iovecs_.size()) {
    iovec& current = iovecs_[next_iovec_];
    if (n < current.iov_len) {
      current.iov_base = static_cast<char*>(current.iov_base) + n;
      current.iov_len -= n;
      return false;
    }
    n -= current.iov_len;
    ++next_iovec_;
  }
  return next_iovec_ == iovecs_.size();
}

void OutputBatch::clear(std::vector<std::string>* recycled) {
  if (bytes_.capacity() > kRetainBytes) {
    std::string().swap(bytes_);
    bytes_.reserve(4096);
  } else {
    bytes_.clear();
  }
  segments_.clear();
  holds_.clear();
  iovecs_.clear();
  next_iovec_ = 0;
  total_bytes_ = 0;
  for (std::string& body : adopted_) {
    if (recycled != nullptr && body.capacity() <= kRetainBytes) {
      body.clear();
      recycled->push_back(std::move(body));
    }
  }
  adopted_.clear();
}

std::string OutputBatch::flatten() const {
  std::string out;
  out.reserve(total_bytes_);
  for (const Segment& segment : segments_) {
    const char* base = segment.data != nullptr ? segment.data : bytes_.data() + segment.offset;
    out.append(base, segment.length);
  }
  return out;
}

}  // namespace ringlab::server
