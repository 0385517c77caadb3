#include "streaming_sink.hpp"

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
  checksum_ = json::Checksum{};
  before_end_ = 0;
  before_piece_ = 0;
  parse_ = head.status / 100 == 2;
  return inner_.begin(head);
}

http::Status ArrayStreamingSink::on_body(std::string_view bytes) {
  if (auto status = inner_.on_body(bytes); !status) return status;
  if (!parse_) return {};
  before_piece_ = checksum_.records();
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
  trim_to(checksum_.records(), weather_, repos_);
  return {};
}

template <class Record, class ParseOne>
json::Status ArrayStreamingSink::parse_into(std::pmr::vector<Record>& records, json::RecordSpan span, ParseOne parse_one) {
  if (span.index >= records.size()) records.emplace_back();
  Record& record = records[span.index];
  if (auto status = parse_one(*parser_, json::padded_view(*body_), span, record); !status) return status;
  checksum_.add(record);
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
  before_piece_ = checksum_.records();
  return drain(false);
}

http::Status NdjsonStreamingSink::end() {
  if (auto status = inner_.end(); !status) return status;
  if (!parse_) return {};
  before_end_ = before_piece_;
  if (auto status = drain(true); !status) return status;
  trim_to(checksum_.records(), weather_, repos_);
  return {};
}

template <class Record, class ParseOne>
json::Status NdjsonStreamingSink::parse_into(std::pmr::vector<Record>& records, json::RecordSpan span,
                                             ParseOne parse_one) {
  if (span.index >= records.size()) records.emplace_back();
  Record& record = records[span.index];
  if (auto status = parse_one(*parser_, json::padded_view(*body_), span, record); !status) return status;
  checksum_.add(record);
  return {};
}

http::Status NdjsonStreamingSink::drain(bool body_complete) {
  const std::string_view body = body_->view();
  while (parsed_ < body.size()) {
    std::size_t line_end = body.find('\n', parsed_);  // memchr
    if (line_end == std::string_view::npos) {
      if (!body_complete) return {};
      line_end = body.size();
    }
    const std::string_view line = body.substr(parsed_, line_end - parsed_);
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos) {  // a blank line is no record
      const std::size_t last = line.find_last_not_of(" \t\r");
      const json::RecordSpan span{checksum_.records(), parsed_ + first, last - first + 1};
      const json::Status parsed = payload_ == Payload::repos
                                      ? parse_into(repos_, span, &json::parse_repository_record)
                                      : parse_into(weather_, span, &json::parse_weather_record);
      if (!parsed) return http::fail(http::Errc::sink, describe(parsed.error()));
    }
    parsed_ = std::min(line_end + 1, body.size());
  }
  return {};
}

}  // namespace ringlab::strategies::detail
