#include "ringlab/server/output.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace ringlab::server;

namespace {

std::string gather(std::span<const iovec> parts) {
  std::string out;
  for (const iovec& part : parts) out.append(static_cast<const char*>(part.iov_base), part.iov_len);
  return out;
}

}  // namespace

TEST_CASE("adjacent copies share one iovec and references get their own") {
  OutputBatch batch;
  const std::string large(OutputBatch::kInlineBytes + 1, 'x');
  batch.append_copy("HTTP/1.1 200 OK\r\n\r\n");
  batch.append_copy("abc");
  batch.append_ref(large);
  batch.append_copy("\r\n");
  batch.append_copy("0\r\n\r\n");
  batch.prepare();
  auto parts = batch.iovecs();
  REQUIRE(parts.size() == 3);
  CHECK(parts[1].iov_base == large.data());  // not copied
  CHECK(parts[1].iov_len == large.size());
  CHECK(gather(parts) == "HTTP/1.1 200 OK\r\n\r\nabc" + large + "\r\n0\r\n\r\n");
  CHECK(batch.total_bytes() == gather(parts).size());
  CHECK(batch.flatten() == gather(parts));
}

TEST_CASE("append_body copies up to kInlineBytes and references beyond") {
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, OutputBatch::kInlineBytes, OutputBatch::kInlineBytes + 1}) {
    INFO("body size ", size);
    const std::string body(size, 'b');
    OutputBatch batch;
    batch.append_copy("head");
    batch.append_body(body);
    batch.prepare();
    auto parts = batch.iovecs();
    const bool referenced = size > OutputBatch::kInlineBytes;
    CHECK(parts.size() == (referenced ? 2u : 1u));
    if (referenced) CHECK(parts[1].iov_base == body.data());
    CHECK(gather(parts) == "head" + body);
  }
}

TEST_CASE("the inline limit is per batch: 0 references every body, a large one copies") {
  const std::string body(100, 'b');
  OutputBatch never(0);
  never.append_copy("head");
  never.append_body(body);
  never.prepare();
  REQUIRE(never.iovecs().size() == 2);
  CHECK(never.iovecs()[1].iov_base == body.data());

  OutputBatch always(1u << 20);
  const std::string large(100000, 'L');
  always.append_copy("head");
  always.append_body(large);
  always.prepare();
  REQUIRE(always.iovecs().size() == 1);
  CHECK(always.flatten() == "head" + large);
}

TEST_CASE("consume resumes after a short send at every byte boundary") {
  const std::string large(3000, 'L');
  auto fill = [&](OutputBatch& batch) {
    batch.append_copy("head-");
    batch.append_ref(large);
    batch.append_copy("-middle-");
    batch.append_ref(large);
    batch.append_copy("-tail");
  };
  OutputBatch reference;
  fill(reference);
  const std::string all = reference.flatten();
  for (std::size_t first = 0; first <= all.size(); ++first) {
    OutputBatch batch;
    fill(batch);
    batch.prepare();
    const bool done = batch.consume(first);
    INFO("first send of ", first, " bytes");
    CHECK(done == (first == all.size()));
    REQUIRE(gather(batch.iovecs()) == all.substr(first));
  }
}

TEST_CASE("consume in uneven steps reaches the end exactly once") {
  const std::string large(5000, 'Z');
  for (std::size_t step : {1u, 7u, 1024u, 4999u, 100000u}) {
    INFO("step ", step);
    OutputBatch batch;
    batch.append_copy("a");
    batch.append_ref(large);
    batch.append_copy("b");
    batch.prepare();
    std::string sent;
    bool done = false;
    std::size_t rounds = 0;
    while (!done) {
      REQUIRE(++rounds < 20000);
      auto parts = batch.iovecs();
      REQUIRE_FALSE(parts.empty());
      const std::string rest = gather(parts);
      const std::size_t n = std::min(step, rest.size());
      sent += rest.substr(0, n);
      done = batch.consume(n);
    }
    CHECK(sent == "a" + large + "b");
    CHECK(batch.iovecs().empty());
  }
}

TEST_CASE("adopted strings keep their bytes in place while more are adopted") {
  OutputBatch batch;
  std::vector<std::string_view> views;
  std::vector<std::string> expected;
  for (int i = 0; i < 200; ++i) {
    std::string body(static_cast<std::size_t>(i % 40), static_cast<char>('a' + i % 26));
    expected.push_back(body);
    views.push_back(batch.adopt(std::move(body)));
  }
  for (std::size_t i = 0; i < views.size(); ++i) {
    INFO("adopted string ", i);
    CHECK(views[i] == expected[i]);
  }
}

