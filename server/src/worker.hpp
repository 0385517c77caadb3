#pragma once
// Worker and Connection: the inside of the server (see server.hpp for the behaviour). Private to
// server/src.
//
// Every operation in flight has its CompletionHandler inside the Worker or a Connection (an Op
// member): no allocation per operation. A Connection is released (and its fd closed) only when none
// of its operations is in flight, so a handler never outlives its object; released Connections are
// kept for reuse, so a worker allocates nothing per connection once warm, but only up to
// kFreeConnections of them: at each tick the rest are destroyed (a burst of thousands of connections
// does not keep their memory), and when the connections gave back at least kTrimBytes since the
// last tick, malloc_trim() hands the freed pages to the kernel.
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringlab/http/parser.hpp"
#include "ringlab/http/url.hpp"
#include "ringlab/json/body_writer.hpp"
#include "ringlab/net/buffer_ring.hpp"
#include "ringlab/net/ring.hpp"
#include "ringlab/net/socket.hpp"
#include "ringlab/server/body_cache.hpp"
#include "ringlab/server/output.hpp"
#include "ringlab/server/response.hpp"
#include "ringlab/server/routes.hpp"
#include "ringlab/server/server.hpp"
#include "stats_board.hpp"
#include "upstream.hpp"

namespace ringlab::server {

class Worker;
class FixedArea;
using Clock = std::chrono::steady_clock;

// The Content-Type of the JSON answers a Connection writes itself (errors, /health, /env, /stats,
// /proxy).
inline constexpr std::string_view kJsonContentType = "application/json";

// Routes a completion to a member function of its owner (net/ring.hpp).
template <class Owner, void (Owner::*Method)(int, uint32_t)>
using Op = net::MemberCompletion<Owner, Method>;

class Connection final : private http::RequestHandler, private UpstreamRequester {
 public:
  explicit Connection(Worker& worker);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Takes an accepted socket over and starts receiving.
  void open(int fd);
  // Called at every tick of the worker's timer: idle, drain and shutdown deadlines.
  void on_tick(Clock::time_point now);
  // The worker is stopping: close now if idle, else after the answers already started.
  void on_stop();
  // Synchronous close of a socket still open when the worker exits on a ring failure.
  void abandon() noexcept;

  // The worker's list of live connections (intrusive: no allocation to track them).
  Connection* prev_live = nullptr;
  Connection* next_live = nullptr;

 private:
  enum class State : uint8_t {
    free,      // in the pool
    open,      // reading and answering requests
    draining,  // everything sent, our side shut down; reading and dropping until the peer closes
    closing,   // operations cancelled; released when the last one completes
  };

  struct Request {
    std::optional<RoutedRequest> routed;
    int error_status = 0;  // != 0: answer this error instead (route errors)
    std::string_view error_message;
    std::string_view allow;
    bool head_only = false;
    bool keep_alive = true;
    bool http10 = false;
  };

  // UpstreamRequester: /proxy's fetch ended; the answer is appended and reading resumes.
  void on_upstream_done(std::expected<void, UpstreamFailure> result, std::string& body) override;

  // http::RequestHandler
  http::Status on_head(const http::RequestHead& head) override;
  http::Status on_body(std::string_view bytes) override;
  http::Status on_complete() override;
  // A handler ran out of memory: the request is answered 503 and the connection closed.
  http::Status out_of_memory();

