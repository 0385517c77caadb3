#include "streaming_sink.hpp"

#include <cstring>
#include <type_traits>

#include "common.hpp"

namespace ringlab::strategies::detail {
namespace {

// Drops the records of a longer earlier body that this one did not overwrite.
template <class... Vectors>
void trim_to(std::size_t count, Vectors&... vectors) {
  const auto trim = [count](auto& records) {
    if (records.size() > count) records.erase(records.begin() + static_cast<std::ptrdiff_t>(count), records.end());
  };
  (trim(vectors), ...);
}

}  // namespace

template <StreamedModels kModels>
void ArraySink<kModels>::restart(const http::ResponseHead& /*head*/) {
  progress_ = json::ArrivingArray{};
  if constexpr (kModels == StreamedModels::fresh) {
    // The last body's records go now, with their vector's memory: this body's are built from nothing.
    const auto release = [](auto& records) { std::remove_reference_t<decltype(records)>().swap(records); };
    release(weather_);
    release(repos_);
    release(github_);
    release(profiles_);
  }
}

template <StreamedModels kModels>
http::Status ArraySink<kModels>::parse_arrived(json::Arrival arrival) {
  json::Status parsed;
  switch (payload_) {
    case Payload::repos: parsed = parse_into(repos_, arrival, &json::parse_repos_arriving); break;
    case Payload::github: parsed = parse_into(github_, arrival, &json::parse_github_arriving); break;
    case Payload::profiles: parsed = parse_into(profiles_, arrival, &json::parse_profiles_arriving); break;
    case Payload::weather: parsed = parse_into(weather_, arrival, &json::parse_weather_arriving); break;
  }
  if (!parsed) return http::fail(http::Errc::sink, describe(parsed.error()));
  return {};
}

template <StreamedModels kModels>
template <class Record, class ParseArriving>
json::Status ArraySink<kModels>::parse_into(std::pmr::vector<Record>& slots, json::Arrival arrival,
                                            ParseArriving parse_arriving) {
  // Fresh: restart() emptied the vector, so every record lands in a new slot.
  const std::size_t before = progress_.records;
  if (auto status = parse_arriving(*parser_, *body_, progress_, slots, arrival); !status) return status;
  for (std::size_t i = before; i < progress_.records; ++i) fold(slots[i]);
  return {};
}

template class ArraySink<StreamedModels::reused>;
template class ArraySink<StreamedModels::fresh>;

http::Status PieceArraySink::parse_piece(std::span<char> piece, json::Arrival arrival) {
  json::Status parsed;
  switch (payload_) {
    case Payload::repos: parsed = parse_into(models_->repos, piece, arrival, &json::parse_repos_piece); break;
    case Payload::github: parsed = parse_into(models_->github, piece, arrival, &json::parse_github_piece); break;
    case Payload::profiles: parsed = parse_into(models_->profiles, piece, arrival, &json::parse_profiles_piece); break;
    case Payload::weather: parsed = parse_into(models_->weather, piece, arrival, &json::parse_weather_piece); break;
  }
  if (!parsed) return http::fail(http::Errc::sink, describe(parsed.error()));
  return {};
}

template <class Record, class ParsePiece>
json::Status PieceArraySink::parse_into(std::pmr::vector<Record>& slots, std::span<char> piece, json::Arrival arrival,
                                        ParsePiece parse) {
  // The call's records are slots [records before it, records after): where another connection's records
  // of the same index were, already folded.
  const std::size_t before = progress_.records;
  if (auto status = parse(*parser_, *body_, progress_, piece, slots, arrival); !status) return status;
  for (std::size_t i = before; i < progress_.records; ++i) fold(slots[i]);
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

template <class View, class ParseLines>
json::Status NdjsonStreamingSink::parse_into(std::pmr::vector<View>& views, simdjson::padded_string_view batch,
                                             ParseLines parse_lines) {
  // The body buffer outlives the views of this batch: they are consumed here, and a buffer that moves
  // later (a chunked body growing) only invalidates views no longer read.
  if (auto status = parse_lines(*parser_, json::PaddedBody(batch), views, json::kNdjsonWindowBytes); !status) {
    return status;
  }
  for (const View& view : views) fold(view);
  return {};
}

http::Status NdjsonStreamingSink::parse_batch(std::size_t end) {
  const std::size_t start = parsed_;
  // The bytes after the batch (the next records, the buffer's spare room, its padding) are readable,
  // so they serve as the padding simdjson needs: it may load them, it never interprets them.
  const simdjson::padded_string_view batch(body_->data() + start, end - start,
                                           body_->capacity() + base::kPadding - start);
  parsed_ = end;
  json::Status parsed;
  switch (payload_) {
    case Payload::repos: parsed = parse_into(repos_, batch, &json::parse_repos_ndjson_views); break;
    case Payload::github: parsed = parse_into(github_, batch, &json::parse_github_ndjson_views); break;
    case Payload::profiles: parsed = parse_into(profiles_, batch, &json::parse_profiles_ndjson_views); break;
    case Payload::weather: parsed = parse_into(weather_, batch, &json::parse_weather_ndjson_views); break;
  }
  if (!parsed) {
    return http::fail(http::Errc::sink,
                      "in the lines from body byte " + std::to_string(start) +
                                           " (records and bytes below count from there): " + describe(parsed.error()));
  }
  return {};
}

}  // namespace ringlab::strategies::detail
