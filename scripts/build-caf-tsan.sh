#!/usr/bin/env bash
# CAF 0.17.6 built with ThreadSanitizer, for the TSan tests
# (docs/RELIABILITY.md, Sanitizers). Debian's libcaf is not instrumented, so
# TSan cannot see CAF's own synchronisation and reports every hand-off
# between actors as a race; against this build it sees them.
#
#   scripts/build-caf-tsan.sh --fetch DEPS
#   scripts/build-caf-tsan.sh [CAF_SOURCE] PREFIX
#
#   --fetch DEPS  fetches the source of CAF 0.17.6 (the orig tarball of
#               Debian's source package actor-framework 0.17.6-2.1, the CAF
#               that Debian ships and proofline is built against; its
#               SHA-256 is checked) and unpacks it as
#               DEPS/actor-framework-0.17.6. apt-get does the download, with
#               an index of its own under DEPS/apt: deb-src entries made
#               from this machine's Debian entries in /etc/apt, so the
#               system's apt setup is left alone. Does nothing when the
#               source is there. scripts/setup.sh runs this.
#   CAF_SOURCE  a source tree of CAF 0.17.6 (default: the one --fetch
#               unpacks into the repository's .deps)
#   PREFIX      where to build and install (include/ and lib/); the build
#               directory is PREFIX/build
#
# Builds libcaf_core and libcaf_io only (no examples, tools, tests,
# OpenSSL, OpenCL or Python: proofline's TSan subset links nothing else),
# with the options of Debian's package (log level QUIET, memory management
# on), -fsanitize=thread -O1 and line tables only (-g1: a report still names
# every frame's function, file and line, inlined frames included), as a
# unity build (16 of CAF's source files per translation unit;
# tests/sanitize/caf-unity.cmake keeps out the one file that clashes), with
# clang++ when installed (CXX overrides), Ninja and ccache when installed.
# Building again in the same PREFIX redoes only what changed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=0.17.6
deb_version=0.17.6-2.1
tarball=actor-framework_$version.orig.tar.gz
sha256=e2bf5bd243f08bb7d8adde197cfe3e6d71314ed3378fe0692f8932f4c3b3928c

fetch() {
  local deps=$1 src=$1/actor-framework-$version apt=$1/apt
  if [ -f "$src/.proofline-sha256" ] && [ "$(cat "$src/.proofline-sha256")" = "$sha256" ]; then
    echo "setup: CAF $version source present ($src)"
    return 0
  fi
  echo "setup: fetching CAF $version source (Debian source package actor-framework $deb_version)"
  command -v apt-get >/dev/null 2>&1 ||
    { echo "build-caf-tsan.sh: apt-get not found; cannot fetch CAF $version's source" >&2; return 1; }
  rm -rf "$apt" "$src"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$apt/download"
  # deb-src twins of the machine's Debian entries (one-line and deb822 files).
  local f n=0
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >"$apt/parts/src$n.list"
    n=$((n + 1))
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt/parts/src$n.sources"
    n=$((n + 1))
  done
  local opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt/parts"
              -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
              -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=1 -qq)
  apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 || true
  if ! (cd "$apt/download" && apt-get "${opts[@]}" source --tar-only --download-only \
          "actor-framework=$deb_version" >"$apt/source.log" 2>&1); then
    cat "$apt/update.log" "$apt/source.log" >&2
    echo "build-caf-tsan.sh: could not fetch $tarball (Debian source package actor-framework $deb_version) through apt-get; the TSan tests need it" >&2
    return 1
  fi
  local got
  got=$(sha256sum "$apt/download/$tarball" | cut -d' ' -f1)
  if [ "$got" != "$sha256" ]; then
    echo "build-caf-tsan.sh: $tarball has SHA-256 $got, expected $sha256" >&2
    return 1
  fi
  tar -xzf "$apt/download/$tarball" -C "$deps"
  [ -d "$src/libcaf_core" ] ||
    { echo "build-caf-tsan.sh: $tarball did not unpack into $src" >&2; return 1; }
  echo "$sha256" >"$src/.proofline-sha256"
  rm -rf "$apt"
  echo "setup: CAF $version source in $src"
}

if [ "${1:-}" = "--fetch" ]; then
  [ "$#" -eq 2 ] || { sed -n '2,34p' "$0" >&2; exit 2; }
  mkdir -p "$2"
  fetch "$(cd "$2" && pwd)"
  exit
fi
case "$#" in
  1) src=$root/.deps/actor-framework-$version; out=$1 ;;
  2) src=$1; out=$2 ;;
  *) sed -n '2,34p' "$0" >&2; exit 2 ;;
esac
[ -d "$src" ] ||
  { echo "build-caf-tsan.sh: no CAF $version source at $src; scripts/setup.sh fetches it (scripts/build-caf-tsan.sh --fetch $root/.deps)" >&2; exit 1; }
src=$(cd "$src" && pwd)
mkdir -p "$out"
prefix=$(cd "$out" && pwd)
grep -q '^#define CAF_VERSION 1706' "$src/libcaf_core/caf/config.hpp" ||
  { echo "build-caf-tsan.sh: $src is not CAF $version" >&2; exit 1; }

# CAF 0.17.6's receive_buffer.hpp uses std::numeric_limits without including
# <limits>, which GCC 12's libstdc++ no longer brings in through <memory>;
# Debian's package carries the same one-line fix.
rb=$src/libcaf_io/caf/io/network/receive_buffer.hpp
grep -q '#include <limits>' "$rb" || sed -i 's|^#include <cstring>$|#include <cstring>\n#include <limits>|' "$rb"

cxx=${CXX:-$(command -v clang++ || command -v c++)}
build=$prefix/build
config=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo
        -DCMAKE_CXX_FLAGS="-std=c++17 -fsanitize=thread -fno-omit-frame-pointer"
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
        -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
        -DCMAKE_UNITY_BUILD="${PROOFLINE_CAF_UNITY:-ON}" -DCMAKE_UNITY_BUILD_BATCH_SIZE="${PROOFLINE_CAF_UNITY_BATCH:-16}"
        -DCMAKE_PROJECT_INCLUDE="$root/tests/sanitize/caf-unity.cmake"
        -DCMAKE_INSTALL_PREFIX="$prefix" -DCAF_LOG_LEVEL=QUIET -DCAF_NO_AUTO_LIBCPP=ON
        -DCAF_NO_EXAMPLES=ON -DCAF_NO_TOOLS=ON -DCAF_NO_UNIT_TESTS=ON -DCAF_NO_OPENSSL=ON
        -DCAF_NO_OPENCL=ON -DCAF_NO_PYTHON=ON -DCAF_NO_SUMMARY=ON)
command -v ninja >/dev/null 2>&1 && [ ! -f "$build/Makefile" ] && config+=(-G Ninja)
command -v ccache >/dev/null 2>&1 && config+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$build" "${config[@]}" >"$prefix/configure.log" 2>&1 ||
  { cat "$prefix/configure.log" >&2; echo "build-caf-tsan.sh: configuring CAF failed" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$prefix/build.log" 2>&1 ||
  { grep -E -B2 -A8 'error' "$prefix/build.log" | head -60 >&2; echo "build-caf-tsan.sh: the build failed; whole log: $prefix/build.log" >&2; exit 1; }
cmake --install "$build" >"$prefix/install.log"
echo "build-caf-tsan.sh: CAF $version with TSan in $prefix"
