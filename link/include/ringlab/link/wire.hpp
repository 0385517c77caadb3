#pragma once
// Wire: a user-space link emulator between two network interfaces.
//
// Why in user space: the emulated link must work on kernels built without sch_netem (and without
// sch_fq, whose earliest-departure-time pacing a BPF program could otherwise use for delay).
// Every frame that arrives on one interface is forwarded to the other after the time a real link
// of the spec's rate and delay would take:
//   departure  = max(arrival, departure of the previous frame) + wire time of the frame's bytes
//   delivery   = departure + delay + a uniform draw in [-jitter, +jitter], never before the
//                previous frame's delivery (the link does not reorder)
// where the wire time counts every segment of a GSO super-frame with its own headers, preamble,
// inter-frame gap and FCS (24 bytes), so a 64 KB super-frame costs what its 45 packets would.
// A frame that finds the bottleneck's queue (bytes not yet serialized) over the spec's limit is
// dropped, as a router's tail drop would; loss is drawn per frame (per super-frame when GSO is on:
// then the probability is that of losing any of its segments).
//
// Timing: arrivals are stamped by the kernel (SO_TIMESTAMPNS), so the forwarder's own wake-up
// latency does not add to the delay; releases sleep until shortly before the frame is due, by an
// estimate of this machine's timer overshoot learned as it runs, and never spin for long. The
// release error (actual minus due) is in the statistics.
//
// Frames cross as raw Ethernet frames on AF_PACKET sockets with virtio-net headers, so GSO
// super-frames and checksum offload survive the hop. The interfaces carry no addresses: ARP and
// everything else cross the wire unchanged.
//
// Ownership: Wire owns its two sockets and its frame buffers (allocated once in open(); run()
// does not allocate). Threads: one; run() blocks the calling thread until stop becomes non-zero
// (checked whenever a signal interrupts the wait; the caller blocks the signals it uses for
// stopping and passes the mask to wait with, so none is lost between the check and the wait).
// Needs CAP_NET_RAW in the namespace that holds both interfaces.
#include "ringlab/link/spec.hpp"

#include <signal.h>

#include <csignal>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>

namespace ringlab::link {

struct WireOptions {
  LinkSpec spec;
  std::string client_interface;  // frames that arrive here go toward the server
  std::string server_interface;  // and those that arrive here toward the client
};

struct DirectionStats {
  uint64_t frames = 0;             // forwarded
  uint64_t segments = 0;           // packets they stand for (GSO super-frames count each segment)
  uint64_t bytes = 0;              // Ethernet frame bytes forwarded
  uint64_t dropped_loss = 0;       // by the loss draw
  uint64_t dropped_queue = 0;      // tail-dropped: the queue was full
  uint64_t dropped_send = 0;       // the outgoing interface refused the frame
  uint64_t dropped_truncated = 0;  // larger than the receive buffer (never expected)
  uint64_t max_queue_bytes = 0;    // largest backlog seen
  int64_t release_error_max_ns = 0;  // latest release relative to its due time
  int64_t release_error_sum_ns = 0;  // for the mean
};

struct WireStats {
  DirectionStats to_server;
  DirectionStats to_client;
  uint64_t socket_drops = 0;  // frames the kernel dropped before the wire read them
  int64_t timer_overshoot_estimate_ns = 0;
  // One JSON object on one line: {"to_server":{...},"to_client":{...},...}.
  [[nodiscard]] std::string json() const;
};

class Wire {
 public:
  // Opens and binds the packet sockets. Error text names the interface and the call.
  [[nodiscard]] static std::expected<Wire, std::string> open(const WireOptions& options);

  Wire(Wire&&) noexcept;
  Wire& operator=(Wire&&) noexcept;
  ~Wire();

  // Forwards until `stop` is non-zero. `wait_mask` is the signal mask to wait with.
  [[nodiscard]] std::expected<WireStats, std::string> run(const volatile std::sig_atomic_t& stop,
                                                          const sigset_t& wait_mask);

 private:
  struct State;
  explicit Wire(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ringlab::link
