#pragma once
// Drives a parser over one input fed in every way the tests care about, and records what it saw as
// owned copies, so that two runs can be compared with ==.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "guarded.hpp"
#include "parser_recorder.hpp"
#include "ringlab/http/parser.hpp"

namespace ringlab::http::test {

// Feeds each piece until it is consumed (pipelined messages make feed() stop early), then
// optionally finishes. `after_feed` runs after each piece is consumed.
template <class Parser, class Rec>
void feed_pieces(Parser& parser, Rec& recorder, const std::vector<std::string_view>& pieces, bool finish,
                 const std::function<void(std::size_t)>& after_feed = {}) {
  Outcome& outcome = recorder.outcome;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::string_view piece = pieces[i];
    recorder.fed = piece;
    do {
      auto consumed = parser.feed(piece, recorder);
      if (!consumed) return record_error(outcome, consumed.error());
      // No progress on bytes that are left would loop forever; it is a bug in itself.
      if (*consumed == 0 && !piece.empty()) {
        FAIL_CHECK("feed() consumed nothing of a non-empty piece");
        return;
      }
      piece.remove_prefix(*consumed);
      recorder.fed = piece;
    } while (!piece.empty());
    if (after_feed) after_feed(i);
  }
  if (finish) {
    if (auto status = parser.finish(recorder); !status) record_error(outcome, status.error());
  }
}

// The ways one input is cut and placed in memory. Every placement puts each buffer flush against a
// guard page.
enum class Cut {
  whole,              // one buffer, one feed
  bytewise,           // one buffer, fed one byte at a time (fragments adjacent in memory)
  split_adjacent,     // every split into two feeds, both from one buffer
  split_apart,        // every split into two feeds from two separate buffers (the scratch path)
  bytewise_apart,     // every byte in a buffer of its own
  reused_detach,      // every byte written into the same one-byte buffer, detach() after each feed
};

inline const char* cut_name(Cut cut) {
  switch (cut) {
    case Cut::whole: return "whole";
    case Cut::bytewise: return "byte by byte";
    case Cut::split_adjacent: return "split in two, adjacent";
    case Cut::split_apart: return "split in two, separate buffers";
    case Cut::bytewise_apart: return "byte by byte, separate buffers";
    case Cut::reused_detach: return "byte by byte, one reused buffer with detach()";
  }
  return "?";
}

inline constexpr Cut kAllCuts[] = {Cut::whole,       Cut::bytewise,       Cut::split_adjacent,
                                   Cut::split_apart, Cut::bytewise_apart, Cut::reused_detach};

template <class Parser>
using Setup = std::function<void(Parser&)>;

// Runs `input` through a fresh parser for every cut (and every split point) and checks that each
// run gives `expected`; returns the number of runs. When `expected.at` is empty the error position
// is not compared: a position found by a callback depends on where the fragment it saw ended.
template <class Parser, class Rec>
std::size_t check_every_cut(std::string_view input, const Outcome& expected, bool finish, const ParserLimits& limits,
                            const Setup<Parser>& setup = {}) {
  std::size_t runs = 0;
  auto run = [&](Cut cut, std::size_t split, auto&& body) {
    Parser parser(limits);
    if (setup) setup(parser);
    Rec recorder;
    body(parser, recorder);
    if (!expected.at) recorder.outcome.at.reset();
    INFO("cut: " << std::string(cut_name(cut)) << ", split at " << split);
    CHECK(recorder.outcome == expected);
    ++runs;
  };
  for (Cut cut : kAllCuts) {
    switch (cut) {
      case Cut::whole: {
        run(cut, 0, [&](Parser& p, Rec& r) {
          Guarded buffer(input);
          feed_pieces(p, r, {buffer.view()}, finish);
        });
        break;
      }
      case Cut::bytewise: {
        run(cut, 1, [&](Parser& p, Rec& r) {
          Guarded buffer(input);
          std::vector<std::string_view> pieces;
          for (std::size_t i = 0; i < input.size(); ++i) pieces.push_back(buffer.view().substr(i, 1));
          feed_pieces(p, r, pieces, finish);
        });
        break;
      }
      case Cut::split_adjacent:
      case Cut::split_apart: {
        for (std::size_t at = 0; at <= input.size(); ++at) {
          run(cut, at, [&](Parser& p, Rec& r) {
            if (cut == Cut::split_adjacent) {
              Guarded buffer(input);
              feed_pieces(p, r, {buffer.view().substr(0, at), buffer.view().substr(at)}, finish);
            } else {
              Guarded first(input.substr(0, at));
              Guarded second(input.substr(at));
              feed_pieces(p, r, {first.view(), second.view()}, finish);
            }
          });
        }
        break;
      }
      case Cut::bytewise_apart: {
        run(cut, 1, [&](Parser& p, Rec& r) {
          std::vector<Guarded> buffers;
          buffers.reserve(input.size());
          std::vector<std::string_view> pieces;
          for (std::size_t i = 0; i < input.size(); ++i) pieces.push_back(buffers.emplace_back(input.substr(i, 1)).view());
          feed_pieces(p, r, pieces, finish);
        });
        break;
      }
      case Cut::reused_detach: {
        run(cut, 1, [&](Parser& p, Rec& r) {
          Guarded buffer(std::string_view("?"));
          std::vector<std::string_view> pieces(input.size(), buffer.view());
          // The byte for feed i is written just before it (by the previous after_feed), and the
          // buffer is scribbled on after each feed: a view the parser kept would read '#'.
          if (!input.empty()) buffer.data()[0] = input[0];
          feed_pieces(p, r, pieces, finish, [&](std::size_t i) {
            if (auto status = p.detach(); !status) FAIL_CHECK("detach failed: " << status.error().message());
            buffer.data()[0] = i + 1 < input.size() ? input[i + 1] : '#';
          });
        });
        break;
      }
    }
  }
  return runs;
}

}  // namespace ringlab::http::test
