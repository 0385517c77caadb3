#pragma once
// The factory of each strategy, one per source file of the same name; registry.cpp lists them.
#include <memory>

#include "ringlab/strategies/strategy.hpp"

namespace ringlab::strategies::detail {

// GET, through ringlab's stack
std::unique_ptr<Strategy> make_string_copy();
std::unique_ptr<Strategy> make_exact_string();
std::unique_ptr<Strategy> make_buffered_stream();
std::unique_ptr<Strategy> make_presized();
std::unique_ptr<Strategy> make_presized_fresh();
std::unique_ptr<Strategy> make_views();
std::unique_ptr<Strategy> make_arena();
std::unique_ptr<Strategy> make_arena_pool();
std::unique_ptr<Strategy> make_mimalloc_heap();
std::unique_ptr<Strategy> make_provided_buffers();
std::unique_ptr<Strategy> make_fixed_buffers();
std::unique_ptr<Strategy> make_streaming();
std::unique_ptr<Strategy> make_streaming_array();
std::unique_ptr<Strategy> make_chunked();
std::unique_ptr<Strategy> make_fresh_connection();
std::unique_ptr<Strategy> make_nlohmann();
std::unique_ptr<Strategy> make_rapidjson();
// GET, peers
std::unique_ptr<Strategy> make_libcurl();
std::unique_ptr<Strategy> make_blocking_sockets();
std::unique_ptr<Strategy> make_epoll();
// GET, reference rows (floors.cpp)
std::unique_ptr<Strategy> make_floor_transfer();
std::unique_ptr<Strategy> make_floor_parse();
// POST /echo
std::unique_ptr<Strategy> make_send_copy();
std::unique_ptr<Strategy> make_writev();
std::unique_ptr<Strategy> make_send_zc();

}  // namespace ringlab::strategies::detail
