#include "ringlab/link/wire.hpp"

#include "ringlab/base/errno_text.hpp"

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

namespace ringlab::link {
namespace {

// struct virtio_net_hdr of <linux/virtio_net.h>, which does not compile as C++ (a member named
// "class"): what a packet socket with PACKET_VNET_HDR puts before every frame, in host byte order.
struct VirtioNetHeader {
  uint8_t flags;
  uint8_t gso_type;
  uint16_t hdr_len;
  uint16_t gso_size;
  uint16_t csum_start;
  uint16_t csum_offset;
};
static_assert(sizeof(VirtioNetHeader) == 10);
constexpr uint8_t kGsoNone = 0;   // VIRTIO_NET_HDR_GSO_NONE
constexpr uint8_t kGsoEcn = 0x80;  // VIRTIO_NET_HDR_GSO_ECN, a flag on top of the type
constexpr std::size_t kVnetHeader = sizeof(VirtioNetHeader);
// Largest frame a packet socket hands over: a 64 KiB GSO super-frame, its Ethernet header (and a
// VLAN tag), the virtio-net header. A bigger one is counted as truncated and dropped.
constexpr std::size_t kMaxFrame = 65536 + 64 + kVnetHeader;
constexpr int64_t kPerSegmentOverheadBytes = 24;  // preamble 8 + inter-frame gap 12 + FCS 4
constexpr int kReceiveBatch = 64;
constexpr int64_t kReleaseSlackNs = 1'000;        // a frame due within this is released now
constexpr int64_t kInitialOvershootNs = 20'000;   // timer overshoot before any was measured
constexpr int64_t kMaxOvershootNs = 200'000;

int64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

int64_t realtime_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}


// A queue of frames in one contiguous buffer, written at the tail and read at the head. A frame
// that would not fit before the end of the buffer is written at offset 0 instead, and `end_`
// remembers where the upper part stops until the reader gets there (a bip buffer: at most one
// wrap is outstanding, since the writer cannot pass the reader).
class FrameQueue {
 public:
  struct Entry {
    int64_t due_ns;
    uint32_t length;  // bytes of frame (virtio-net header included)
  };

  explicit FrameQueue(std::size_t capacity) : buffer_(new std::byte[capacity]), capacity_(capacity) {}

  // Where a frame of up to kMaxFrame bytes can be written; nullptr when full.
  std::byte* reserve() {
    constexpr std::size_t need = sizeof(Entry) + kMaxFrame + 16;
    if (count_ == 0) head_ = tail_ = 0, end_ = kNoWrap;
    wrap_pending_ = false;
    if (end_ == kNoWrap) {
      if (capacity_ - tail_ >= need) return data_at(tail_);
      if (head_ < need) return nullptr;
      wrap_pending_ = true;
      return data_at(0);
    }
    return head_ - tail_ >= need ? data_at(tail_) : nullptr;
  }

  // Commits the frame written at reserve()'s pointer.
  void commit(uint32_t length, int64_t due_ns) {
    if (wrap_pending_) {
      end_ = tail_;
      tail_ = 0;
      wrap_pending_ = false;
    }
    const Entry entry{due_ns, length};
    std::memcpy(buffer_.get() + tail_, &entry, sizeof entry);
    tail_ += aligned(sizeof(Entry) + length);
    ++count_;
  }

  // Forgets a reservation (nothing received, or the frame was dropped).
  void cancel() noexcept { wrap_pending_ = false; }

  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] Entry front() const {
    Entry entry{};
    std::memcpy(&entry, buffer_.get() + head_, sizeof entry);
    return entry;
  }
  [[nodiscard]] const std::byte* front_data() const { return buffer_.get() + head_ + sizeof(Entry); }
  void pop() {
    head_ += aligned(sizeof(Entry) + front().length);
    if (--count_ == 0) {
      head_ = tail_ = 0;
      end_ = kNoWrap;
    } else if (end_ != kNoWrap && head_ == end_) {
      head_ = 0;
      end_ = kNoWrap;
    }
  }

 private:
  static constexpr std::size_t kNoWrap = ~std::size_t{0};
  static std::size_t aligned(std::size_t n) { return (n + 15) & ~std::size_t{15}; }
  std::byte* data_at(std::size_t offset) { return buffer_.get() + offset + sizeof(Entry); }

  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  std::size_t end_ = kNoWrap;
  std::size_t count_ = 0;
  bool wrap_pending_ = false;
};

