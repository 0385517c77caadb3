#include "ringlab/base/padded_buffer.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <string>
#include <string_view>

using ringlab::base::kPadding;
using ringlab::base::PaddedBuffer;

namespace {

// Counts what a PaddedBuffer asks of its resource, so the tests can see the pmr seam is used.
class CountingResource final : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0;
  std::size_t deallocations = 0;
  std::size_t live_bytes = 0;
  std::size_t last_alignment = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    ++allocations;
    live_bytes += bytes;
    last_alignment = alignment;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    ++deallocations;
    live_bytes -= bytes;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

// Reads every padding byte: under AddressSanitizer an unallocated one aborts the test.
bool padding_is_readable_and_zero(const PaddedBuffer& buffer) {
  const char* end = buffer.data() + buffer.capacity();
  for (std::size_t i = 0; i < kPadding; ++i) {
    if (end[i] != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("A default PaddedBuffer is empty and allocates nothing") {
  CountingResource resource;
  PaddedBuffer buffer(&resource);
  CHECK(buffer.size() == 0);
  CHECK(buffer.capacity() == 0);
  CHECK(buffer.data() == nullptr);
  CHECK(resource.allocations == 0);
}

TEST_CASE("PaddedBuffer takes capacity plus padding from its resource, cache-line aligned") {
  CountingResource resource;
  {
    PaddedBuffer buffer(1000, &resource);
    CHECK(buffer.capacity() == 1000);
    CHECK(resource.allocations == 1);
    CHECK(resource.live_bytes == 1000 + kPadding);
    CHECK(resource.last_alignment == 64);
    CHECK(reinterpret_cast<std::uintptr_t>(buffer.data()) % 64 == 0);
    CHECK(padding_is_readable_and_zero(buffer));
    CHECK(buffer.resource() == &resource);
  }
  CHECK(resource.deallocations == 1);
  CHECK(resource.live_bytes == 0);
}

TEST_CASE("PaddedBuffer::reserve keeps the bytes and the padding, and never shrinks") {
  CountingResource resource;
  PaddedBuffer buffer(16, &resource);
  buffer.append("0123456789");
  buffer.reserve(4096);
  CHECK(buffer.capacity() == 4096);
  CHECK(buffer.view() == "0123456789");
  CHECK(padding_is_readable_and_zero(buffer));
  buffer.reserve(8);
  CHECK(buffer.capacity() == 4096);
  CHECK(resource.allocations == 2);
  CHECK(resource.live_bytes == 4096 + kPadding);
}

TEST_CASE("PaddedBuffer::append doubles capacity and keeps every byte") {
  PaddedBuffer buffer(4);
  std::string expected;
  std::size_t last_capacity = buffer.capacity();
  for (int i = 0; i < 200; ++i) {
    const std::string piece = std::to_string(i) + ",";
    buffer.append(piece);
    expected += piece;
    if (buffer.capacity() != last_capacity) {
      INFO("grew from ", last_capacity, " to ", buffer.capacity(), " at size ", buffer.size());
      CHECK(buffer.capacity() >= 2 * last_capacity);
      last_capacity = buffer.capacity();
    }
    REQUIRE(padding_is_readable_and_zero(buffer));
  }
  CHECK(buffer.view() == expected);
}

TEST_CASE("PaddedBuffer::resize within capacity never moves the bytes") {
  PaddedBuffer buffer(128);
  char* before = buffer.data();
  buffer.resize(100);
  buffer.resize(10);
  buffer.resize(128);
  CHECK(buffer.data() == before);
  CHECK(buffer.size() == 128);
  buffer.resize(129);  // grows by doubling
  CHECK(buffer.capacity() >= 256);
}

TEST_CASE("PaddedBuffer spare() and commit() are where a receive lands") {
  PaddedBuffer buffer(64);
  buffer.append("head");
  auto spare = buffer.spare();
  CHECK(spare.data() == buffer.data() + 4);
  CHECK(spare.size() == 60);
  std::memcpy(spare.data(), "body", 4);
  buffer.commit(4);
  CHECK(buffer.view() == "headbody");
  buffer.clear();
  CHECK(buffer.size() == 0);
  CHECK(buffer.capacity() == 64);
}

TEST_CASE("PaddedBuffer moves its memory with its resource and frees it once") {
  CountingResource resource;
  CountingResource other_resource;
  {
    PaddedBuffer a(32, &resource);
    a.append("abc");
    const char* bytes = a.data();
    PaddedBuffer b(std::move(a));
    CHECK(b.data() == bytes);
    CHECK(b.view() == "abc");
    CHECK(a.data() == nullptr);
    CHECK(a.size() == 0);

    PaddedBuffer c(16, &other_resource);
    c = std::move(b);
    CHECK(c.data() == bytes);
    CHECK(c.resource() == &resource);
    CHECK(other_resource.live_bytes == 0);  // c's old memory went back to its own resource
  }
  CHECK(resource.live_bytes == 0);
  CHECK(resource.allocations == resource.deallocations);
  CHECK(other_resource.allocations == other_resource.deallocations);
}

TEST_CASE("PaddedBuffer with a monotonic arena takes its memory from the arena") {
  char arena_bytes[4096];
  std::pmr::monotonic_buffer_resource arena(arena_bytes, sizeof(arena_bytes), std::pmr::null_memory_resource());
  PaddedBuffer buffer(512, &arena);
  CHECK(buffer.data() >= arena_bytes);
  CHECK(buffer.data() + buffer.capacity() + kPadding <= arena_bytes + sizeof(arena_bytes));
}
