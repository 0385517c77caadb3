#pragma once
// RINGLAB_FOR_EACH_MEMBER(F, x, y, a, b, c) is the statements `F(x, y, a); F(x, y, b); F(x, y, c)` (the
// caller's semicolon ends the last): a list of member names written once, for code that names each member
// and a key made of its name alike (report_fields.hpp: report.json's keys; compare.cpp: the comparability
// keys). Internal to bench/src/core; at most 256 members.
//
// The preprocessor does not loop: RINGLAB_MEMBERS_EXPAND rescans the list 256 times, each rescan taking
// one member more. RINGLAB_MEMBERS_AGAIN is named only once a rescan begins, so that it is expanded again
// (a macro is not expanded within its own expansion).
#define RINGLAB_FOR_EACH_MEMBER(F, x, y, ...) \
  __VA_OPT__(RINGLAB_MEMBERS_EXPAND(RINGLAB_MEMBERS_STEP(F, x, y, __VA_ARGS__)))
#define RINGLAB_MEMBERS_STEP(F, x, y, member, ...) \
  F(x, y, member) __VA_OPT__(; RINGLAB_MEMBERS_AGAIN RINGLAB_MEMBERS_PARENS(F, x, y, __VA_ARGS__))
#define RINGLAB_MEMBERS_AGAIN() RINGLAB_MEMBERS_STEP
#define RINGLAB_MEMBERS_PARENS ()
#define RINGLAB_MEMBERS_EXPAND(...) \
  RINGLAB_MEMBERS_EXPAND3(RINGLAB_MEMBERS_EXPAND3(RINGLAB_MEMBERS_EXPAND3(RINGLAB_MEMBERS_EXPAND3(__VA_ARGS__))))
#define RINGLAB_MEMBERS_EXPAND3(...) \
  RINGLAB_MEMBERS_EXPAND2(RINGLAB_MEMBERS_EXPAND2(RINGLAB_MEMBERS_EXPAND2(RINGLAB_MEMBERS_EXPAND2(__VA_ARGS__))))
#define RINGLAB_MEMBERS_EXPAND2(...) \
  RINGLAB_MEMBERS_EXPAND1(RINGLAB_MEMBERS_EXPAND1(RINGLAB_MEMBERS_EXPAND1(RINGLAB_MEMBERS_EXPAND1(__VA_ARGS__))))
#define RINGLAB_MEMBERS_EXPAND1(...) \
  RINGLAB_MEMBERS_EXPAND0(RINGLAB_MEMBERS_EXPAND0(RINGLAB_MEMBERS_EXPAND0(RINGLAB_MEMBERS_EXPAND0(__VA_ARGS__))))
#define RINGLAB_MEMBERS_EXPAND0(...) __VA_ARGS__
