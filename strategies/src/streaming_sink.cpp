#include "streaming_sink.hpp"

#include "common.hpp"

namespace ringlab::strategies::detail {

void StreamingSink::expect(Payload payload, std::size_t records) {
  payload_ = payload;
  if (payload_ == Payload::repos) {
    repos_.reserve(records);
  } else {
    weather_.reserve(records);
  }
}

http::Status StreamingSink::begin(const http::ResponseHead& head) {
  splitter_.reset();
  checksum_ = json::Checksum{};
  before_end_ = 0;
  before_piece_ = 0;
  parse_ = head.status / 100 == 2;
  return inner_.begin(head);
}

http::Status StreamingSink::on_body(std::string_view bytes) {
  if (auto status = inner_.on_body(bytes); !status) return status;
  if (!parse_) return {};
  before_piece_ = checksum_.records();
  return drain();
}

http::Status StreamingSink::end() {
  if (auto status = inner_.end(); !status) return status;
  if (!parse_) return {};
  before_end_ = before_piece_;
  if (auto status = drain(); !status) return status;
  if (auto finished = splitter_.finish(body_->view()); !finished) {
    return http::fail(http::Errc::sink, describe(finished.error()));
  }
  // The records of a longer earlier body that this one did not overwrite.
  const std::size_t count = checksum_.records();
  if (weather_.size() > count) weather_.erase(weather_.begin() + static_cast<std::ptrdiff_t>(count), weather_.end());
  if (repos_.size() > count) repos_.erase(repos_.begin() + static_cast<std::ptrdiff_t>(count), repos_.end());
  return {};
}

template <class Record, class ParseOne>
json::Status StreamingSink::parse_into(std::pmr::vector<Record>& records, json::RecordSpan span, ParseOne parse_one) {
  if (span.index >= records.size()) records.emplace_back();
  Record& record = records[span.index];
  if (auto status = parse_one(*parser_, json::padded_view(*body_), span, record); !status) return status;
  checksum_.add(record);
  return {};
}

http::Status StreamingSink::drain() {
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

}  // namespace ringlab::strategies::detail
