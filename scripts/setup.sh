#!/usr/bin/env bash
# Installs everything proofline needs to build and test, and nothing else:
# Debian packages for the toolchain and libraries, and the pinned npm tools
# (snarkjs, circom2) the tests use as oracles, and the source of CAF 0.17.6
# (Debian's source package, SHA-256 checked) that the TSan tests build with
# ThreadSanitizer (docs/RELIABILITY.md, Sanitizers). Safe to run again: it
# installs and fetches only what is missing.
#
#   scripts/setup.sh            # libraries, toolchain, npm tools, CAF source
#   scripts/setup.sh --no-npm   # skip the npm tools (build only)
#   scripts/setup.sh --no-caf-source   # skip CAF's source (no TSan tests)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
want_npm=1
want_caf=1
for arg in "$@"; do
  case "$arg" in
    --no-npm) want_npm=0 ;;
    --no-caf-source) want_caf=0 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config git
  libcaf-dev              # CAF 0.17.6: actors, io (network), openssl
  libjemalloc-dev         # per-actor arenas
  nlohmann-json3-dev      # job files, proof.json, reports
  libcli11-dev            # command line
  libfmt-dev              # text formatting (base/text.hpp; spdlog uses it too)
  libspdlog-dev           # structured logs
  libssl-dev              # TLS through CAF's OpenSSL module
  libsqlite3-dev          # serve --state: the job journal
  openssl                 # tests: certificates for the TLS network test
  doctest-dev             # tests
  libgmp-dev              # tests: independent oracle for field arithmetic
  chromium                # tests: renders the HTML report headless
  systemd                 # tests: systemd-analyze checks the packaged unit (e2e_install)
  python3                 # tests: checks of outputs, raw-byte network peers
  clang libclang-rt-14-dev  # tests: libFuzzer targets with ASan and UBSan (scripts/fuzz.sh),
                            # and the ASan+UBSan build of the tests (scripts/sanitize.sh)
  ninja-build             # tests: builds the sanitizer build (scripts/sanitize.sh)
  golang-go               # tests: builds the Go example over cgo (examples/go, rapidsnark's ABI)
  nasm                    # witness build: circom's assembly field code (fr.asm), and its tests
)
if [ "$want_npm" = 1 ] && ! command -v node >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: Debian packages present"
fi

if [ "$want_npm" = 1 ]; then
  cd "$here"
  # npm ci installs exactly what package-lock.json pins; skip it when the
  # installed tree is newer than the lock file.
  if [ ! -x node_modules/.bin/snarkjs ] || [ ! -x node_modules/.bin/circom2 ] ||
     [ ! -d node_modules/circomlib/circuits ] ||
     [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing pinned npm tools (snarkjs, circom2, circomlib)"
    npm ci --no-audit --no-fund --loglevel=error
  else
    echo "setup: npm tools present"
  fi
fi
if [ "$want_caf" = 1 ]; then
  "$here/scripts/build-caf-tsan.sh" --fetch "$here/.deps"
fi
echo "setup: done"
