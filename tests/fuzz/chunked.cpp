// Fuzz target: chunked decoding. The input is the body after a fixed chunked head, of a response
// or of a request (one bit of the input's hash picks which), parsed whole against split.
#include <string>

#include "whole_vs_split.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringlab;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  if ((fuzz::hash_of(body) >> 63) != 0) {
    const std::string input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(body);
    fuzz::compare_whole_and_split<http::ResponseParser, http::test::ResponseRecorder>(input,
                                                                                     [](http::ResponseParser&) {});
  } else {
    const std::string input = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(body);
    fuzz::compare_whole_and_split<http::RequestParser, http::test::RequestRecorder>(input,
                                                                                   [](http::RequestParser&) {});
  }
  return 0;
}