  void on_recv(int res, uint32_t flags);
  void on_sent(int res, uint32_t flags);
  // drained: the last recv left the socket empty (it did not fill its buffer), so the next one waits
  // for data before it tries.
  void arm_recv(bool drained = false);
  void consume(std::string_view bytes);
  // Backpressure: a client that sends requests faster than it reads answers would make the output
  // queue grow without bound. Past max_queued_output_bytes the connection stops reading (cancels
  // its recv) and keeps what already arrived in held_; it resumes once the queue has gone out.
  [[nodiscard]] bool output_full() noexcept;
  void pause_reading(std::string_view rest);
  void resume_reading();
  void on_parse_error(const http::Error& error);
  void on_peer_closed();
  void respond();
  // Appends the answer whose body is `body` (owned by `owner`, or body_ when reuse_body); shared by
  // every route once it knows its body.
  void append_answer(const ResponseHead& head, std::string_view body, std::shared_ptr<const void> owner,
                     bool reuse_body, bool close, const BodySource* source = nullptr);
  // Echo and /proxy: the answer whose body is body_ (moved into the batch when large).
  void answer_body_string(ResponseHead head, bool close);
  // How the cached body `body` goes out under the worker's body strategy (server.hpp).
  BodySource body_source(const Body& body);
  void respond_error(int status, std::string_view message, std::string_view allow, bool head_only, bool close);
  // The head every answer starts from: Connection and Keep-Alive as the request and `close` ask.
  ResponseHead base_head(bool close) const {
    ResponseHead head;
    head.close = close;
    // HTTP/1.0 keeps a connection only when asked, and must then be told it was kept.
    head.keep_alive = request_.http10 && !close;
    return head;
  }
  std::string take_spare();
  void keep_spare(std::string&& spare);
  // Chunked answers go out a window at a time (response.hpp append_chunks); the window is half the
  // queue bound, so a default-sized answer of a few MiB still goes out in one sendmsg.
  [[nodiscard]] std::size_t window_bytes() const noexcept;
  void continue_stream();
  // A body serialized as it is sent (cache=0, chunked; ServerOptions::serializer_buffer_bytes): the
  // head and the first chunk now, each next chunk once the batch holding the previous one has gone out.
  void start_serializing(const BodyKey& key, const ResponseHead& head);
  void serialize_next_chunk();
  // The batch that held the last chunk serialized went out (`sent_batch`: its index in batches_).
  void continue_serializing(unsigned sent_batch);
  // A timeout while a request is in progress: 408, then close.
  void time_out(std::string_view message);
  // Gives back what an unusual request made a connection grow (body, held bytes) on release.
  void trim();
  // Sends the pending batch unless a batch is still going out. Every part that queues an answer
  // calls it (receiving, sending, /proxy's answer, timeouts), per request: defined here so that
  // each can inline it.
  void flush() {
    if (send_in_flight_ || batch_sent_ || state_ != State::open || pending().empty()) return;
    pending_index_ ^= 1u;
    in_flight().prepare();
    submit_send();
  }
  void submit_send();
  // sendfile: the next step of a file body: file -> pipe when the pipe is empty, else pipe -> socket.
  void submit_splice(const BodySource& source);
  // Every byte of the batch in flight went out (and every zero-copy notification came back).
  void finish_batch();
  void close_pipe() noexcept;
  void begin_drain();
  void start_close();
  void maybe_release();

  Worker& worker_;
  Op<Connection, &Connection::on_recv> recv_op_{*this};
  Op<Connection, &Connection::on_sent> send_op_{*this};
  int fd_ = -1;
  State state_ = State::free;
  bool recv_armed_ = false;
  bool send_in_flight_ = false;  // an operation of the batch in flight (send, zero-copy send, splice)
  // The batch in flight went out whole, and waits for the notifications of its zero-copy sends
  // before it is cleared (their bytes must stay untouched until then).
  bool batch_sent_ = false;
  // Completions still to come at send_op_: one per operation, and one per zero-copy notification
  // (a zero-copy send's first completion has F_MORE). The connection is released only at 0.
  unsigned send_cqes_ = 0;
  // sendfile: the connection's pipe (created at its first file body), its capacity, the bytes in it
  // not yet spliced to the socket, and whether the splice in flight fills it.
  int pipe_[2] = {-1, -1};
  std::size_t pipe_capacity_ = 0;
  std::size_t pipe_bytes_ = 0;
  bool splice_fill_ = false;
  bool close_after_send_ = false;  // an answer that ends the connection is queued: read no more requests
  bool peer_closed_ = false;
  bool paused_ = false;  // output queue full: not reading requests (see output_full)
  bool head_seen_ = false;      // on_head ran for the message in progress (its body is being read)
  bool out_of_memory_ = false;  // a handler caught std::bad_alloc: the parse error is answered 503
  // /proxy's fetch in flight (owned by the worker's Upstream): no further request is read or
  // answered until it ends, so answers stay in order.
  UpstreamFetch* fetch_ = nullptr;
  Clock::time_point last_active_{};  // worker's clock at the last byte received or send completed
  Clock::time_point drain_since_{};
  Clock::time_point head_since_{};  // when the head in progress (if any) may have started

