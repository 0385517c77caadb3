// Fuzz target: the request parser (the server's), whole against split (whole_vs_split.hpp).
#include "whole_vs_split.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringlab;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  fuzz::compare_whole_and_split<http::RequestParser, http::test::RequestRecorder>(input, [](http::RequestParser&) {});
  return 0;
}
