#!/usr/bin/env bash
# Builds a sanitizer build of proofline's tests (CPU only, no jemalloc; see
# cmake/Sanitizers.cmake) in a directory of its own and runs a subset of the
# tests in it. docs/RELIABILITY.md says which subsets and why.
#
#   scripts/sanitize.sh address|thread [--build-dir DIR] [--full]
#                       [--build-only | --test NAME] [--caf-prefix DIR]
#
#   address   ASan + UBSan: unit (base_tests, messages_tests), actor
#             (actors_tests, net_actor_tests) and library (lib_api_tests,
#             rapidsnark_abi_tests) tests; with --full also
#             jobs_tests, the proofline binary and the e2e tests run_jobs,
#             broken_jobs and self_check
#   thread    TSan: actors_tests, net_actor_tests and lib_api_tests; with --full also the
#             proofline binary and the net tests control and cancel
#   --build-dir   default build-sanitize-<kind> (-caf with --caf-prefix)
#   --full        the larger subsets above
#   --build-only  configure and build the subset, run nothing
#   --test NAME   run one test of the subset in an existing build, build
#                 nothing (CTest's sanitize_* entries run each test so)
#   --caf-prefix DIR  link CAF from DIR (an install prefix of CAF 0.17.6
#                 built with the same sanitizer, scripts/build-caf-tsan.sh)
#                 instead of the system's (not with --full); a TSan run then
#                 suppresses nothing (tests/sanitize/tsan.supp is for runs
#                 against Debian's uninstrumented CAF)
#
# The build uses clang++ when it is installed (it compiles this code at -O0
# in about half of g++'s time), else the default compiler; CXX overrides.
# A report from a sanitizer fails the test it happened in (halt_on_error).
# UBSan and TSan read tests/sanitize/ubsan.supp and tsan.supp, whose every
# entry says why it is there. Exit 0 when every test of the subset passed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=""
build=""
full=0
mode=all
only=""
caf_prefix=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    address|thread) kind=$1; shift ;;
    --build-dir) build=$2; shift 2 ;;
    --full) full=1; shift ;;
    --build-only) mode=build; shift ;;
    --test) mode=test; only=$2; shift 2 ;;
    --caf-prefix) caf_prefix=$(cd "$2" && pwd); shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$kind" ] || { echo "usage: scripts/sanitize.sh address|thread [--build-dir DIR] [--full] [--build-only | --test NAME] [--caf-prefix DIR]" >&2; exit 2; }
[ -n "$build" ] || build=$root/build-sanitize-$kind${caf_prefix:+-caf}

case "$kind" in
  address)
    targets=(base_tests messages_tests actors_tests net_actor_tests lib_api_tests rapidsnark_abi_tests)
    tests=(base_tests messages_tests actors_tests net_actor_tests lib_api_tests rapidsnark_abi_tests)
    if [ "$full" = 1 ]; then
      targets+=(jobs_tests proofline)
      tests+=(jobs_tests e2e_run_jobs e2e_broken_jobs e2e_self_check)
    fi
    ;;
  thread)
    targets=(actors_tests net_actor_tests lib_api_tests)
    tests=(actors_tests net_actor_tests lib_api_tests)
    if [ "$full" = 1 ]; then
      targets+=(proofline net_probe)
      tests+=(net_control net_cancel)
    fi
    ;;
esac

# detect_leaks: every test binary must free what it allocates.
# abort_on_error/halt_on_error: the first report fails the test.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$root/tests/sanitize/ubsan.supp"
# tsan.supp is only for runs against Debian's uninstrumented CAF; against a
# CAF built with TSan (--caf-prefix) nothing is suppressed.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
[ -n "$caf_prefix" ] || TSAN_OPTIONS+=":suppressions=$root/tests/sanitize/tsan.supp"

if [ "$mode" = test ]; then
  case " ${tests[*]} " in
    *" $only "*) ;;
    *) echo "sanitize.sh: $only is not in the $kind subset (${tests[*]})" >&2; exit 2 ;;
  esac
  [ -f "$build/CTestTestfile.cmake" ] ||
    { echo "sanitize.sh: $build is not built; run scripts/sanitize.sh $kind --build-only first" >&2; exit 1; }
  exec ctest --test-dir "$build" -R "^$only\$" --output-on-failure --no-tests=error
fi

config=(-DPROOFLINE_SANITIZE="$kind" -DPROOFLINE_CUDA=OFF
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="")
cxx=${CXX:-$(command -v clang++ || true)}
[ -n "$cxx" ] && config+=(-DCMAKE_CXX_COMPILER="$cxx")
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && config+=(-G Ninja)
command -v ccache >/dev/null 2>&1 && config+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ -n "$caf_prefix" ]; then
  # CAF's core and io from the prefix. Its OpenSSL module is not built there
  # (CAF::openssl stays the system's, which only the proofline binary and
  # net_probe link), so --full cannot go with it.
  [ "$full" = 1 ] && { echo "sanitize.sh: --caf-prefix builds CAF without OpenSSL; it does not go with --full" >&2; exit 2; }
  for lib in core io; do
    [ -f "$caf_prefix/lib/libcaf_$lib.so" ] ||
      { echo "sanitize.sh: $caf_prefix/lib/libcaf_$lib.so missing (scripts/build-caf-tsan.sh makes it)" >&2; exit 1; }
  done
  config+=(-DCAF_INCLUDE_DIR="$caf_prefix/include" -DCAF_CORE_LIBRARY="$caf_prefix/lib/libcaf_core.so"
           -DCAF_IO_LIBRARY="$caf_prefix/lib/libcaf_io.so")
fi

start=$(date +%s)
mkdir -p "$build"
# Optimisation and debug levels come from cmake/Sanitizers.cmake (per kind).
cmake -S "$root" -B "$build" "${config[@]}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; echo "sanitize.sh: configuring $build failed" >&2; exit 1; }
if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >"$build/build.log" 2>&1; then
  grep -E -B2 -A8 'error|Error' "$build/build.log" | head -60 >&2
  echo "sanitize.sh: the $kind build failed; whole log: $build/build.log" >&2
  exit 1
fi
built=$(date +%s)
echo "sanitize $kind: built ${targets[*]} in $build in $((built - start)) s"
[ "$mode" = build ] && exit 0
rc=0
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
ctest --test-dir "$build" -R "$regex" --output-on-failure || rc=$?
done_at=$(date +%s)
echo "sanitize $kind: build $((built - start)) s, tests $((done_at - built)) s, rc $rc"
exit "$rc"