  http::RequestParser parser_;
  Request request_;
  std::string content_type_;  // echo: the request's Content-Type, copied at on_head
  std::string body_;          // echo: the request body; proxy: the upstream body
  std::string scratch_;       // error messages
  std::string held_;          // bytes received while paused, not yet parsed, in order
  std::vector<std::string> spare_bodies_;  // at most OutputBatch::kSpareCount

  // The rest of a chunked answer not yet appended (empty: none); `owner` keeps its bytes alive and
  // is held by each batch that references them.
  struct ChunkStream {
    std::shared_ptr<const void> owner;
    std::string_view rest;
    uint32_t chunk_bytes = 0;
  };
  ChunkStream stream_;

  // A body serialized as it is sent (start_serializing). One send at a time, one chunk serialized
  // ahead of none: `chunk` holds the chunk serialized last, referenced (not copied) by batches_[batch]
  // until that batch has gone out, and only then is the next one serialized into it. The kernel's
  // socket buffer is what lets the chunks already sent travel while the next is serialized, as
  // Kestrel's response buffer does for ASP.NET Core. `active` lasts until the last chunk has gone out,
  // so a pipelined answer after it never shares `chunk` with it.
  struct SerializingStream {
    json::BodyWriter writer;
    std::string chunk;
    unsigned batch = 0;
    bool active = false;
  };
  SerializingStream serializing_;

  // Two batches: one in flight, one collecting (see output.hpp).
  OutputBatch batches_[2];
  unsigned pending_index_ = 0;
  OutputBatch& pending() { return batches_[pending_index_]; }
  OutputBatch& in_flight() { return batches_[pending_index_ ^ 1u]; }
  msghdr message_{};
};

class Worker {
 public:
  // `upstream` empty: /proxy answers 502 (this worker is the internal upstream itself).
  // `on_failure` runs on the worker's thread when its ring fails (the server then stops the rest).
  // The worker publishes its counters to slot `board_slot` of `board` (which outlives it) every
  // kBatchesPerPublish batches of completions and at every tick.
  Worker(const ServerOptions& options, net::Fd listener, std::string upstream, int cpu,
         std::function<void()> on_failure, StatsBoard& board, std::size_t board_slot);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Thread body: sets up the ring, fulfils `ready`, serves until stopped, tears the ring down.
  void run(std::promise<Status>& ready);
  // Any thread.
  void request_stop() noexcept;
  [[nodiscard]] const Status& result() const noexcept { return result_; }
  [[nodiscard]] ServerStats stats() const;

