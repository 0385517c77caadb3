#pragma once
// Sinks that deserialize the records of a body while the body is still arriving, so that parsing
// overlaps the wait for the rest of it. In the first two, the bytes land as with PresizedSink (which they
// wrap: in place, in one padded buffer of Content-Length, de-chunked in place for chunked bodies); the
// third has no body buffer and parses each piece where the client's incremental ring received it. After
// every piece the records whose last byte is in are parsed at once and consumed (json::Consumer). On a
// verified request (verify(true), clock stopped) they are folded into the full checksum too: the records
// do not outlive their batch, so the checksum cannot be taken afterwards.
//
//   NdjsonStreamingSink   NDJSON bodies (format=ndjson): a record ends at a newline (JSON strings
//                         cannot hold a raw one), so the complete records are everything up to the
//                         last '\n' received (memrchr); that batch is parsed with simdjson's
//                         iterate_many (json::parse_ndjson) on a view into the body. A batch
//                         per receive, not a parse per line: simdjson's per-document set-up (about
//                         90 ns here) doubles the cost of 77-byte weather records parsed one by one.
//                         The price: with Debian's simdjson (SIMDJSON_THREADS_ENABLED) each
//                         document_stream allocates its stage-1 worker even though threading is off:
//                         two allocations per batch, whatever the batch's size.
//   ArrayStreamingSink    JSON array bodies (the route every other strategy reads): after each piece,
//                         the records complete in the bytes so far are parsed as one document
//                         (json::parse_arriving: the last boundary '},{' found with memrchr, the
//                         window between it and the last one parsed as an array); a record is parsed
//                         once the '{' after it is in, the last one at the end of the body. One
//                         document per piece, not per record, and no scan of the bytes but simdjson's:
//                         parsing each record as its own document (cut by a byte-by-byte splitter)
//                         took 2.2x presized's time at 10,000 weather records.
//   PieceArraySink        JSON array bodies whose pieces lie apart, between other connections' pieces in
//                         one shared incremental ring (provided_incremental): each piece's whole records
//                         parsed in place as one document, a record cut between pieces copied into a
//                         small carry (json::parse_piece); below.
//
// Records: the array sink parses owning records; ArrayStreamingSink keeps all of the body's, reused in
// place, as presized does, and FreshArrayStreamingSink builds them anew for every body, as .NET's
// JsonSerializer.DeserializeAsync over the response stream does (GetStreamAsync, GetFromJsonAsync). The NDJSON sink parses viewing records (as the views strategy does) and hands them
// over a batch at a time, as an async enumeration of records would: a batch's views live until the
// next batch, and the consumer has folded in every one. Views because records handed over a batch at a
// time land in different slots from one body to the next, and owning records would then allocate
// whenever a slot's optional fields or topic lists differ from the last record it held; keeping all of
// them in fixed slots instead costs a move in and out per record, since json's NDJSON parse refills its
// vector from the start.
//
// Errors: a parse error stops the response as Errc::sink, with json/'s message (record, field, byte
// offset); the client then closes the connection. The NDJSON sink finds a bad line once it is in; the
// array sink a bad body when it ends (json's arriving parse leaves a window that does not parse to the
// end of the body, since its boundary may only have looked like one). A body whose status is not 2xx (an error
// page) is received but not parsed: the caller reports the status.
//
// Ownership: the caller owns the body buffer and the parser, and both outlive the sink. The array sink
// writes into the body while it parses a window (json lends the window its brackets) and puts every
// byte back before on_body() or end() returns. The array
// sink's records live until the next begin(); the NDJSON sink's views until its next batch (and no
// longer than the body buffer stays where it is).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "ringlab/http/body_sink.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/json/checksum.hpp"
#include "ringlab/json/consume.hpp"
#include "ringlab/json/deserialize.hpp"
#include "client_strategy.hpp"
#include "common.hpp"
#include "inflight_recipe.hpp"
#include "ringlab/base/padded_buffer.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

// The records of every connection's sink are the sink's own, except where the sink says otherwise: a
// sink with SharedModels other than this one parses into one set its strategy keeps for every connection.
struct NoSharedModels {
  [[nodiscard]] std::size_t capacity_bytes() const noexcept { return 0; }
};

