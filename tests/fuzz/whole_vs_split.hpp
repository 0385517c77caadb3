#pragma once
// What the parser fuzz targets share: an input is parsed whole, then cut into pieces that each live
// in their own heap allocation (freed right after its feed and detach(), as the server gives its
// receive buffers back), and the two outcomes must be equal: the parser promises that a message
// split anywhere parses the same (parser.hpp). A difference, or a body piece that does not point
// into the buffer being fed, aborts: a finding. Error positions are not compared (a position found
// by a callback depends on where its fragment ended; see tests/http/parser_harness.hpp), their
// kind and text are.
//
// The cut points come from a hash of the input (cuts.hpp), so a mutation of the bytes also moves the cuts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "cuts.hpp"
#include "parser_recorder.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::fuzz {

// Small limits, so that the limit paths are reached by short inputs.
inline constexpr http::ParserLimits kLimits{.max_header_bytes = 1024, .max_body_bytes = 4096};

// Feeds one piece until it is consumed (pipelined messages stop feed() early); false once the
// parser reported an error (recorded).
template <class Parser, class Rec>
bool feed_piece(Parser& parser, Rec& recorder, std::string_view piece) {
  recorder.fed = piece;
  while (!piece.empty()) {
    auto consumed = parser.feed(piece, recorder);
    if (!consumed) {
      http::test::record_error(recorder.outcome, consumed.error());
      return false;
    }
    if (*consumed == 0) {
      std::fprintf(stderr, "feed() consumed nothing of a non-empty piece\n");
      std::abort();
    }
    piece.remove_prefix(*consumed);
    recorder.fed = piece;
  }
  return true;
}

// Parses `input` whole and split; aborts when the outcomes differ. `setup` runs on each new parser.
template <class Parser, class Rec, class Setup>
void compare_whole_and_split(std::string_view input, Setup&& setup) {
  std::vector<std::size_t> ends = cut_points(input);
  ends.push_back(input.size());
  auto run = [&](bool whole) {
    Parser parser(kLimits);
    setup(parser);
    Rec recorder;
    std::size_t start = 0;
    bool ok = true;
    for (std::size_t end : whole ? std::vector<std::size_t>{input.size()} : ends) {
      // Each piece in an allocation of exactly its size, so ASan sees any read past it, freed
      // after its feed (and detach(): nothing of it may be used afterwards).
      auto piece = std::make_unique<char[]>(end - start);
      if (end > start) std::memcpy(piece.get(), input.data() + start, end - start);
      ok = feed_piece(parser, recorder, std::string_view(piece.get(), end - start));
      if (ok) {
        if (auto status = parser.detach(); !status) {
          http::test::record_error(recorder.outcome, status.error());
          ok = false;
        }
      }
      start = end;
      if (!ok) break;
    }
    if (ok) {
      if (auto status = parser.finish(recorder); !status) http::test::record_error(recorder.outcome, status.error());
    }
    recorder.outcome.at.reset();
    return recorder.outcome;
  };
  const http::test::Outcome whole = run(true);
  const http::test::Outcome split = run(false);
  if (!(whole == split) || whole.body_outside_fed != 0 || split.body_outside_fed != 0) {
    std::cerr << "whole and split differ\n  whole: " << whole << "\n  split: " << split << "\n";
    std::abort();
  }
}

}  // namespace ringlab::fuzz
