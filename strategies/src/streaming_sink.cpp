#include "streaming_sink.hpp"

#include <cstring>

#include "common.hpp"

namespace ringlab::strategies::detail {
namespace {

// Drops the records of a longer earlier body that this one did not overwrite.
template <class Weather, class Repos>
void trim_to(std::size_t count, Weather& weather, Repos& repos) {
  if (weather.size() > count) weather.erase(weather.begin() + static_cast<std::ptrdiff_t>(count), weather.end());
  if (repos.size() > count) repos.erase(repos.begin() + static_cast<std::ptrdiff_t>(count), repos.end());
}

}  // namespace

void ArrayStreamingSink::expect(Payload payload, std::size_t records) {
  payload_ = payload;
  if (payload_ == Payload::repos) {
    repos_.reserve(records);
  } else {
    weather_.reserve(records);
  }
}

http::Status ArrayStreamingSink::begin(const http::ResponseHead& head) {
  splitter_.reset();
  consumer_ = json::Consumer{};
  checksum_ = json::Checksum{};
  before_end_ = 0;
  before_piece_ = 0;
  parse_ = head.status / 100 == 2;
  return inner_.begin(head);
}

http::Status ArrayStreamingSink::on_body(std::string_view bytes) {
  if (auto status = inner_.on_body(bytes); !status) return status;
  if (!parse_) return {};
  before_piece_ = consumer_.records();
  return drain();
}

http::Status ArrayStreamingSink::end() {
  if (auto status = inner_.end(); !status) return status;
  if (!parse_) return {};
  before_end_ = before_piece_;
  if (auto status = drain(); !status) return status;
  if (auto finished = splitter_.finish(body_->view()); !finished) {
    return http::fail(http::Errc::sink, describe(finished.error()));
  }
  trim_to(consumer_.records(), weather_, repos_);
  return {};
}

template <class Record, class ParseOne>
json::Status ArrayStreamingSink::parse_into(std::pmr::vector<Record>& records, json::RecordSpan span, ParseOne parse_one) {
  if (span.index >= records.size()) records.emplace_back();
  Record& record = records[span.index];
  if (auto status = parse_one(*parser_, json::padded_view(*body_), span, record); !status) return status;
  consumer_.add(record);
  if (verify_) checksum_.add(record);
  return {};
}

http::Status ArrayStreamingSink::drain() {
  while (true) {
    auto next = splitter_.next(body_->view());
    if (!next) return http::fail(http::Errc::sink, describe(next.error()));
    if (!*next) return {};
    const json::RecordSpan span = **next;
    const json::Status parsed = payload_ == Payload::repos
                                    ? parse_into(repos_, span, &json::parse_repository_record)
                                    : parse_into(weather_, span, &json::parse_weather_record);
    if (!parsed) return http::fail(http::Errc::sink, describe(parsed.error()));
  }
}

void NdjsonStreamingSink::expect(Payload payload, std::size_t records) {
  payload_ = payload;
  if (payload_ == Payload::repos) {
    repos_.reserve(records);
  } else {
    weather_.reserve(records);
  }
}

http::Status NdjsonStreamingSink::begin(const http::ResponseHead& head) {
  consumer_ = json::Consumer{};
  checksum_ = json::Checksum{};
  parsed_ = 0;
  before_end_ = 0;
  before_piece_ = 0;
  parse_ = head.status / 100 == 2;
  return inner_.begin(head);
}

http::Status NdjsonStreamingSink::on_body(std::string_view bytes) {
  if (auto status = inner_.on_body(bytes); !status) return status;
  if (!parse_) return {};
  before_piece_ = consumer_.records();
  const std::size_t size = body_->size();
  if (size == parsed_) return {};
  const void* newline = ::memrchr(body_->data() + parsed_, '\n', size - parsed_);
  if (newline == nullptr) return {};
  return parse_batch(static_cast<std::size_t>(static_cast<const char*>(newline) - body_->data()) + 1);
}

http::Status NdjsonStreamingSink::end() {
  if (auto status = inner_.end(); !status) return status;
  if (!parse_) return {};
  before_end_ = before_piece_;
  // A last record without its newline; whitespace alone is no record (parse_lines says so too).
  if (parsed_ < body_->size()) {
    if (auto status = parse_batch(body_->size()); !status) return status;
  }
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
  for (const View& view : views) consumer_.add(view);
  if (verify_) {
    for (const View& view : views) checksum_.add(view);
  }
  return {};
}

http::Status NdjsonStreamingSink::parse_batch(std::size_t end) {
  const std::size_t start = parsed_;
  // The bytes after the batch (the next records, the buffer's spare room, its padding) are readable,
  // so they serve as the padding simdjson needs: it may load them, it never interprets them.
  const simdjson::padded_string_view batch(body_->data() + start, end - start,
                                           body_->capacity() + base::kPadding - start);
  parsed_ = end;
  const json::Status parsed = payload_ == Payload::repos
                                  ? parse_into(repos_, batch, &json::parse_repos_ndjson_views)
                                  : parse_into(weather_, batch, &json::parse_weather_ndjson_views);
  if (!parsed) {
    return http::fail(http::Errc::sink,
                      "in the lines from body byte " + std::to_string(start) +
                                           " (records and bytes below count from there): " + describe(parsed.error()));
  }
  return {};
}

}  // namespace ringlab::strategies::detail
