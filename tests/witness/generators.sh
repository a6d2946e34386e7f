#!/usr/bin/env bash
# `proofline witness build` and `witness calc` on the fixture circuits
# (tests/fixtures/circuits), compiled by the repository's circom2:
#   1. medium (BN254) with circom's assembly field code (when nasm and an
#      ADX/BMI2 CPU are there) and with --no_asm, small on BLS12-381: each
#      fixture input's witness is byte-identical to `snarkjs wtns calculate`;
#   2. bad inputs exit 1 naming the file and the signal (missing, extra,
#      wrong array length, not a field element) or circom's failed assert;
#   3. build errors name the problem (not circom's output, no nasm for fr.asm).
#
#   generators.sh PROOFLINE REPO_ROOT WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fx=$repo/tests/fixtures

compile_circom "$fx/circuits/medium.circom" medium asm
compile_circom "$fx/circuits/medium.circom" medium noasm --no_asm
compile_circom "$fx/circuits/small.circom" small bls -p bls12381
[ -f asm/medium_cpp/fr.asm ] && [ ! -f noasm/medium_cpp/fr.asm ] || fail "circom's --no_asm output holds fr.asm"

if command -v nasm >/dev/null && grep -qw adx /proc/cpuinfo && grep -qw bmi2 /proc/cpuinfo; then
  "$proofline" witness build asm/medium_cpp -o medium-asm.so -j 2 2>build-asm.log ||
    { cat build-asm.log >&2; fail "witness build (assembly) failed"; }
  grep -q "field code: circom's x86-64 assembly" build-asm.log || fail "build does not say it uses the assembly"
  for i in 0 1 2; do same_witness medium-asm.so asm/medium_js/medium.wasm "$fx/bn254/medium/input_$i.json"; done
  "$proofline" witness build bls/small_cpp -o small-bls.so -j 2 2>build-bls.log ||
    { cat build-bls.log >&2; fail "witness build (BLS12-381) failed"; }
else
  echo "note: no nasm or no ADX/BMI2: the assembly route is checked by its refusal only"
  "$proofline" witness build bls/small_cpp -o small-bls.so -j 2 2>build-bls.log && fail "built fr.asm without nasm/ADX"
  compile_circom "$fx/circuits/small.circom" small bls -p bls12381 --no_asm
  "$proofline" witness build bls/small_cpp -o small-bls.so -j 2 2>build-bls.log ||
    { cat build-bls.log >&2; fail "witness build (BLS12-381, --no_asm) failed"; }
fi
"$proofline" witness info small-bls.so | grep -q "BLS12-381" || fail "witness info does not say BLS12-381"
for i in 0 1 2 3; do same_witness small-bls.so bls/small_js/small.wasm "$fx/bls12_381/small/input_$i.json"; done

start=$(date +%s.%N)
"$proofline" witness build noasm/medium_cpp -o medium.so -j 2 2>build-noasm.log ||
  { cat build-noasm.log >&2; fail "witness build (--no_asm) failed"; }
grep -q "field code: circom's --no_asm C++" build-noasm.log || fail "build does not say it uses --no_asm code"
echo "ok: --no_asm build of medium in $(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo '?') s"
"$proofline" witness info medium.so | grep -q "data \[8\]" || fail "witness info does not name data[8] (from medium.sym)"
for i in 0 1 2; do same_witness medium.so noasm/medium_js/medium.wasm "$fx/bn254/medium/input_$i.json"; done

# 2. bad inputs, each naming the file and the signal
python3 - "$fx/bn254/medium/input_0.json" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
def write(name, **change):
    d = dict(base)
    for k, v in change.items():
        if v is None: del d[k]
        else: d[k] = v
    json.dump(d, open(name + ".json", "w"))
write("assert_data0", data=["0"] + base["data"][1:])
write("missing_key", key=None)
write("extra_signal", extra=1)
write("short_data", data=base["data"][:7])
write("not_a_number", key="12z")
write("fraction", limit=1.5)
write("js_forms", key="-5", limit="0x64", seed=[True, 2])   # BigInt() forms snarkjs accepts
PY
calc_fails medium.so assert_data0.json "assert_data0.json: the circuit rejects the input (medium.so): Failed assert in template/function Medium"
calc_fails medium.so missing_key.json 'missing_key.json: input signal "key" not given'
calc_fails medium.so extra_signal.json 'extra_signal.json: signal "extra" is not an input of the circuit'
calc_fails medium.so short_data.json "short_data.json: signal \"data\": 7 values, the circuit's input has 8"
calc_fails medium.so not_a_number.json 'not_a_number.json: signal "key": "12z" is not an integer'
calc_fails medium.so fraction.json 'fraction.json: signal "limit": 1.5 is not an integer'
same_witness medium.so noasm/medium_js/medium.wasm js_forms.json
echo '{"seed": [1, 2' >broken.json
calc_fails medium.so broken.json "broken.json: not valid JSON"
calc_fails "$fx/bn254/medium/circuit.zkey" "$fx/bn254/medium/input_0.json" "cannot load the witness generator"

# 3. build errors
set +e
"$proofline" witness build "$fx/bn254" >nodir.log 2>&1; rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "not a directory \`circom --c\` wrote\|.dat files" nodir.log || { cat nodir.log >&2; fail "build of a non-circom directory: rc $rc"; }
set +e
PATH=/nonexistent "$proofline" witness build asm/medium_cpp -o x.so --nasm /nonexistent/nasm >nonasm.log 2>&1; rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "needs nasm, which was not found at /nonexistent/nasm" nonasm.log &&
  grep -q "circom --c --no_asm" nonasm.log || { cat nonasm.log >&2; fail "fr.asm without nasm: rc $rc"; }
[ ! -e x.so ] || fail "a refused build wrote x.so"
echo "generators: all checks passed"