  // For connections, on the worker's thread.
  [[nodiscard]] net::Ring& ring() noexcept { return *ring_; }
  [[nodiscard]] net::BufferRing& buffers() noexcept { return *buffers_; }
  [[nodiscard]] BodyCache& cache() noexcept { return cache_; }
  [[nodiscard]] const ServerOptions& options() const noexcept { return options_; }
  [[nodiscard]] ServerStats& counters() noexcept { return stats_; }
  // Copies this worker's counters to its slot of the board (every kBatchesPerPublish batches of
  // completions, at every tick and when the worker ends; GET /stats does it first, so that its own
  // worker's figures are current).
  void publish_stats() noexcept {
    board_.publish(board_slot_, stats());
    batches_since_publish_ = 0;
  }
  // Every worker's latest published counters, summed (GET /stats).
  [[nodiscard]] ServerStats published_total() const { return board_.total(); }
  // The worker's clock, read once per tick: stamping activity costs no clock read.
  [[nodiscard]] Clock::time_point now() const noexcept { return now_; }
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }
  // Idle and drain limits as compared with now() - stamp: one tick is added to idle_timeout because
  // a stamp may be up to one tick older than the activity it records.
  [[nodiscard]] net::Duration idle_limit() const noexcept { return idle_limit_; }
  [[nodiscard]] net::Duration header_limit() const noexcept { return header_limit_; }
  [[nodiscard]] net::Duration body_limit() const noexcept { return body_limit_; }
  // A connection freed this many bytes of buffers: counted towards the next tick's malloc_trim().
  void note_released(std::size_t bytes) noexcept { released_bytes_ += bytes; }
  static constexpr std::size_t kFreeConnections = 16;
  static constexpr std::size_t kTrimBytes = 1u << 20;
  // A publication locks the slot's mutex and copies every counter: once per batch, that is two
  // locked instructions and a copy of the whole ServerStats per kept-alive request, read or not.
  // Every 64 batches, a busy worker's published figures trail it by at most 63 batches (both ends
  // of a measured window alike); a quiet one's are current at the next tick.
  static constexpr unsigned kBatchesPerPublish = 64;
  [[nodiscard]] net::Duration linger_limit() const noexcept { return linger_limit_; }
  // Stopping, and shutdown_timeout has passed since: every connection is closed now.
  [[nodiscard]] bool shutdown_expired() const noexcept;
  void release(Connection& connection);
  // /proxy's fetches, on this worker's ring (upstream.hpp).
  [[nodiscard]] Upstream& upstream() noexcept { return *upstream_; }
  // /proxy?client=typed's clients, one per connection mode, made once from upstream() at set-up.
  [[nodiscard]] TypedUpstreamClient& typed_upstream(UpstreamConnection mode) noexcept {
    return mode == UpstreamConnection::fresh ? typed_upstream_[1] : typed_upstream_[0];
  }

 private:
  Status set_up();
  void tear_down() noexcept;
  void arm_accept();
  void arm_timer();
  void arm_wake();
  void on_accept(int res, uint32_t flags);
  void on_tick(int res, uint32_t flags);
  void on_wake(int res, uint32_t flags);
  void begin_stop();
  void maybe_finish();
  [[nodiscard]] bool finished() const noexcept;
  Connection& acquire();

  const ServerOptions& options_;
  net::Fd listener_;
  net::Fd wake_fd_;
  int wake_errno_ = 0;
  std::string upstream_text_;
  std::optional<http::Url> upstream_url_;  // views into upstream_text_
  int cpu_;
  std::function<void()> on_failure_;

  Op<Worker, &Worker::on_accept> accept_op_{*this};
  Op<Worker, &Worker::on_tick> tick_op_{*this};
  Op<Worker, &Worker::on_wake> wake_op_{*this};
  uint64_t wake_value_ = 0;
  bool accept_armed_ = false;
  bool accept_retry_ = false;  // accept ended on an error: re-armed at the next tick, not in a loop
  bool timer_armed_ = false;
  bool wake_armed_ = false;
  bool timer_cancelled_ = false;
  bool wake_cancelled_ = false;
  bool stopping_ = false;

  net::Duration tick_period_{};
  net::Duration idle_limit_{};
  net::Duration header_limit_{};
  net::Duration body_limit_{};
  std::size_t released_bytes_ = 0;
  net::Duration linger_limit_{};
  Clock::time_point now_{};
  Clock::time_point stop_time_{};

  // Free connections are owned here; live ones by the live list (released into free_ when closed,
  // destroyed by tear_down() if the worker ends on a ring failure with connections open).
  std::vector<std::unique_ptr<Connection>> free_;
  Connection* live_head_ = nullptr;
  std::size_t live_ = 0;

  BodyCache cache_;
  // fixed: the registered memory cached bodies are copied into (body_placement.hpp).
  std::shared_ptr<FixedArea> fixed_area_;
  ServerStats stats_;
  StatsBoard& board_;
  std::size_t board_slot_;
  unsigned batches_since_publish_ = 0;
  Status result_;

  // Destroyed in this order (reverse of declaration) by tear_down(): the upstream's fetches and the
  // buffer ring before the ring they use.
  std::unique_ptr<net::Ring> ring_;
  std::unique_ptr<net::BufferRing> buffers_;
  std::unique_ptr<Upstream> upstream_;
  std::vector<TypedUpstreamClient> typed_upstream_;  // pooled, fresh; views of upstream_
};

}  // namespace ringlab::server