// What the sinks share: the body lands through `Landing` (PresizedSink: in place in the body buffer; the
// piece sink's PieceLanding: nowhere, the piece is parsed where the client received it); a body that is
// not 2xx is received but not parsed; the records of each piece are folded into the consumer (and the
// checksum on a verified body); the counters of the overlap. A sink says only how it finds and parses the
// records of the bytes received so far (parse_received) and at the end of the body (parse_rest).
// `Weather`, `Repository`, `Github` and `Profile` are the records it parses into: owning ones for the
// array sinks, views for the NDJSON one.
template <class Weather, class Repository, class Github, class Profile, class Landing = http::PresizedSink>
class StreamingSinkBase : public http::BodySink {
 public:
  using SharedModels = NoSharedModels;
  StreamingSinkBase(json::Parser& parser, base::PaddedBuffer& body) noexcept
      : parser_(&parser), body_(&body), inner_(body) {}
  StreamingSinkBase(json::Parser& parser, base::PaddedBuffer& body, NoSharedModels& /*none*/) noexcept
      : StreamingSinkBase(parser, body) {}

  // The payload of the bodies to come, and room for `records` of them (so that parsing them does not
  // grow the vector).
  void expect(Payload payload, std::size_t records) {
    payload_ = payload;
    records_.reserve(payload, records);
  }

  http::Status begin(const http::ResponseHead& head) final {
    consumer_ = json::Consumer{};
    checksum_ = json::Checksum{};
    before_end_ = 0;
    before_piece_ = 0;
    parse_ = head.status / 100 == 2;
    // The array sink's parser sized to the whole body now: no window of it parsed as one document is longer, so the
    // pieces that happen to arrive together never make the parser grow in the middle of a body (it grows
    // once, to the largest body, as presized's buffer does). Without it, a window larger than any before
    // (more bytes arriving at once) allocated inside a timed op, now and then.
    if (parse_ && windows_are_documents() && head.content_length && *head.content_length > parser_->capacity()) {
      if (parser_->allocate(*head.content_length, parser_->max_depth()) != simdjson::SUCCESS) {
        return http::fail(http::Errc::sink, "the JSON parser could not be sized to the body's " +
                                                std::to_string(*head.content_length) + " bytes");
      }
    }
    restart(head);
    return inner_.begin(head);
  }
  http::ReceiveWindow receive_window() final { return inner_.receive_window(); }
  [[nodiscard]] bool receives_in_place() const noexcept final { return inner_.receives_in_place(); }
  // The bytes land through the inner sink, which counts what it copies; the parse reads them there.
  [[nodiscard]] uint64_t copied_bytes() const noexcept override { return inner_.copied_bytes(); }
  http::Status on_body(std::string_view bytes) final {
    if (auto status = inner_.on_body(bytes); !status) return status;
    if (!parse_) return {};
    before_piece_ = consumer_.records();
    return parse_received();
  }
  http::Status end() final {
    if (auto status = inner_.end(); !status) return status;
    if (!parse_) return {};
    before_end_ = before_piece_;
    return parse_rest();
  }

  // Whether the next bodies' records are also folded into the full checksum (a verified request).
  void verify(bool on) noexcept { verify_ = on; }
  // After end(): the consumption fold of every record (json::consume of the whole array gives it)...
  [[nodiscard]] uint64_t consumed() const noexcept { return consumer_.value(); }
  // ...and, after a verified body, the checksum of every record, as json::checksum() of the whole
  // array gives it.
  [[nodiscard]] uint64_t checksum() const noexcept { return checksum_.value(); }
  [[nodiscard]] std::size_t records() const noexcept { return consumer_.records(); }
  // Records parsed before the last piece of the body arrived, i.e. while the body was still being
  // waited for: the overlap achieved.
  [[nodiscard]] std::size_t records_before_end() const noexcept { return before_end_; }
  // What the record vectors keep (capacity x record size): HeldMemory's model bytes.
  [[nodiscard]] std::size_t capacity_bytes() const noexcept { return records_.capacity_bytes(); }

 protected:
  using Records = PayloadRecords<Weather, Repository, Github, Profile>;

  virtual void restart(const http::ResponseHead& head) = 0;  // a new body begins
  // Whether windows of the body are parsed as documents of their own (the array sink), so that the parser's
  // capacity bounds them (the NDJSON sink's iterate_many sizes its own batches).
  [[nodiscard]] virtual bool windows_are_documents() const noexcept { return false; }
  virtual http::Status parse_received() = 0;    // after each piece: the records now complete
  virtual http::Status parse_rest() = 0;        // after the last piece: what remains

