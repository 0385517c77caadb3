#include "streaming_sink.hpp"

#include <cstring>
#include <type_traits>

#include "common.hpp"

namespace ringlab::strategies::detail {
template <StreamedModels kModels>
void ArraySink<kModels>::restart(const http::ResponseHead& /*head*/) {
  progress_ = json::ArrivingArray{};
  if constexpr (kModels == StreamedModels::fresh) {
    // The last body's records go now, with their vectors' memory: this body's are built from nothing.
    records_ = Records();
  }
}

template <StreamedModels kModels>
http::Status ArraySink<kModels>::parse_arrived(json::Arrival arrival) {
  const json::Status parsed =
      records_.with_records(payload_, [&](auto& slots) { return parse_into(slots, arrival); });
  if (!parsed) return http::fail(http::Errc::sink, describe(parsed.error()));
  return {};
}

template <StreamedModels kModels>
template <class Record>
json::Status ArraySink<kModels>::parse_into(std::pmr::vector<Record>& slots, json::Arrival arrival) {
  // Fresh: restart() emptied the vector, so every record lands in a new slot.
  const std::size_t before = progress_.records;
  if (auto status = json::parse_arriving(*parser_, *body_, progress_, slots, arrival); !status) return status;
  fold_new(slots, before, progress_.records);
  return {};
}

template class ArraySink<StreamedModels::reused>;
template class ArraySink<StreamedModels::fresh>;

http::Status PieceArraySink::parse_piece(std::span<char> piece, json::Arrival arrival) {
  const json::Status parsed =
      models_->with_records(payload_, [&](auto& slots) { return parse_into(slots, piece, arrival); });
  if (!parsed) return http::fail(http::Errc::sink, describe(parsed.error()));
  return {};
}

template <class Record>
json::Status PieceArraySink::parse_into(std::pmr::vector<Record>& slots, std::span<char> piece, json::Arrival arrival) {
  // The call's records are slots [records before it, records after): where another connection's records
  // of the same index were, already folded.
  const std::size_t before = progress_.records;
  if (auto status = json::parse_piece(*parser_, *body_, progress_, piece, slots, arrival, json::Tail::in_place);
      !status) {
    return status;
  }
  fold_new(slots, before, progress_.records);
  return {};
}

http::Status NdjsonStreamingSink::parse_received() {
  const std::size_t size = body_->size();
  if (size == parsed_) return {};
  const void* newline = ::memrchr(body_->data() + parsed_, '\n', size - parsed_);
  if (newline == nullptr) return {};
  return parse_batch(static_cast<std::size_t>(static_cast<const char*>(newline) - body_->data()) + 1);
}

http::Status NdjsonStreamingSink::parse_rest() {
  // A last record without its newline; whitespace alone is no record (parse_lines says so too).
  if (parsed_ < body_->size()) return parse_batch(body_->size());
  return {};
}

template <class View>
json::Status NdjsonStreamingSink::parse_into(std::pmr::vector<View>& views, simdjson::padded_string_view batch) {
  // The body buffer outlives the views of this batch: they are consumed here, and a buffer that moves
  // later (a chunked body growing) only invalidates views no longer read.
  if (auto status = json::parse_ndjson(*parser_, json::PaddedBody(batch), views, json::kNdjsonWindowBytes); !status) {
    return status;
  }
  fold_new(views, 0, views.size());
  return {};
}

http::Status NdjsonStreamingSink::parse_batch(std::size_t end) {
  const std::size_t start = parsed_;
  // The bytes after the batch (the next records, the buffer's spare room, its padding) are readable,
  // so they serve as the padding simdjson needs: it may load them, it never interprets them.
  const simdjson::padded_string_view batch(body_->data() + start, end - start,
                                           body_->capacity() + base::kPadding - start);
  parsed_ = end;
  const json::Status parsed = records_.with_records(payload_, [&](auto& views) { return parse_into(views, batch); });
  if (!parsed) {
    return http::fail(http::Errc::sink,
                      "in the lines from body byte " + std::to_string(start) +
                                           " (records and bytes below count from there): " + describe(parsed.error()));
  }
  return {};
}

}  // namespace ringlab::strategies::detail
