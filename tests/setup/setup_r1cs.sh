#!/usr/bin/env bash
# `proofline setup --dev --r1cs FILE` on real circom circuits, end to end:
#   1. the fixture circuits compiled by the repository's circom2: medium
#      for BN254, small for BLS12-381 (tests/fixtures/circuits); setup writes a key for each
#      (curve taken from the file), which snarkjs's own prover and verifier
#      accept, and `proofline prove` with a witness from the circuit's wasm
#      gives a proof that snarkjs accepts, with the public signals snarkjs
#      computes;
#   2. usage errors exit 2 naming the problem: --constraints beside --r1cs,
#      a --curve the file contradicts, a file that is not an .r1cs, a
#      truncated one, a missing one; none creates its output directory.
#
#   setup_r1cs.sh PROOFLINE REPO_ROOT WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -x "$circom" ] || fail "$circom: not installed (run scripts/setup.sh)"

for curve in bn254 bls12_381; do
  case $curve in bn254) prime=bn128 name=medium ;; bls12_381) prime=bls12381 name=small ;; esac
  # circom2 (WASI) sees only the working directory: compile a copy from here.
  cp "$repo/tests/fixtures/circuits/$name.circom" circuit.circom
  mkdir -p "c-$curve"
  "$circom" circuit.circom --r1cs --wasm -p "$prime" -o "c-$curve" >"circom-$curve.log" 2>&1 ||
    { cat "circom-$curve.log" >&2; fail "circom2 failed for $curve"; }
  fx=$repo/tests/fixtures/$curve/$name
  [ -f "$fx/input_0.json" ] || fail "$fx/input_0.json: fixture missing"

  "$proofline" setup --dev --r1cs "c-$curve/circuit.r1cs" --seed 7 --threads 2 --backend cpu \
    --out "k-$curve" >"setup-$curve.log" 2>&1 ||
    { cat "setup-$curve.log" >&2; fail "setup --r1cs for $curve failed"; }
  grep -q "INSECURE" "k-$curve/README.txt" || fail "k-$curve/README.txt does not say INSECURE"
  grep -q -- "--curve $curve --r1cs" "k-$curve/README.txt" ||
    fail "k-$curve/README.txt does not name the curve read from the file"
  [ ! -e "k-$curve/jobs.json" ] && ! ls "k-$curve"/*.wtns >/dev/null 2>&1 ||
    fail "setup --r1cs wrote witnesses or a jobs.json"

  "$snarkjs" wtns calculate "c-$curve/circuit_js/circuit.wasm" "$fx/input_0.json" "w-$curve.wtns" >/dev/null
  "$proofline" prove "k-$curve/circuit.zkey" "w-$curve.wtns" "proof-$curve.json" "public-$curve.json" \
    --backend cpu --cpu-threads 2 >"prove-$curve.log" 2>&1 ||
    { cat "prove-$curve.log" >&2; fail "proofline prove with the --r1cs key failed ($curve)"; }
  "$snarkjs" groth16 verify "k-$curve/verification_key.json" "public-$curve.json" "proof-$curve.json" \
    >/dev/null || fail "snarkjs rejects proofline's proof for the --r1cs key ($curve)"
  # snarkjs proves with the key too: it is a well-formed snarkjs key.
  "$snarkjs" groth16 prove "k-$curve/circuit.zkey" "w-$curve.wtns" "sj-proof-$curve.json" \
    "sj-public-$curve.json" >/dev/null
  "$snarkjs" groth16 verify "k-$curve/verification_key.json" "sj-public-$curve.json" \
    "sj-proof-$curve.json" >/dev/null || fail "snarkjs rejects its own proof with the --r1cs key ($curve)"
  python3 - "public-$curve.json" "sj-public-$curve.json" <<'PY' || fail "$curve: public signals differ from snarkjs's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b and len(a) > 0 else 1)
PY
  echo "ok: $curve: setup --r1cs, proofline prove, snarkjs prove and verify"
done

usage "--r1cs takes the circuit from the file" --dev --r1cs c-bn254/circuit.r1cs --constraints 10 --out u1
usage "is a bls12_381 circuit" --dev --r1cs c-bls12_381/circuit.r1cs --curve bn254 --out u1
usage "circuit.circom: not a r1cs file" --dev --r1cs circuit.circom --out u1
head -c 200 c-bn254/circuit.r1cs >truncated.r1cs
usage "truncated.r1cs" --dev --r1cs truncated.r1cs --out u1
usage "missing.r1cs: cannot open" --dev --r1cs missing.r1cs --out u1
[ ! -e u1 ] || fail "a refused setup created u1"
echo "setup_r1cs: all checks passed"
