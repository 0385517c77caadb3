#include "ringlab/http/sinks.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <memory_resource>
#include <string>

using namespace ringlab;
using namespace ringlab::http;

namespace {

ResponseHead head_with_length(uint64_t length) {
  ResponseHead head;
  head.status = 200;
  head.content_length = length;
  return head;
}

ResponseHead chunked_head() {
  ResponseHead head;
  head.status = 200;
  head.chunked = true;
  return head;
}

}  // namespace

TEST_CASE("StringSink appends every piece and starts over at begin") {
  std::string out = "stale";
  StringSink sink(out);
  REQUIRE(sink.begin(head_with_length(6)));
  CHECK(out.empty());
  CHECK(sink.receive_window().bytes.empty());  // no preference: the client's buffer
  REQUIRE(sink.on_body("abc"));
  REQUIRE(sink.on_body("def"));
  REQUIRE(sink.end());
  CHECK(out == "abcdef");
}

TEST_CASE("GrowingSink appends into its PaddedBuffer, ignoring Content-Length") {
  base::PaddedBuffer buffer;
  GrowingSink sink(buffer);
  REQUIRE(sink.begin(head_with_length(1u << 20)));
  CHECK(buffer.capacity() < (1u << 20));  // not presized
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece = std::to_string(i);
    REQUIRE(sink.on_body(piece));
    expected += piece;
  }
  CHECK(buffer.view() == expected);
  CHECK(sink.receive_window().bytes.empty());
}

TEST_CASE("PresizedSink reserves Content-Length and offers exactly the rest as its window") {
  base::PaddedBuffer buffer;
  PresizedSink sink(buffer);
  REQUIRE(sink.begin(head_with_length(10000)));
  CHECK(buffer.capacity() == 10000);
  const char* start = buffer.data();

  // The head's receive brought the first bytes: they come from elsewhere and are copied.
  const std::string first(100, 'h');
  REQUIRE(sink.on_body(first));
  auto window = sink.receive_window();
  CHECK(window.fixed_buffer_index == -1);
  CHECK(window.bytes.data() == start + 100);
  CHECK(window.bytes.size() == 9900);

  // Received in place: the sink only advances.
  std::memset(window.bytes.data(), 'b', 9900);
  REQUIRE(sink.on_body(std::string_view(window.bytes.data(), 9900)));
  CHECK(buffer.size() == 10000);
  CHECK(buffer.data() == start);
  CHECK(buffer.view() == first + std::string(9900, 'b'));
  REQUIRE(sink.end());
}

TEST_CASE("PresizedSink de-chunks in place by sliding pieces over the framing") {
  base::PaddedBuffer buffer;
  PresizedSink sink(buffer);
  REQUIRE(sink.begin(chunked_head()));
  auto window = sink.receive_window();
  REQUIRE(window.bytes.size() >= 64);
  // What a receive of "3\r\nabc\r\n4\r\ndefg\r\n" into the window looks like to the parser.
  const std::string wire = "3\r\nabc\r\n4\r\ndefg\r\n";
  std::memcpy(window.bytes.data(), wire.data(), wire.size());
  REQUIRE(sink.on_body(std::string_view(window.bytes.data() + 3, 3)));
  REQUIRE(sink.on_body(std::string_view(window.bytes.data() + 11, 4)));
  CHECK(buffer.view() == "abcdefg");
}

TEST_CASE("PresizedSink grows a body of unknown length by doubling") {
  base::PaddedBuffer buffer;
  PresizedSink sink(buffer);
  REQUIRE(sink.begin(chunked_head()));
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    auto window = sink.receive_window();
    INFO("round ", i, " size ", buffer.size(), " capacity ", buffer.capacity());
    REQUIRE(window.bytes.size() >= 16 * 1024);  // never a tiny receive
    std::memset(window.bytes.data(), 'a' + i % 26, 4096);
    REQUIRE(sink.on_body(std::string_view(window.bytes.data(), 4096)));
    expected += std::string(4096, static_cast<char>('a' + i % 26));
  }
  CHECK(buffer.view() == expected);
}

TEST_CASE("PresizedSink with a fixed buffer never reallocates and refuses what does not fit") {
  alignas(64) static char region[8192 + base::kPadding];
  std::pmr::monotonic_buffer_resource arena(region, sizeof(region), std::pmr::null_memory_resource());
  base::PaddedBuffer buffer(8192, &arena);
  const char* start = buffer.data();
  PresizedSink sink(buffer, 3);

  SUBCASE("a Content-Length above capacity is refused at begin") {
    auto begun = sink.begin(head_with_length(8193));
    REQUIRE_FALSE(begun);
    CHECK(begun.error().code == Errc::body_too_large);
  }
  SUBCASE("within capacity the window is the registered buffer, with its index") {
    REQUIRE(sink.begin(head_with_length(8000)));
    auto window = sink.receive_window();
    CHECK(window.fixed_buffer_index == 3);
    CHECK(window.bytes.data() == start);
    CHECK(window.bytes.size() == 8192);
    REQUIRE(sink.on_body(std::string_view(window.bytes.data(), 8000)));
    CHECK(buffer.data() == start);
  }
  SUBCASE("a chunked body that outgrows the buffer is refused, not moved") {
    REQUIRE(sink.begin(chunked_head()));
    const std::string piece(5000, 'x');
    REQUIRE(sink.on_body(piece));
    auto second = sink.on_body(piece);
    REQUIRE_FALSE(second);
    CHECK(second.error().code == Errc::body_too_large);
    CHECK(buffer.data() == start);
  }
}

TEST_CASE("DiscardSink counts bytes and restarts at begin") {
  DiscardSink sink;
  REQUIRE(sink.begin(head_with_length(3)));
  REQUIRE(sink.on_body("abc"));
  CHECK(sink.bytes() == 3);
  REQUIRE(sink.begin(head_with_length(0)));
  CHECK(sink.bytes() == 0);
}