  template <class Record>
  void fold(const Record& record) {
    consumer_.add(record);
    if (verify_) checksum_.add(record);
  }
  // Folds the records one parse call made: slots [from, to).
  template <class Record>
  void fold_new(const std::pmr::vector<Record>& slots, std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) fold(slots[i]);
  }

  [[nodiscard]] const Landing& landing() const noexcept { return inner_; }

  Payload payload_ = Payload::weather;
  json::Parser* parser_;
  base::PaddedBuffer* body_;
  Records records_;  // this sink's records: the payload's vector of them

 private:
  Landing inner_;
  json::Consumer consumer_;
  json::Checksum checksum_;  // only on a verified body
  bool verify_ = false;
  std::size_t before_end_ = 0;
  std::size_t before_piece_ = 0;  // records parsed before the current piece arrived
  bool parse_ = false;            // a 2xx body: records to parse
};

// What an array sink does with the records' owning models from one body to the next.
enum class StreamedModels {
  reused,  // all of the body's kept, overwritten in place by the next body (as presized's)
  fresh,   // made anew for every body: the vector starts empty and grows, each record built into a new
           // slot, all freed when the next body begins (as DeserializeAsync builds a new List<T>)
};

// Owning records of a JSON array: after each piece, the records complete so far parsed as one document
// (json::parse_arriving).
template <StreamedModels kModels>
class ArraySink final
    : public StreamingSinkBase<json::WeatherForecast, json::Repository, json::GithubRepository, json::ProfileStars> {
 public:
  using StreamingSinkBase::StreamingSinkBase;

 private:
  void restart(const http::ResponseHead& head) override;
  [[nodiscard]] bool windows_are_documents() const noexcept override { return true; }
  http::Status parse_received() override { return parse_arrived(json::Arrival::partial); }
  http::Status parse_rest() override { return parse_arrived(json::Arrival::complete); }
  http::Status parse_arrived(json::Arrival arrival);
  template <class Record>
  json::Status parse_into(std::pmr::vector<Record>& slots, json::Arrival arrival);

  json::ArrivingArray progress_;
};
using ArrayStreamingSink = ArraySink<StreamedModels::reused>;       // streaming_array
using FreshArrayStreamingSink = ArraySink<StreamedModels::fresh>;   // streaming_array_fresh
extern template class ArraySink<StreamedModels::reused>;
extern template class ArraySink<StreamedModels::fresh>;

// Where the piece sink's bytes land: nowhere of its own. The client received each piece into its shared
// incremental ring (http::ReceiveMode::provided_incremental), and this keeps the view of the last one
// for the parse that follows it in the same on_body(); the view dies when on_body() returns.
class PieceLanding final : public http::BodySink {
 public:
  // StreamingSinkBase makes every landing from the sink's buffer; the pieces are not gathered into it
  // (for the piece sink that buffer is the carry, which json::parse_piece fills).
  explicit PieceLanding(base::PaddedBuffer& /*carry*/) noexcept {}
  http::Status begin(const http::ResponseHead& /*head*/) override {
    piece_ = {};
    return {};
  }
  http::Status on_body(std::string_view bytes) override {
    piece_ = bytes;
    return {};
  }
  http::Status end() override {
    piece_ = {};
    return {};
  }
  // Writable, with base::kPadding readable bytes after it: the receive mode's promise (net::BufferRing).
  [[nodiscard]] std::span<char> piece() const noexcept {
    return {const_cast<char*>(piece_.data()), piece_.size()};  // NOLINT: the ring's memory, lent to the sink
  }

 private:
  std::string_view piece_;
};

