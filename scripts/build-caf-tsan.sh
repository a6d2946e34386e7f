#!/usr/bin/env bash
# Builds CAF 0.17.6's libcaf_core and libcaf_io with ThreadSanitizer and
# installs them under PREFIX, for `scripts/sanitize.sh thread --caf-prefix
# PREFIX` (docs/RELIABILITY.md, Sanitizers). Debian's libcaf is not
# instrumented, so TSan cannot see CAF's own synchronisation and reports every
# hand-off between actors as a race; against this build it sees them.
#
#   scripts/build-caf-tsan.sh CAF_SOURCE PREFIX
#
#   CAF_SOURCE  a checkout of CAF at tag 0.17.6 (the version Debian ships and
#               proofline is built against), e.g.
#               git clone -b 0.17.6 https://github.com/actor-framework/actor-framework
#   PREFIX      where to install (include/ and lib/)
#
# Same compiler choice as scripts/sanitize.sh (clang++ when installed, CXX
# overrides), -O1 -g, the build configuration of Debian's package (log level
# QUIET, memory management on), no examples, tools, tests, OpenSSL, OpenCL or
# Python: about 180 files of CAF.
set -euo pipefail

[ "$#" -eq 2 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
prefix=$(cd "$2" && pwd)
grep -q '^#define CAF_VERSION 1706' "$src/libcaf_core/caf/config.hpp" ||
  { echo "build-caf-tsan.sh: $src is not CAF 0.17.6" >&2; exit 1; }

# CAF 0.17.6's receive_buffer.hpp uses std::numeric_limits without including
# <limits>, which GCC 12's libstdc++ no longer brings in through <memory>;
# Debian's package carries the same one-line fix.
rb=$src/libcaf_io/caf/io/network/receive_buffer.hpp
grep -q '#include <limits>' "$rb" || sed -i 's|^#include <cstring>$|#include <cstring>\n#include <limits>|' "$rb"

cxx=${CXX:-$(command -v clang++ || command -v c++)}
build=$prefix/build
cmake -S "$src" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-std=c++17 -fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCAF_LOG_LEVEL=QUIET -DCAF_NO_AUTO_LIBCPP=ON \
  -DCAF_NO_EXAMPLES=ON -DCAF_NO_TOOLS=ON -DCAF_NO_UNIT_TESTS=ON -DCAF_NO_OPENSSL=ON \
  -DCAF_NO_OPENCL=ON -DCAF_NO_PYTHON=ON -DCAF_NO_SUMMARY=ON \
  >"$prefix/configure.log" 2>&1
cmake --build "$build" -j"$(nproc)" >"$prefix/build.log" 2>&1 ||
  { tail -n 30 "$prefix/build.log" >&2; echo "build-caf-tsan.sh: the build failed; whole log: $prefix/build.log" >&2; exit 1; }
cmake --install "$build" >"$prefix/install.log"
echo "build-caf-tsan.sh: CAF 0.17.6 with TSan in $prefix"
