#include "ringlab/json/body_writer.hpp"

#include <limits>

#include "record_loop.hpp"

namespace ringlab::json {

void BodyWriter::start(RecordKind kind, BodyLayout layout, std::size_t count) noexcept {
  kind_ = kind;
  layout_ = layout;
  count_ = count;
  next_ = 0;
  done_ = false;
}

bool BodyWriter::write(std::string& out, std::size_t at_least) {
  if (done_) return true;
  const std::size_t room = std::numeric_limits<std::size_t>::max() - out.size();
  const std::size_t flush_at = at_least >= room ? std::numeric_limits<std::size_t>::max() : out.size() + at_least;
  const auto write_records = [&](auto& scratch, auto fill) {
    return append_records(out, count_, layout_, next_, scratch, fill, flush_at);
  };
  switch (kind_) {
    case RecordKind::weather: done_ = write_records(weather_, fill_weather); break;
    case RecordKind::repos: done_ = write_records(repository_, fill_repository); break;
    case RecordKind::github: done_ = write_records(github_, fill_github); break;
    case RecordKind::profiles: done_ = write_records(profiles_, fill_profile); break;
  }
  return done_;
}

}  // namespace ringlab::json