// xorshift64*: deterministic per seed, no allocation.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed == 0 ? 0x9E3779B97F4A7C15ULL : seed) {}
  double uniform() {  // [0, 1)
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<double>((state_ * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

struct Direction {
  int in_fd = -1;
  int out_fd = -1;
  FrameQueue queue;
  int64_t link_free_ns = 0;     // when the bottleneck finishes serializing the last accepted frame
  int64_t last_delivery_ns = 0;
  DirectionStats stats;
};

// Header bytes that every segment of a TCP/UDP GSO super-frame repeats: Ethernet + IP + L4.
uint32_t segment_header_bytes(const std::byte* frame, std::size_t length) {
  constexpr uint32_t kFallback = 14 + 20 + 32;
  if (length < 14 + 20) return kFallback;
  const auto byte = [&](std::size_t i) { return static_cast<uint8_t>(frame[i]); };
  const unsigned ethertype = (byte(12) << 8) | byte(13);
  uint32_t ip = 0;
  uint8_t protocol = 0;
  if (ethertype == ETH_P_IP) {
    ip = (byte(14) & 0x0f) * 4u;
    protocol = byte(14 + 9);
  } else if (ethertype == ETH_P_IPV6) {
    ip = 40;
    protocol = byte(14 + 6);
  } else {
    return kFallback;
  }
  if (protocol == IPPROTO_UDP) return 14 + ip + 8;
  if (protocol != IPPROTO_TCP || length < 14 + ip + 13) return kFallback;
  return 14 + ip + (byte(14 + ip + 12) >> 4) * 4u;
}

}  // namespace

struct Wire::State {
  WireOptions options;
  int client_fd = -1;
  int server_fd = -1;
  std::optional<Direction> to_server;
  std::optional<Direction> to_client;
  Random random{1};
  uint64_t queue_limit = 0;
  int64_t overshoot_estimate_ns = kInitialOvershootNs;

  ~State() {
    if (client_fd >= 0) ::close(client_fd);
    if (server_fd >= 0) ::close(server_fd);
  }

  int64_t wire_time_ns(uint64_t wire_bytes) const {
    const uint64_t rate = options.spec.rate_bits_per_second;
    if (rate == 0) return 0;
    return static_cast<int64_t>(static_cast<double>(wire_bytes) * 8e9 / static_cast<double>(rate));
  }

  int64_t jitter_draw() {
    const int64_t jitter = options.spec.jitter.count();
    if (jitter == 0) return 0;
    return static_cast<int64_t>((random.uniform() * 2 - 1) * static_cast<double>(jitter));
  }

  // Reads what has arrived on d.in_fd (up to a batch); true when something was read.
  bool receive(Direction& d) {
    bool any = false;
    for (int i = 0; i < kReceiveBatch; ++i) {
      std::byte* slot = d.queue.reserve();
      if (slot == nullptr) return any;  // full: the kernel's socket buffer holds the rest
      iovec io{slot, kMaxFrame};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
      msghdr msg{};
      msg.msg_iov = &io;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const ssize_t n = ::recvmsg(d.in_fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
      if (n < 0) {
        d.queue.cancel();
        return any;
      }
      any = true;
      const int64_t now = monotonic_ns();
      if ((msg.msg_flags & MSG_TRUNC) != 0 || static_cast<std::size_t>(n) > kMaxFrame ||
          static_cast<std::size_t>(n) <= kVnetHeader) {
        ++d.stats.dropped_truncated;
        d.queue.cancel();
        continue;
      }
      int64_t arrival = now;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec stamp{};
          std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
          const int64_t kernel = int64_t{stamp.tv_sec} * 1'000'000'000 + stamp.tv_nsec;
          arrival = std::min(now, now - (realtime_ns() - kernel));
        }
      }
      accept(d, slot, static_cast<std::size_t>(n), arrival, now);
    }
    return any;
  }

  void accept(Direction& d, std::byte* slot, std::size_t length, int64_t arrival, int64_t now) {
    VirtioNetHeader header{};
    std::memcpy(&header, slot, sizeof header);
    const std::byte* frame = slot + kVnetHeader;
    const std::size_t frame_length = length - kVnetHeader;
    uint64_t segments = 1;
    uint64_t wire_bytes = frame_length + kPerSegmentOverheadBytes;
    if ((header.gso_type & ~kGsoEcn) != kGsoNone && header.gso_size != 0) {
      const uint32_t headers = segment_header_bytes(frame, frame_length);
      const uint64_t payload = frame_length > headers ? frame_length - headers : 0;
      segments = std::max<uint64_t>(1, (payload + header.gso_size - 1) / header.gso_size);
      wire_bytes = frame_length + (segments - 1) * headers + segments * kPerSegmentOverheadBytes;
    }
    const double loss = options.spec.loss;
    if (loss > 0) {
      const double p = segments == 1 ? loss : 1 - std::pow(1 - loss, static_cast<double>(segments));
      if (random.uniform() < p) {
        ++d.stats.dropped_loss;
        d.queue.cancel();
        return;
      }
    }
    const uint64_t rate = options.spec.rate_bits_per_second;
    const uint64_t backlog =
        rate == 0 || d.link_free_ns <= now
            ? 0
            : static_cast<uint64_t>(static_cast<double>(d.link_free_ns - now) * static_cast<double>(rate) / 8e9);
    if (backlog + wire_bytes > queue_limit) {
      ++d.stats.dropped_queue;
      d.queue.cancel();
      return;
    }
    d.stats.max_queue_bytes = std::max(d.stats.max_queue_bytes, backlog + wire_bytes);
    const int64_t departure = std::max(arrival, d.link_free_ns) + wire_time_ns(wire_bytes);
    d.link_free_ns = departure;
    const int64_t delivery =
        std::max(departure + options.spec.delay.count() + jitter_draw(), d.last_delivery_ns);
    d.last_delivery_ns = delivery;
    d.stats.segments += segments;
    d.queue.commit(static_cast<uint32_t>(length), delivery);
  }

  // Sends every frame that is due by `now` (within the slack).
  void release(Direction& d, int64_t now) {
    while (!d.queue.empty()) {
      const FrameQueue::Entry entry = d.queue.front();
      if (entry.due_ns > now + kReleaseSlackNs) return;
      const ssize_t sent = ::send(d.out_fd, d.queue.front_data(), entry.length, MSG_DONTWAIT);
      if (sent == static_cast<ssize_t>(entry.length)) {
        ++d.stats.frames;
        d.stats.bytes += entry.length - kVnetHeader;
        const int64_t error = monotonic_ns() - entry.due_ns;
        d.stats.release_error_sum_ns += error;
        d.stats.release_error_max_ns = std::max(d.stats.release_error_max_ns, error);
      } else {
        ++d.stats.dropped_send;
      }
      d.queue.pop();
    }
  }
};

std::string WireStats::json() const {
  auto direction = [](const DirectionStats& s) {
    return fmt::format(
        "{{\"frames\":{},\"segments\":{},\"bytes\":{},\"dropped_loss\":{},\"dropped_queue\":{},"
        "\"dropped_send\":{},\"dropped_truncated\":{},\"max_queue_bytes\":{},\"release_error_mean_ns\":{},"
        "\"release_error_max_ns\":{}}}",
        s.frames, s.segments, s.bytes, s.dropped_loss, s.dropped_queue, s.dropped_send, s.dropped_truncated,
        s.max_queue_bytes, s.frames == 0 ? 0 : s.release_error_sum_ns / static_cast<int64_t>(s.frames),
        s.release_error_max_ns);
  };
  return fmt::format("{{\"to_server\":{},\"to_client\":{},\"socket_drops\":{},\"timer_overshoot_estimate_ns\":{}}}",
                     direction(to_server), direction(to_client), socket_drops, timer_overshoot_estimate_ns);
}

namespace {

std::expected<int, std::string> open_packet_socket(const std::string& interface) {
  const unsigned index = ::if_nametoindex(interface.c_str());
  if (index == 0) return std::unexpected(base::errno_message("wire: if_nametoindex", interface, errno));
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::unexpected(base::errno_message("wire: socket", "AF_PACKET", errno));
  auto fail = [&](std::string_view what) {
    const int code = errno;
    ::close(fd);
    return std::unexpected(base::errno_message(fmt::format("wire: {}", what), interface, code));
  };
  const int one = 1;
  const int buffer = 16 << 20;
  if (::setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) != 0) return fail("PACKET_VNET_HDR");
  if (::setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0) return fail("PACKET_IGNORE_OUTGOING");
  if (::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) return fail("SO_TIMESTAMPNS");
  // FORCE needs CAP_NET_ADMIN, which the caller has; fall back to the capped size otherwise.
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer, sizeof buffer) != 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  address.sll_ifindex = static_cast<int>(index);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) return fail("bind");
  return fd;
}

