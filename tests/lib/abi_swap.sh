#!/usr/bin/env bash
# A program built against rapidsnark's ABI runs on proofline unchanged.
#
#   abi_swap.sh CLIENT STUB_DIR PROOFLINE_LIB_DIR FIXTURES_DIR REPO_ROOT WORK_DIR
#
# CLIENT was linked with -lrapidsnark against the stand-in in STUB_DIR (it
# refuses to prove). Run with LD_LIBRARY_PATH=STUB_DIR it fails; run with
# LD_LIBRARY_PATH=PROOFLINE_LIB_DIR, where librapidsnark.so is proofline's
# library, the same binary proves both fixture curves, snarkjs verifies the
# proofs, and nothing but the client's own words reaches stdout or stderr.
set -euo pipefail
client=$1 stub=$2 lib=$3 fixtures=$4 repo=$5 work=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"

readelf -d "$client" | grep -q 'NEEDED.*\[librapidsnark.so\]' ||
  fail "$client does not need librapidsnark.so"
key=$fixtures/bn254/small
if LD_LIBRARY_PATH=$stub "$client" "$key/circuit.zkey" "$key/witness_0.wtns" p.json q.json \
     2> stub.err; then
  fail "the stand-in proved"
fi
grep -q "stand-in librapidsnark" stub.err || fail "the stand-in was not the library loaded"

for curve in bn254 bls12_381; do
  key=$fixtures/$curve/small
  mkdir -p "$curve"
  PROOFLINE_OPTIONS='{"backend": "cpu", "cpu-threads": 2}' LD_LIBRARY_PATH=$lib \
    "$client" "$key/circuit.zkey" "$key/witness_2.wtns" "$curve/proof.json" "$curve/public.json" \
    > "$curve/out" 2> "$curve/err" || { cat "$curve/err" >&2; fail "$curve: the client failed on proofline"; }
  [ ! -s "$curve/out" ] && [ ! -s "$curve/err" ] ||
    fail "$curve: the library printed: $(cat "$curve/out" "$curve/err")"
  "$repo/scripts/verify-proofs.sh" "$key/verification_key.json" "$curve" ||
    fail "$curve: snarkjs rejected the proof"
done
echo "abi_swap: the client built against the stand-in proved on proofline's librapidsnark.so"
