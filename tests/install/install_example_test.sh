#!/usr/bin/env bash
# install_example_test.sh BUILD_DIR SOURCE_DIR WORK_DIR CXX BUILD_TYPE (tests/install/CMakeLists.txt)
set -euo pipefail
build=$1 source=$2 work=$3 cxx=$4 build_type=$5
rm -rf "$work"
mkdir -p "$work"
fail() { echo "install_example: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
for f in lib/cmake/ringlab/ringlabConfig.cmake include/ringlab/strategies/strategy.hpp include/ringlab/bench/app/cli.hpp \
         lib/libringlab_bench_core.a lib/libringlab_bench_app.a lib/libringlab_strategies.a bin/server bin/bench; do
  [ -e "$work/prefix/$f" ] || fail "not installed: $f"
done

# Only the prefix: nothing of the source tree but the example's own folder.
cmake -S "$source/examples/my_strategy" -B "$work/example" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "configuring the example against the prefix failed"; }
cmake --build "$work/example" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the example failed"; }

export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}print_suppressions=0"
status=0
"$work/example/my_bench" get --filter 'string_copy,my_strategy' --sizes 10 --server "$work/prefix/bin/server" \
  --iteration-time 5 --warmup 1 --iterations 3 --max-iterations 3 --format md --out "$work/results" \
  >"$work/table.txt" 2>"$work/stderr.txt" || status=$?
cat "$work/table.txt"
[ "$status" -eq 0 ] || { cat "$work/stderr.txt"; fail "my_bench exited $status"; }
# A row of the console table: name, size, then a median in a time unit (a failed case says FAILED).
grep -Eq '^\| my_strategy +\| +10 +\| +[0-9.,]+ (ns|μs|ms) +\|' "$work/table.txt" \
  || fail "no measured my_strategy row in the table"
grep -Eq '^\| string_copy +\| +10 +\| +[0-9.,]+ (ns|μs|ms) +\|' "$work/table.txt" \
  || fail "no measured string_copy row in the table"
echo "install_example: my_strategy built against the installed tree and measured by its bench"