// The JSON array's records parsed in every piece where it landed in the client's shared incremental ring
// (json::parse_piece): the records whole in a piece are one document, parsed in place; a record cut
// between two pieces is copied into the body buffer, which is only that carry here (a record or a few,
// kept across bodies). The piece that completes the body's Content-Length is parsed to the body's end
// where it lies, so a body that comes in one piece copies nothing. The records land in the strategy's one set of models (SharedModels, for its N
// connections), in the slots of their index in the body, reserved to a body's records, as provided_buffers'
// one set is, and reused in place (strings keep their capacity); they are folded the moment they are
// parsed (a verified body's checksum taken as they go), never read again, so another connection's records
// of the same index overwrite them (one thread parses). copied_bytes()
// counts the carry's bytes. Needs a client in ReceiveMode::provided_incremental: its pieces are writable
// and followed by readable bytes, which the parse lends brackets to and reads past. The parser is sized
// to the whole body, as the array sink's: a window that did not parse sends the rest of the body to the
// carry, parsed whole at its end.
class PieceArraySink final : public StreamingSinkBase<json::WeatherForecast, json::Repository,
                                                      json::GithubRepository, json::ProfileStars, PieceLanding> {
  static_assert(net::BufferRing::kReadableAfter >= base::kPadding, "simdjson reads a piece's padding from the ring");

 public:
  using SharedModels = OwningModels;
  PieceArraySink(json::Parser& parser, base::PaddedBuffer& carry, OwningModels& models) noexcept
      : StreamingSinkBase(parser, carry), models_(&models) {}
  // The payload of the bodies to come, and room for `records` of them in the shared models.
  void expect(Payload payload, std::size_t records) {
    payload_ = payload;
    records_per_body_ = records;
    models_->reserve(payload, records);
  }
  [[nodiscard]] uint64_t copied_bytes() const noexcept override { return copied_ + progress_.copied_bytes; }
  // A piece's rest (from its last boundary on: a record cut at its end) is left where it lies
  // (json::Tail::in_place) and parsed with the next piece when that one lands right after it, as one
  // connection's receives do in a ring it has to itself; a caller that cannot keep it lets go at once,
  // which copies it into the carry, as a cut always did.
  [[nodiscard]] std::size_t kept_in_place() const noexcept override { return json::tail_bytes(progress_); }
  void let_go() override { json::carry_tail(*body_, progress_); }
  void kept_moved(std::ptrdiff_t by) override { json::move_tail(progress_, by); }

 private:
  void restart(const http::ResponseHead& head) override {
    copied_ += progress_.copied_bytes;
    progress_ = json::PieceArray{};
    body_length_ = head.content_length;
    completed_ = false;
    // Room, from the first body on, for what a cut carries at most: two records and the commas around
    // them (a cut between a ',' and its '{'), taken as four of the body's average records (the generated
    // records of a payload vary less than twofold in length) and a line of slack; the whole body when it
    // is smaller, 4 KiB without a Content-Length. A carry that grew to fit a longer cut than any before
    // would allocate inside a timed op, now and then, for as long as the case runs.
    const std::size_t records = std::max<std::size_t>(records_per_body_, 1);
    const std::size_t room = head.content_length
                                 ? std::min<std::size_t>(*head.content_length, 4 * *head.content_length / records + 64)
                                 : std::size_t{4096};
    if (body_->capacity() < room) body_->reserve(room);
  }
  [[nodiscard]] bool windows_are_documents() const noexcept override { return true; }
  // The piece that brings the body to its Content-Length goes with Arrival::complete, so that its rest is
  // parsed where it lies (json::parse_piece's step 4 in place) rather than copied into the carry; the
  // body's end then has nothing left to parse. Without a Content-Length the end comes as an empty call.
  http::Status parse_received() override {
    const std::span<char> piece = landing().piece();
    completed_ = body_length_ && progress_.body_bytes + piece.size() == *body_length_;
    return parse_piece(piece, completed_ ? json::Arrival::complete : json::Arrival::partial);
  }
  http::Status parse_rest() override { return completed_ ? http::Status{} : parse_piece({}, json::Arrival::complete); }
  http::Status parse_piece(std::span<char> piece, json::Arrival arrival);
  template <class Record>
  json::Status parse_into(std::pmr::vector<Record>& slots, std::span<char> piece, json::Arrival arrival);

  OwningModels* models_;
  std::size_t records_per_body_ = 0;  // expect()
  json::PieceArray progress_;
  std::optional<uint64_t> body_length_;  // the body's Content-Length, when it has one
  bool completed_ = false;               // its last piece came, and was parsed with Arrival::complete
  uint64_t copied_ = 0;  // carry bytes of the bodies before this one
};

// The current batch's records: views into the body.
class NdjsonStreamingSink final
    : public StreamingSinkBase<json::WeatherView, json::RepositoryView, json::GithubRepositoryView,
                               json::ProfileStarsView> {
 public:
  using StreamingSinkBase::StreamingSinkBase;

 private:
  void restart(const http::ResponseHead& /*head*/) override { parsed_ = 0; }
  http::Status parse_received() override;
  http::Status parse_rest() override;
  // Parses body bytes [parsed_, end): whole lines.
  http::Status parse_batch(std::size_t end);
  template <class View>
  json::Status parse_into(std::pmr::vector<View>& views, simdjson::padded_string_view batch);

  std::size_t parsed_ = 0;  // body bytes parsed so far (up to and including the last newline seen)
};

