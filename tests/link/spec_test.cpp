// LinkSpec: the profiles, every key, its limits, and canonical text that reads back the same.
#include "ringlab/link/spec.hpp"

#include <doctest/doctest.h>

using ringlab::link::LinkSpec;
using ringlab::link::parse_link_spec;
using namespace std::chrono_literals;

TEST_CASE("the profiles are what the help says") {
  const auto loopback = parse_link_spec("loopback");
  REQUIRE(loopback);
  CHECK_FALSE(loopback->emulated());
  CHECK(loopback->canonical() == "loopback");

  const auto ten = parse_link_spec("10g");
  REQUIRE(ten);
  CHECK(ten->emulated());
  CHECK(ten->rate_bits_per_second == 10'000'000'000ULL);
  CHECK(ten->delay == 25us);
  CHECK(ten->mtu == 1500);
  CHECK(ten->loss == 0);
  CHECK(ten->gso_enabled());
  CHECK(ten->configured_rtt() == 50us);

  const auto one = parse_link_spec("1g");
  REQUIRE(one);
  CHECK(one->rate_bits_per_second == 1'000'000'000ULL);
  CHECK(one->delay == 100us);

  const auto wan = parse_link_spec("wan");
  REQUIRE(wan);
  CHECK(wan->rate_bits_per_second == 100'000'000ULL);
  CHECK(wan->delay == 10ms);
  CHECK(wan->loss == doctest::Approx(0.0001));
  CHECK_FALSE(wan->gso_enabled());  // loss is drawn per packet
  CHECK(wan->describe().find("100 Mbit/s, 10 ms one-way, 0.01% loss, MTU 1500, GSO off") != std::string::npos);
}

TEST_CASE("settings, units and a profile with a setting changed") {
  const auto spec = parse_link_spec("rate=2.5gbit,delay=1.5ms,jitter=100us,loss=0.5%,mtu=9000,queue=4m,gso=on,seed=7");
  REQUIRE(spec);
  CHECK(spec->profile == "custom");
  CHECK(spec->rate_bits_per_second == 2'500'000'000ULL);
  CHECK(spec->delay == 1500us);
  CHECK(spec->jitter == 100us);
  CHECK(spec->loss == doctest::Approx(0.005));
  CHECK(spec->mtu == 9000);
  CHECK(spec->queue_bytes == 4u << 20);
  CHECK(spec->gso_enabled());
  CHECK(spec->seed == 7);

  CHECK(parse_link_spec("rate=10g,delay=0")->rate_bits_per_second == 10'000'000'000ULL);
  CHECK(parse_link_spec("rate=100m,delay=2s")->delay == 2s);
  CHECK(parse_link_spec("rate=0,delay=10ns")->rate_bits_per_second == 0);
  CHECK(parse_link_spec("loss=0.001")->loss == doctest::Approx(0.001));

  const auto changed = parse_link_spec("1g,loss=1%");
  REQUIRE(changed);
  CHECK(changed->profile == "1g+");
  CHECK(changed->delay == 100us);
  CHECK(changed->loss == doctest::Approx(0.01));
}

TEST_CASE("canonical text reads back to the same spec") {
  for (const char* text : {"10g", "1g", "wan", "rate=3mbit,delay=7ms,jitter=1ms,loss=2%,mtu=1400,queue=65536,gso=off,seed=3",
                           "rate=1500kbit,delay=250ns"}) {
    const auto spec = parse_link_spec(text);
    REQUIRE_MESSAGE(spec, text);
    const auto again = parse_link_spec(spec->canonical());
    REQUIRE_MESSAGE(again, spec->canonical());
    CHECK(again->rate_bits_per_second == spec->rate_bits_per_second);
    CHECK(again->delay == spec->delay);
    CHECK(again->jitter == spec->jitter);
    CHECK(again->loss == doctest::Approx(spec->loss));
    CHECK(again->mtu == spec->mtu);
    CHECK(again->queue_limit() == spec->queue_limit());
    CHECK(again->gso_enabled() == spec->gso_enabled());
    CHECK(again->seed == spec->seed);
  }
}

TEST_CASE("the queue's default: 1000 frames, or twice the bandwidth-delay product when that is more") {
  CHECK(parse_link_spec("1g")->queue_limit() == 1000u * 1514);
  CHECK(parse_link_spec("rate=1mbit,delay=1ms,mtu=576")->queue_limit() == 1000u * 590);
  // 100 Mbit/s and 100 ms each way: the BDP is 2.5 MB, twice that 5 MB.
  CHECK(parse_link_spec("rate=100mbit,delay=100ms")->queue_limit() == 5'000'000u);
  CHECK(parse_link_spec("rate=1mbit,delay=1ms,queue=10k")->queue_limit() == 10240u);
}

TEST_CASE("every key refuses what is out of range, naming the item") {
  const auto refused = [](const char* text, const char* needle) {
    const auto spec = parse_link_spec(text);
    REQUIRE_MESSAGE(!spec, text);
    INFO(spec.error());
    CHECK(spec.error().find(needle) != std::string::npos);
  };
  refused("", "empty");
  refused("5g", "'5g' is not a profile");
  refused("rate=fast", "rate 'fast'");
  refused("rate=500", "rate '500'");            // below 1 kbit/s
  refused("rate=401gbit", "rate '401gbit'");    // above 400 Gbit/s
  refused("rate=10gbyte", "rate '10gbyte'");
  refused("delay=5", "delay '5'");              // no unit
  refused("delay=11s", "delay '11s'");
  refused("jitter=2ms,delay=1ms", "jitter must not exceed delay");
  refused("loss=100%", "loss '100%'");
  refused("loss=-1%", "loss '-1%'");
  refused("mtu=575", "mtu '575'");
  refused("mtu=65001", "mtu '65001'");
  refused("queue=0", "queue '0'");
  refused("queue=2g", "queue '2g'");
  refused("gso=maybe", "gso 'maybe'");
  refused("seed=x", "seed 'x'");
  refused("colour=blue", "unknown key 'colour'");
  refused("1g,,loss=1%", "empty item");
  refused("loopback,delay=1ms", "loopback takes no settings");
  refused("delay=1ms,1g", "'1g' is not a profile");  // a profile only comes first
}
