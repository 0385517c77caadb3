// Fuzz target: the response parser (the client's), whole against split (whole_vs_split.hpp). One
// bit of the input's hash says whether the response answers a HEAD (expect_no_body).
#include "whole_vs_split.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringlab;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool head = (fuzz::hash_of(input) >> 63) != 0;
  fuzz::compare_whole_and_split<http::ResponseParser, http::test::ResponseRecorder>(
      input, [head](http::ResponseParser& parser) { parser.expect_no_body(head); });
  return 0;
}