// The frame of both streaming strategies: the body received in place through `Sink`, parsed as it
// arrives; a verified request also checksums the records as they go (they do not outlive their batch).
// notes() says how many records, on the last request, were parsed before the last piece of the body
// arrived: the overlap achieved. `extra_query` picks the body's form ("&format=ndjson" or none).
template <class Sink>
class StreamingStrategy final : public ClientStrategy {
 public:
  StreamingStrategy(std::string_view name, std::string_view extra_query)
      : ClientStrategy(name), extra_query_(extra_query) {}

  [[nodiscard]] std::string notes() const override {
    return "last request: " + std::to_string(sink_.records_before_end()) + " of " +
           std::to_string(sink_.records()) + " records parsed before the last piece of the body arrived";
  }

 private:
  [[nodiscard]] std::string target() const override { return get_target(config(), extra_query_); }
  Status prepare() override {
    sink_.expect(config().payload, config().count);
    return {};
  }
  Status before_request() override {
    sink_.verify(verifying());
    return {};
  }
  http::BodySink& sink() override { return sink_; }
  json::Result<uint64_t> deserialize() override { return sink_.consumed(); }
  uint64_t checksum() override { return sink_.checksum(); }

  std::string_view extra_query_;
  base::PaddedBuffer body_;
  Sink sink_{parser(), body_};
};

// The streaming rows with N requests in flight (inflight_recipe.hpp's frame: N kept-alive connections on
// one ring, one GET on each per round): each connection has a sink of its own over a body of its own, so
// the records of every connection are parsed as that connection's bytes arrive, the connections'
// receives interleaved in one round; that is what streaming buys under concurrency, the parsing of one
// connection's records overlapping the wait for the others' bytes. The N sinks share the frame's one
// parser: one thread, and each sink's parse (a batch, a record) ends before the next completion is
// handled. By the end of the round every record has been parsed and consumed, so the frame's per-
// connection "parse" only reads each sink's fold (and on a verified round its checksum, taken as the
// records went by): the round's stamps show nearly all of the work as "body", none as "deserialize".
// notes() says how many records, over the N bodies of the last round, were parsed before their body's
// last piece arrived. Memory held (HeldMemory): each connection's padded body (Content-Length and the
// padding, kept) and its sink's record vectors.
template <class Sink>
class InflightStreamingStrategy final : public InflightFrame {
 public:
  using InflightFrame::InflightFrame;
  ~InflightStreamingStrategy() override { close_slots(); }

  [[nodiscard]] std::string notes() const override {
    std::size_t before = 0;
    std::size_t records = 0;
    for (const auto& slot : slots_) {
      before += slot->sink.records_before_end();
      records += slot->sink.records();
    }
    return "last round: " + std::to_string(before) + " of " + std::to_string(records) + " records over " +
           std::to_string(slots_.size()) + " connections parsed before the last piece of their body arrived";
  }

 private:
  // A connection's body and the sink over it; on the heap, so that the sink's reference never moves.
  struct Slot {
    Slot(json::Parser& shared_parser, typename Sink::SharedModels& shared_models)
        : sink(shared_parser, body, shared_models) {}
    base::PaddedBuffer body;
    Sink sink;
  };

  Status open_slots(std::size_t connections) override {
    close_slots();
    for (std::size_t i = 0; i < connections; ++i) {
      slots_.push_back(std::make_unique<Slot>(parser(), shared_models_));
      slots_.back()->sink.expect(config().payload, config().count);
      sinks_.push_back(&slots_.back()->sink);
    }
    return {};
  }
  void before_round(Check check) override {
    for (auto& slot : slots_) slot->sink.verify(check == Check::verify);
  }
  json::Result<uint64_t> parse_slot(std::size_t index) override { return slots_[index]->sink.consumed(); }
  uint64_t checksum_slot(std::size_t index) override { return slots_[index]->sink.checksum(); }
  void close_slots() override {
    sinks_.clear();
    slots_.clear();
  }
  [[nodiscard]] std::size_t held_body_bytes() const override {
    return held_by(slots_, [](const auto& slot) { return held_bytes(slot->body); });
  }
  [[nodiscard]] std::size_t held_model_bytes() const override {
    return shared_models_.capacity_bytes() +
           held_by(slots_, [](const auto& slot) { return slot->sink.capacity_bytes(); });
  }

  typename Sink::SharedModels shared_models_;  // before the slots, whose sinks refer to it
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace ringlab::strategies::detail