uint64_t kernel_drops(int fd) {
  tpacket_stats stats{};
  socklen_t length = sizeof stats;
  if (::getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &stats, &length) != 0) return 0;
  return stats.tp_drops;
}

}  // namespace

Wire::Wire(std::unique_ptr<State> state) : state_(std::move(state)) {}
Wire::Wire(Wire&&) noexcept = default;
Wire& Wire::operator=(Wire&&) noexcept = default;
Wire::~Wire() = default;

std::expected<Wire, std::string> Wire::open(const WireOptions& options) {
  auto state = std::make_unique<State>();
  state->options = options;
  state->random = Random(options.spec.seed);
  state->queue_limit = options.spec.queue_limit();
  auto client = open_packet_socket(options.client_interface);
  if (!client) return std::unexpected(client.error());
  state->client_fd = *client;
  auto server = open_packet_socket(options.server_interface);
  if (!server) return std::unexpected(server.error());
  state->server_fd = *server;
  // Room for the queue, the frames in flight during the delay, and two frames of slack; with an
  // unlimited rate nothing bounds the frames in flight but the delay, so a fixed 32 MiB.
  const auto& spec = options.spec;
  std::size_t capacity = 32u << 20;
  if (spec.rate_bits_per_second != 0) {
    const double in_flight = static_cast<double>(spec.rate_bits_per_second) / 8 *
                             std::chrono::duration<double>(spec.delay + spec.jitter).count();
    capacity = static_cast<std::size_t>(static_cast<double>(state->queue_limit) * 1.25 + in_flight * 1.25) +
               4 * (kMaxFrame + 64);
  }
  state->to_server.emplace(Direction{state->client_fd, state->server_fd, FrameQueue(capacity), 0, 0, {}});
  state->to_client.emplace(Direction{state->server_fd, state->client_fd, FrameQueue(capacity), 0, 0, {}});
  return Wire(std::move(state));
}

