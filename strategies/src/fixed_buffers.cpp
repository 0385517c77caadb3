// fixed_buffers: the body is received into a buffer registered with the ring (io_uring_register_buffers):
// the kernel pins and maps its pages once, at setup, instead of at every receive, and the client
// receives into it with READ_FIXED. The registered buffer has the padding simdjson needs after it, so
// the body is parsed in place, into reused owning models, as presized.
//
// Its size is fixed at setup from one real body (rounded up to whole pages): a later body that does not
// fit is Errc::body_too_large, never a silent reallocation out of registered memory.
#include <new>

#include "client_strategy.hpp"
#include "factories.hpp"
#include "ringlab/http/sinks.hpp"
#include "ringlab/net/fixed_buffers.hpp"
#include "ringlab/base/padded_buffer.hpp"

namespace ringlab::strategies::detail {
namespace {

constexpr std::size_t kPage = 4096;

// Hands out one registered buffer (with its padding), once: the PaddedBuffer built on it then lives
// in registered memory. It never reallocates (PresizedSink with a fixed index refuses to), so a
// second allocation is a bug and fails loudly.
class RegisteredMemory final : public std::pmr::memory_resource {
 public:
  explicit RegisteredMemory(std::span<char> buffer) noexcept : buffer_(buffer) {}

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    const auto address = reinterpret_cast<std::uintptr_t>(buffer_.data());
    if (given_ || bytes > buffer_.size() + base::kPadding || address % alignment != 0) throw std::bad_alloc();
    given_ = true;
    return buffer_.data();
  }
  void do_deallocate(void*, std::size_t, std::size_t) override {}
  [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  std::span<char> buffer_;
  bool given_ = false;
};

class FixedBuffersStrategy final : public ClientStrategy {
 public:
  using ClientStrategy::ClientStrategy;
  ~FixedBuffersStrategy() override { release(); }

  [[nodiscard]] std::optional<std::string> skip_reason(const net::RingFeatures& features) const override {
    if (!features.fixed_buffers) return "kernel lacks registered buffers (IORING_REGISTER_BUFFERS)";
    return std::nullopt;
  }

 private:
  Status prepare() override {
    if (!ring().features().fixed_buffers) return fail(label(), "kernel lacks registered buffers");
    auto body_bytes = probe_body_bytes();
    if (!body_bytes) return std::unexpected(body_bytes.error());
    const std::size_t size = (std::max<std::size_t>(*body_bytes, 1) + kPage - 1) / kPage * kPage;
    auto buffers = net::FixedBuffers::create(ring(), 1, size);
    if (!buffers) return fail(label(), buffers.error().message());
    buffers_ = std::move(*buffers);
    memory_.emplace(buffers_->buffer(0));
    body_.emplace(buffers_->buffer_size(), &*memory_);
    sink_.emplace(*body_, 0);
    models_.reserve(config().payload, config().count);
    return {};
  }
  http::BodySink& sink() override { return *sink_; }
  json::Result<uint64_t> deserialize() override {
    return models_.parse(config().payload, parser(), json::padded_view(*body_));
  }
  uint64_t checksum() override { return models_.checksum(config().payload); }
  void release() override {
    sink_.reset();
    body_.reset();
    memory_.reset();
    buffers_.reset();  // unregisters: before the ring goes
  }

  std::unique_ptr<net::FixedBuffers> buffers_;
  std::optional<RegisteredMemory> memory_;
  std::optional<base::PaddedBuffer> body_;
  std::optional<http::PresizedSink> sink_;
  OwningModels models_;
};

}  // namespace

std::unique_ptr<Strategy> make_fixed_buffers() { return std::make_unique<FixedBuffersStrategy>("fixed_buffers"); }

}  // namespace ringlab::strategies::detail
