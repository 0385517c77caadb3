#include "ringlab/server/output.hpp"

#include <utility>

namespace ringlab::server {

OutputBatch::OutputBatch(std::size_t inline_limit) : inline_limit_(inline_limit) {
  bytes_.reserve(4096);
  kept_capacity_ = bytes_.capacity();
  segments_.reserve(16);
  iovecs_.reserve(16);
  iovec_sources_.reserve(16);
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
    segments_.push_back({nullptr, start, length, 0});
  }
  total_bytes_ += length;
}

void OutputBatch::append_ref(std::string_view bytes) {
  if (bytes.empty()) return;
  segments_.push_back({bytes.data(), 0, bytes.size(), 0});
  total_bytes_ += bytes.size();
}

void OutputBatch::append_body(std::string_view bytes) {
  if (bytes.size() <= inline_limit_) {
    append_copy(bytes);
  } else {
    append_ref(bytes);
  }
}

void OutputBatch::append_body(std::string_view bytes, const BodySource& source) {
  if (source.kind == BodySource::Kind::copy) {
    append_copy(bytes);
  } else if (!source.own_operation() || bytes.size() <= inline_limit_) {
    append_body(bytes);
  } else {
    sources_.push_back(source);
    segments_.push_back({bytes.data(), 0, bytes.size(), static_cast<uint32_t>(sources_.size())});
    total_bytes_ += bytes.size();
  }
}

void OutputBatch::hold(std::shared_ptr<const void> owner) { holds_.push_back(std::move(owner)); }

std::string_view OutputBatch::adopt(std::string&& body) {
  // A string in its small-string buffer would move its bytes when adopted_ grows; one on the heap
  // keeps them. Strings from a connection's pool are always on the heap, so this rarely allocates.
  if (body.capacity() < kHeapCapacity) body.reserve(kHeapCapacity);
  adopted_slack_ += body.capacity() - body.size();
  adopted_.push_back(std::move(body));
  return adopted_.back();
}

void OutputBatch::prepare() {
  iovecs_.clear();
  iovec_sources_.clear();
  for (const Segment& segment : segments_) {
    const char* base = segment.data != nullptr ? segment.data : bytes_.data() + segment.offset;
    iovecs_.push_back({const_cast<char*>(base), segment.length});
    iovec_sources_.push_back(segment.source);
  }
  next_iovec_ = 0;
}

std::span<const iovec> OutputBatch::iovecs() const noexcept {
  if (sources_.empty()) return {iovecs_.data() + next_iovec_, iovecs_.size() - next_iovec_};
  if (next_iovec_ < iovecs_.size() && iovec_sources_[next_iovec_] != 0) return {iovecs_.data() + next_iovec_, 1};
  std::size_t end = next_iovec_;
  while (end < iovecs_.size() && iovec_sources_[end] == 0) ++end;
  return {iovecs_.data() + next_iovec_, end - next_iovec_};
}

const BodySource* OutputBatch::current_source() const noexcept {
  if (next_iovec_ >= iovecs_.size() || iovec_sources_[next_iovec_] == 0) return nullptr;
  return &sources_[iovec_sources_[next_iovec_] - 1];
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

namespace {

// Empties `items`, and gives its memory back when it grew beyond `retain_bytes` (a batch that once
// held a million segments should not keep room for them).
template <class Vector>
void clear_bounded(Vector& items, std::size_t retain_bytes, std::size_t keep) {
  if (items.capacity() * sizeof(typename Vector::value_type) > retain_bytes) {
    Vector().swap(items);
    items.reserve(keep);
  } else {
    items.clear();
  }
}

}  // namespace

void OutputBatch::clear(std::vector<std::string>* recycled) {
  if (bytes_.capacity() > kRetainBytes) {
    std::string().swap(bytes_);
    bytes_.reserve(4096);
  } else {
    bytes_.clear();
  }
  kept_capacity_ = bytes_.capacity();
  clear_bounded(segments_, kRetainBytes / 8, 16);
  clear_bounded(iovecs_, kRetainBytes / 8, 16);
  clear_bounded(iovec_sources_, kRetainBytes / 8, 16);
  sources_.clear();
  clear_bounded(holds_, kRetainBytes / 8, 0);
  next_iovec_ = 0;
  total_bytes_ = 0;
  adopted_slack_ = 0;
  for (std::string& body : adopted_) {
    if (recycled != nullptr && body.capacity() <= kSpareBytes && recycled->size() < kSpareCount) {
      body.clear();
      recycled->push_back(std::move(body));
    }
  }
  clear_bounded(adopted_, kRetainBytes / 8, 0);
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