std::expected<WireStats, std::string> Wire::run(const volatile std::sig_atomic_t& stop, const sigset_t& wait_mask) {
  State& s = *state_;
  Direction& up = *s.to_server;
  Direction& down = *s.to_client;
  while (stop == 0) {
    int64_t now = monotonic_ns();
    s.release(up, now);
    s.release(down, now);
    const bool received = s.receive(up) | s.receive(down);
    if (received) continue;
    now = monotonic_ns();
    std::optional<int64_t> next;
    if (!up.queue.empty()) next = up.queue.front().due_ns;
    if (!down.queue.empty()) next = std::min(next.value_or(INT64_MAX), down.queue.front().due_ns);
    int64_t wait_ns = -1;
    if (next) {
      wait_ns = *next - now - s.overshoot_estimate_ns;
      if (wait_ns <= 0) {
        // Due within the timer's overshoot: yield the CPU briefly instead of spinning on it.
        if (*next - now > kReleaseSlackNs) ::sched_yield();
        continue;
      }
    }
    pollfd fds[2] = {{up.in_fd, POLLIN, 0}, {down.in_fd, POLLIN, 0}};
    timespec timeout{wait_ns / 1'000'000'000, wait_ns % 1'000'000'000};
    const int64_t before = monotonic_ns();
    const int n = ::ppoll(fds, 2, wait_ns < 0 ? nullptr : &timeout, &wait_mask);
    if (n < 0 && errno != EINTR) return std::unexpected(base::errno_message("wire: ppoll", "packet sockets", errno));
    if (n == 0) {
      // Learn how late this machine's timers fire: a slow moving average of the overshoot.
      const int64_t overshoot = std::clamp<int64_t>(monotonic_ns() - before - wait_ns, 0, kMaxOvershootNs);
      s.overshoot_estimate_ns += (overshoot - s.overshoot_estimate_ns) / 8;
    }
  }
  WireStats stats;
  stats.to_server = up.stats;
  stats.to_client = down.stats;
  stats.socket_drops = kernel_drops(s.client_fd) + kernel_drops(s.server_fd);
  stats.timer_overshoot_estimate_ns = s.overshoot_estimate_ns;
  return stats;
}

}  // namespace ringlab::link
