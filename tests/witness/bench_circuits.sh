#!/usr/bin/env bash
# The circom circuits of bench/circuits (SHA-256 of 512 bits, a Merkle path
# of depth 8 with MiMCSponge), against circomlib: `proofline witness build`
# of each, witnesses byte-identical to `snarkjs wtns calculate` for several
# inputs, and a proof of each from its input (`proofline prove --input`, key
# from `proofline setup --dev --r1cs`) that snarkjs verifies. circomlib comes
# from the repository's node_modules (package.json pins it) or
# $PROOFLINE_CIRCOMLIB (a node_modules directory); without it the test is
# skipped (exit 77). Building the SHA-256 generator takes about 10 s on 2 cores.
#
#   bench_circuits.sh PROOFLINE REPO_ROOT WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
lib=${PROOFLINE_CIRCOMLIB:-$repo/node_modules}
if [ ! -d "$lib/circomlib/circuits" ]; then
  echo "skip: no circomlib in $lib (scripts/setup.sh installs it; or set PROOFLINE_CIRCOMLIB)"
  exit 77
fi
# circom2 (WASI) reads only below the working directory: a copy of circomlib.
mkdir -p lib && cp -r "$lib/circomlib" lib/

for name in sha256 merkle; do
  compile_circom "$repo/bench/circuits/$name.circom" "$name" "c-$name" -l lib --r1cs
  start=$(date +%s)
  "$proofline" witness build "c-$name/${name}_cpp" -o "$name.so" -j 2 2>"build-$name.log" ||
    { cat "build-$name.log" >&2; fail "witness build of $name failed"; }
  echo "ok: $name: witness build in $(( $(date +%s) - start )) s"
  python3 - "$name" <<'PY'
import json, random, sys
name = sys.argv[1]
for i in range(3):
    rng = random.Random(30 + i)
    if name == "sha256":
        d = {"in": [rng.randrange(2) for _ in range(512)]}
    else:
        d = {"leaf": str(rng.randrange(1 << 200)), "sib": [str(rng.randrange(1 << 200)) for _ in range(8)],
             "bits": [rng.randrange(2) for _ in range(8)]}
    json.dump(d, open(f"{name}_input_{i}.json", "w"))
PY
  for i in 0 1 2; do same_witness "$name.so" "c-$name/${name}_js/$name.wasm" "${name}_input_$i.json"; done
  "$proofline" setup --dev --r1cs "c-$name/$name.r1cs" --seed 30 --threads 2 --backend cpu --out "k-$name" \
    --log-level warn >/dev/null 2>&1 || fail "setup --dev for $name"
  "$proofline" prove --input "${name}_input_0.json" --witness-generator "$name.so" "k-$name/circuit.zkey" \
    "proof-$name.json" "public-$name.json" --backend cpu --cpu-threads 2 -q || fail "prove --input ($name)"
  "$snarkjs" groth16 verify "k-$name/verification_key.json" "public-$name.json" "proof-$name.json" >/dev/null ||
    fail "snarkjs rejects the $name proof"
  echo "ok: $name: proof from the input verified by snarkjs"
done
# A Merkle input whose path bit is not 0 or 1 breaks the circuit's assert.
python3 -c "
import json; d = json.load(open('merkle_input_0.json')); d['bits'][3] = 2; json.dump(d, open('bad_bits.json', 'w'))"
calc_fails merkle.so bad_bits.json "bad_bits.json: the circuit rejects the input (merkle.so): Failed assert in template/function Merkle"
echo "bench_circuits: all checks passed"
