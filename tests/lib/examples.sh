#!/usr/bin/env bash
# The library's examples and the Python package, built and run against the
# build tree's libproofline, each proof checked with snarkjs.
#
#   examples.sh LIB_DIR INCLUDE_DIR REPO_ROOT WORK_DIR c|go|python
#
# c: examples/c/prove.c against libproofline (its own C API). go:
# examples/go over cgo against librapidsnark.so (rapidsnark's ABI), built
# offline with Debian's Go; exit 77 (skipped) without a go command. python:
# python/tests with the package in python/.
set -euo pipefail
lib=$1 include=$2 repo=$3 work=$4 which=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
ex=$repo/examples
export PROOFLINE_OPTIONS='{"backend": "cpu", "cpu-threads": 2, "memory-budget": "2G"}'
export LD_LIBRARY_PATH=$lib

case "$which" in
  c)
    cc -std=c11 -Wall -Wextra -Werror -I"$include" "$ex/c/prove.c" -L"$lib" -lproofline -o prove
    ./prove "$ex/circuit.zkey" "$ex"/witness_{0,1,2,3}.wtns > out 2> err ||
      { cat err >&2; fail "examples/c/prove failed"; }
    [ "$(grep -c 'proved on cpu:0' out)" = 4 ] || fail "expected 4 proofs: $(cat out)"
    [ ! -s err ] || fail "the library printed on stderr: $(cat err)"
    "$repo/scripts/verify-proofs.sh" "$ex/verification_key.json" . || fail "snarkjs rejected a proof"
    ;;
  go)
    command -v go > /dev/null || { echo "SKIP: no go command (scripts/setup.sh installs golang-go)"; exit 77; }
    cp -r "$ex/go" src
    (cd src && GOFLAGS=-mod=mod GOPROXY=off GOCACHE=$work/gocache CGO_ENABLED=1 \
       CGO_CFLAGS="-I$include" CGO_LDFLAGS="-L$lib" go build -o "$work/prove" .) ||
      fail "go build of examples/go failed"
    readelf -d prove | grep -q 'NEEDED.*librapidsnark.so\|NEEDED.*libproofline.so' ||
      fail "the Go binary does not link the rapidsnark ABI's library"
    for i in 0 3; do
      ./prove "$ex/circuit.zkey" "$ex/witness_$i.wtns" "proof_$i.json" "public_$i.json" 2> err ||
        { cat err >&2; fail "examples/go failed on witness $i"; }
    done
    "$repo/scripts/verify-proofs.sh" "$ex/verification_key.json" . || fail "snarkjs rejected a proof"
    ;;
  python)
    PROOFLINE_LIBRARY=$lib/libproofline.so python3 -m unittest discover -s "$repo/python/tests" -v ||
      fail "python/tests failed"
    ;;
  *) echo "usage: examples.sh LIB_DIR INCLUDE_DIR REPO_ROOT WORK_DIR c|go|python" >&2; exit 2 ;;
esac
echo "examples: $which passed"
