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
std::unique_ptr<Strategy> make_single_enter();
std::unique_ptr<Strategy> make_presized_fresh();
std::unique_ptr<Strategy> make_views();
std::unique_ptr<Strategy> make_three_fields();
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
// GET, peers built on client libraries (library_peer.hpp)
std::unique_ptr<Strategy> make_libcurl_multi();
std::unique_ptr<Strategy> make_cpp_httplib();
std::unique_ptr<Strategy> make_beast();
std::unique_ptr<Strategy> make_cpprest();
std::unique_ptr<Strategy> make_curlpp();
// GET, reference rows (floors.cpp)
std::unique_ptr<Strategy> make_floor_transfer();
std::unique_ptr<Strategy> make_floor_parse();
// POST /echo
std::unique_ptr<Strategy> make_send_copy();
std::unique_ptr<Strategy> make_writev();
std::unique_ptr<Strategy> make_send_zc();
// GET /proxy, N per op (proxy.cpp)
std::unique_ptr<Strategy> make_proxy_pooled();
std::unique_ptr<Strategy> make_proxy_fresh();
std::unique_ptr<Strategy> make_proxy_pooled_body();
std::unique_ptr<Strategy> make_proxy_fresh_body();
// POST /echo, peers built on client libraries
std::unique_ptr<Strategy> make_libcurl_multi_post();
std::unique_ptr<Strategy> make_cpp_httplib_post();
std::unique_ptr<Strategy> make_beast_post();
std::unique_ptr<Strategy> make_cpprest_post();
std::unique_ptr<Strategy> make_curlpp_post();
// POST of one small object to /echo?chunked=1, read as a string (echo.cpp), and the peers' echo rows
std::unique_ptr<Strategy> make_echo();
std::unique_ptr<Strategy> make_echo_fresh();
std::unique_ptr<Strategy> make_libcurl_echo();
std::unique_ptr<Strategy> make_libcurl_multi_echo();
std::unique_ptr<Strategy> make_cpp_httplib_echo();
std::unique_ptr<Strategy> make_beast_echo();
std::unique_ptr<Strategy> make_cpprest_echo();
std::unique_ptr<Strategy> make_curlpp_echo();

}  // namespace ringlab::strategies::detail
