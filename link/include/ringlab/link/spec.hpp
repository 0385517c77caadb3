#pragma once
// LinkSpec: what an emulated link between bench and the server looks like.
//
// A SPEC names a profile or lists settings, and may do both (settings after a profile override it):
//   loopback                     today's behaviour: no namespace, no emulation (the default)
//   10g                          10 Gbit/s, 25 us one-way, MTU 1500
//   1g                           1 Gbit/s, 100 us one-way, MTU 1500
//   wan                          100 Mbit/s, 10 ms one-way, 0.01 % loss, MTU 1500
//   rate=2gbit,delay=50us,jitter=5us,loss=0.1%,mtu=9000,queue=4mb,gso=off,seed=7
//   1g,loss=0.1%                 a profile with one setting changed
// Units: rate in bit/s with k/m/g suffixes ("100mbit", "10g", "0" = unlimited); times in ns, us,
// ms or s; loss in percent ("0.01%") or as a fraction ("0.0001"); queue in bytes with k/m
// suffixes (powers of 1024). Every key has a default (below) and a range that parse() checks.
//
// Errors: parse() returns a message that names the offending item ("link 'rate=fast': rate must be
// a number with k/m/g[bit] (for example 10gbit)"). Pure value type; no I/O, no threads.
#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace ringlab::link {

struct LinkSpec {
  std::string profile = "loopback";  // the profile it started from, or "custom"
  uint64_t rate_bits_per_second = 0;  // 0: unlimited (frames leave as soon as they arrive)
  std::chrono::nanoseconds delay{0};   // one-way propagation delay
  std::chrono::nanoseconds jitter{0};  // delay varies uniformly in [delay - jitter, delay + jitter]
  double loss = 0.0;                   // probability that a frame is dropped, per direction
  unsigned mtu = 1500;                 // of every interface on the path
  uint64_t queue_bytes = 0;            // the bottleneck's buffer; 0: the default (queue_limit())
  // Segmentation offload across the emulated wire. On (the default), the wire carries the
  // kernel's GSO super-frames and accounts every segment's wire time, which keeps 10 Gbit/s
  // within reach of a user-space forwarder; loss is then drawn per super-frame. Off when
  // loss > 0 unless set: each frame is then one MTU-sized packet and loss is exact per packet.
  enum class Gso : uint8_t { automatic, on, off } gso = Gso::automatic;
  uint64_t seed = 1;  // of the loss and jitter draws: a run is repeatable

  // True for every spec but plain loopback: the run builds namespaces and a wire.
  [[nodiscard]] bool emulated() const noexcept { return profile != "loopback"; }
  // Whether the wire carries GSO super-frames (resolves Gso::automatic).
  [[nodiscard]] bool gso_enabled() const noexcept;
  // The buffer in bytes: queue_bytes, or by default 1000 MTU-sized frames (netem's default
  // limit), or twice the bandwidth-delay product (rate x 2 x (delay + jitter)) when that is more.
  [[nodiscard]] uint64_t queue_limit() const noexcept;

  // Canonical text that parse() reads back to the same spec: "rate=10gbit,delay=25us,mtu=1500".
  [[nodiscard]] std::string canonical() const;
  // For tables and headers: "10g: 10 Gbit/s, 25 us one-way, MTU 1500, GSO on, queue 1.43 MiB".
  [[nodiscard]] std::string describe() const;
  // Round trip the spec configures: 2 x delay (what the measured RTT is compared with).
  [[nodiscard]] std::chrono::nanoseconds configured_rtt() const noexcept { return 2 * delay; }
};

[[nodiscard]] std::expected<LinkSpec, std::string> parse_link_spec(std::string_view text);

// Named profiles, for --help and errors: "loopback, 10g, 1g, wan".
[[nodiscard]] std::string_view profile_names() noexcept;

// "10 Gbit/s", "100 Mbit/s", "unlimited"; "25 us", "10 ms".
[[nodiscard]] std::string format_rate(uint64_t bits_per_second);
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds duration);

}  // namespace ringlab::link