TEST_CASE("clear recycles adopted strings but not huge ones, and releases held owners") {
  OutputBatch batch;
  std::string small;
  small.reserve(4096);
  small = "echo body";
  std::string huge(OutputBatch::kRetainBytes + 1, 'h');
  auto owner = std::make_shared<std::string>("cached");
  std::weak_ptr<std::string> watch = owner;
  batch.append_body(batch.adopt(std::move(small)));
  batch.append_body(batch.adopt(std::move(huge)));
  batch.hold(std::move(owner));
  CHECK_FALSE(watch.expired());
  std::vector<std::string> recycled;
  batch.clear(&recycled);
  CHECK(watch.expired());
  REQUIRE(recycled.size() == 1);
  CHECK(recycled[0].empty());
  CHECK(recycled[0].capacity() >= 4096);
  CHECK(batch.empty());
  CHECK(batch.total_bytes() == 0);
  CHECK(batch.queued_bytes() == 0);
}

TEST_CASE("queued_bytes counts what adopted strings own, not only what they send") {
  OutputBatch batch;
  std::string body;
  body.reserve(64 * 1024);
  body = "x";
  batch.append_body(batch.adopt(std::move(body)));
  // One byte to send, 64 KiB held: the queue bound must see the 64 KiB.
  CHECK(batch.total_bytes() == 1);
  CHECK(batch.queued_bytes() >= 64 * 1024);
  const std::string referenced(100'000, 'r');
  const std::size_t before = batch.queued_bytes();
  batch.append_ref(referenced);
  CHECK(batch.queued_bytes() >= before + referenced.size());
}

TEST_CASE("queued_bytes counts the growth of the batch's own buffer, not what an earlier batch left") {
  OutputBatch batch;
  const std::string head(100, 'h');
  // About 300 KB of copied heads: the buffer doubled past it, and all of it is memory the queue holds.
  while (batch.total_bytes() < 300'000) batch.append_copy(head);
  const std::size_t filled = batch.queued_bytes();
  CHECK(filled >= batch.total_bytes());
  CHECK(filled >= 512u * 1024);  // the capacity the doubling reached (libstdc++: 4 KiB * 2^7)
  // Emptied, the capacity it keeps (at most kRetainBytes) is the connection's standing cost: an
  // empty batch and a small answer in it count only their bytes.
  batch.clear();
  CHECK(batch.queued_bytes() == 0);
  batch.append_copy(head);
  CHECK(batch.queued_bytes() < 1024);
}

TEST_CASE("clear keeps at most kSpareCount spare strings") {
  OutputBatch batch;
  for (int i = 0; i < 10; ++i) {
    std::string body;
    body.reserve(4096);
    body = "echo";
    batch.append_body(batch.adopt(std::move(body)));
  }
  std::vector<std::string> recycled;
  batch.clear(&recycled);
  CHECK(recycled.size() == OutputBatch::kSpareCount);
}

TEST_CASE("append_written formats in place and joins the previous copy") {
  OutputBatch batch;
  batch.append_copy("A");
  batch.append_written([](std::string& out) { out += "BC"; });
  batch.append_written([](std::string&) {});
  batch.prepare();
  REQUIRE(batch.iovecs().size() == 1);
  CHECK(gather(batch.iovecs()) == "ABC");
}

TEST_CASE("a body with a source of its own is an iovec of its own, between the runs around it") {
  OutputBatch batch(4);
  const std::string body(100, 'z');
  const std::string small = "tiny";
  BodySource zero_copy{.kind = BodySource::Kind::zero_copy, .origin = body.data()};
  batch.append_copy("head1\r\n\r\n");
  batch.append_body(body, zero_copy);
  batch.append_copy("head2\r\n\r\n");
  batch.append_body(small, zero_copy);  // within the inline limit: copied next to its head
  batch.append_body(body, BodySource{.kind = BodySource::Kind::copy});
  batch.prepare();
  CHECK(batch.flatten() == "head1\r\n\r\n" + body + "head2\r\n\r\ntiny" + body);

  CHECK(batch.current_source() == nullptr);
  CHECK(gather(batch.iovecs()) == "head1\r\n\r\n");
  CHECK_FALSE(batch.consume(9));
  REQUIRE(batch.current_source() != nullptr);
  CHECK(batch.current_source()->kind == BodySource::Kind::zero_copy);
  REQUIRE(batch.iovecs().size() == 1);
  CHECK(batch.iovecs().front().iov_base == body.data());
  // A short send of the body: the rest is still its own iovec, at the right place.
  CHECK_FALSE(batch.consume(40));
  REQUIRE(batch.current_source() != nullptr);
  CHECK(static_cast<const char*>(batch.iovecs().front().iov_base) - batch.current_source()->origin == 40);
  CHECK_FALSE(batch.consume(60));
  CHECK(batch.current_source() == nullptr);
  CHECK(gather(batch.iovecs()) == "head2\r\n\r\ntiny" + body);  // the copy strategy's body is in the run
  CHECK(batch.consume(13 + body.size()));
  batch.clear();
  CHECK(batch.empty());
  CHECK(batch.current_source() == nullptr);
}

TEST_CASE("the memory source is append_body") {
  OutputBatch batch(4);
  const std::string body(100, 'm');
  batch.append_body(body, BodySource{.origin = body.data()});
  batch.prepare();
  CHECK(batch.current_source() == nullptr);
  REQUIRE(batch.iovecs().size() == 1);
  CHECK(batch.iovecs().front().iov_base == body.data());
}
