#!/usr/bin/env bash
# From inputs to verified proofs (issue 30's benchmark): proofline computing
# witnesses in its synthesizers against rapidsnark fed by circom's own C++
# witness binary, and against snarkjs groth16 fullprove, on the same inputs
# and the same cores.
#
#   scripts/bench-witness.sh prepare [options]      (here: node, circom2, a C++ compiler, nasm)
#   scripts/bench-witness.sh run WORK [options]     (any host, the GPU host included)
#
# prepare writes WORK (default .carry/witness, git-ignored) with everything
# `run` needs, so the GPU host needs neither node nor nasm nor a compiler:
#   circuit.circom      SHA-256 over BITS message bits (circomlib's Sha256);
#                       BITS=16384 is 33 blocks, about 10^6 constraints
#   circuit.so          `proofline witness build` of circom --c's output
#   circuit-witness     circom's own C++ witness binary (its Makefile), with
#                       circuit-witness.dat beside it
#   circuit.zkey, verification_key.json   `proofline setup --dev --r1cs` (INSECURE, seeded)
#   circuit.wasm        for snarkjs fullprove
#   input_<i>.json      N random messages; jobs.json: one job naming them all
# Options: --bits BITS [BITS] (default 16384), --inputs N [INPUTS] (default
# 64), --work DIR [WORK], --proofline PATH [PROOFLINE] (default build/proofline),
# --no-key: leave circuit.zkey out and keep circuit.r1cs instead, for a
# folder that must travel small (a 10^6-constraint key is ~0.5 GB of
# incompressible points); `run` then makes the key with `proofline setup
# --dev` on the host it runs on, with the same seed, before timing anything.
# circomlib is installed into WORK/npm with npm the first time.
#
# run proves the N inputs three ways, each under taskset on cores 0..T-1
# (--threads T [THREADS], default every core), and prints one table:
#   proofline  `proofline run jobs.json` (witnesses computed by the
#              synthesizers, --synthesizers S [SYNTHESIZERS], default T), its
#              --report: wall time, proofs/s, GPU busy, the summary's
#              synthesis-wait line; --backend B [BACKEND] (default auto)
#   rapidsnark per input circuit-witness then rapidsnark's prover, as its
#              proverServer runs them (--rapidsnark PATH [RAPIDSNARK]; skipped
#              without it), on the first R inputs (--rapidsnark-inputs R
#              [RAPIDSNARK_INPUTS], default all), proofs/s from them
#   generator  the witness generator alone against circom's own witness
#              binary (the same code): the first W inputs (--witness-inputs W
#              [WITNESS_INPUTS], default 8; 0 skips it), one process per
#              witness each, on core 0; the witnesses must be byte-identical.
#              With the in-process figure from proofline's run (no process
#              per witness), this is the "at least circom's own binary" check
#   snarkjs    `snarkjs groth16 fullprove` on the first K inputs (--snarkjs-inputs
#              K [SNARKJS_INPUTS], default 4; skipped without node/snarkjs),
#              proofs/s extrapolated from them
# Every proof is checked with `proofline verify` (a pairing against
# verification_key.json) on the host, and with snarkjs too where node is
# there; WORK/out-* keep the proofs for `snarkjs groth16 verify` elsewhere.
#
# CPU check at a small size, here:
#   scripts/bench-witness.sh prepare --bits 448 --inputs 4 --work /tmp/bw &&
#     scripts/bench-witness.sh run /tmp/bw --backend cpu
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
shift || true
bits=${BITS:-16384}
inputs=${INPUTS:-64}
work=${WORK:-$root/.carry/witness}
proofline=${PROOFLINE:-$root/build/proofline}
threads=${THREADS:-$(nproc)}
synthesizers=${SYNTHESIZERS:-}
backend=${BACKEND:-auto}
rapidsnark=${RAPIDSNARK:-}
snarkjs_inputs=${SNARKJS_INPUTS:-4}
rapidsnark_inputs=${RAPIDSNARK_INPUTS:-0}
witness_inputs=${WITNESS_INPUTS:-8}
with_key=1
if [ "$mode" = run ]; then
  work=${1:?usage: bench-witness.sh run WORK [options]}
  shift
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --bits) bits=$2; shift 2 ;;
    --inputs) inputs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --proofline) proofline=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --synthesizers) synthesizers=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --rapidsnark) rapidsnark=$2; shift 2 ;;
    --snarkjs-inputs) snarkjs_inputs=$2; shift 2 ;;
    --rapidsnark-inputs) rapidsnark_inputs=$2; shift 2 ;;
    --witness-inputs) witness_inputs=$2; shift 2 ;;
    --no-key) with_key=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench-witness.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "bench-witness.sh: $*" >&2; exit 1; }
note() { echo "# $*" >&2; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$(now)"; }

make_key() {  # r1cs: circuit.zkey and verification_key.json in $work, INSECURE (--dev), seed 30
  local t0
  t0=$(now)
  rm -rf "$work/key"
  "$proofline" setup --dev --r1cs "$1" --seed 30 --backend cpu --out "$work/key" --log-level warn >/dev/null ||
    die "proofline setup --dev --r1cs $1 failed"
  mv "$work/key/circuit.zkey" "$work/key/verification_key.json" "$work/"
  note "proofline setup --dev: $(since "$t0") s"
}

prepare() {
  local circom=$root/node_modules/.bin/circom2 snarkjs=$root/node_modules/.bin/snarkjs
  [ -x "$circom" ] && [ -x "$snarkjs" ] || die "circom2/snarkjs not installed (scripts/setup.sh)"
  [ -x "$proofline" ] || die "$proofline is not an executable"
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
  if [ ! -d "$work/npm/node_modules/circomlib" ]; then
    note "installing circomlib into $work/npm"
    mkdir -p "$work/npm"
    (cd "$work/npm" && { [ -f package.json ] || npm init -y >/dev/null; } &&
      npm install --no-audit --no-fund circomlib@2.0.5 >/dev/null)
  fi
  cat >"$work/circuit.circom.new" <<EOF
// SHA-256 of a $bits-bit message (scripts/bench-witness.sh).
pragma circom 2.0.0;
include "circomlib/circuits/sha256/sha256.circom";
component main = Sha256($bits);
EOF
  local t0
  t0=$(now)
  mkdir -p "$work/build"
  if cmp -s "$work/circuit.circom.new" "$work/circuit.circom" && [ -f "$work/build/circuit.r1cs" ] &&
     [ -d "$work/build/circuit_cpp" ] && [ -f "$work/build/circuit_js/circuit.wasm" ]; then
    rm "$work/circuit.circom.new"
    note "circom: the outputs of this circuit are there already"
  else
    mv "$work/circuit.circom.new" "$work/circuit.circom"
    # No --sym: at 10^6 constraints its symbol table takes circom2's wasm
    # memory past 2 GiB, where circom2's file writes fail (RangeError).
    note "circom --c --r1cs --wasm (SHA-256 over $bits bits)"
    (cd "$work" && "$circom" circuit.circom --c --r1cs --wasm -l npm/node_modules -o build >build/circom.log 2>&1) ||
      { cat "$work/build/circom.log" >&2; die "circom2 failed"; }
    note "circom: $(since "$t0") s"
  fi
  t0=$(now)
  "$proofline" witness build "$work/build/circuit_cpp" -o "$work/circuit.so" 2>"$work/build/witness-build.log" ||
    { cat "$work/build/witness-build.log" >&2; die "witness build failed"; }
  note "proofline witness build: $(since "$t0") s on $(nproc) cores"
  t0=$(now)
  make -C "$work/build/circuit_cpp" -j"$(nproc)" >"$work/build/make.log" 2>&1 ||
    { tail -20 "$work/build/make.log" >&2; die "circom's own witness binary did not build (make)"; }
  cp "$work/build/circuit_cpp/circuit" "$work/circuit-witness"
  cp "$work/build/circuit_cpp/circuit.dat" "$work/circuit-witness.dat"
  note "circom's witness binary (make): $(since "$t0") s"
  cp "$work/build/circuit_js/circuit.wasm" "$work/circuit.wasm"
  if [ "$with_key" = 1 ]; then
    make_key "$work/build/circuit.r1cs"
  else
    cp "$work/build/circuit.r1cs" "$work/circuit.r1cs"
    rm -f "$work/circuit.zkey" "$work/verification_key.json"
  fi
  python3 - "$work" "$bits" "$inputs" <<'PY'
import json, random, sys
work, bits, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    rng = random.Random(3000 + i)
    json.dump({"in": [rng.randrange(2) for _ in range(bits)]}, open(f"{work}/input_{i}.json", "w"))
json.dump({"jobs": [{"id": "bench", "zkey": "circuit.zkey", "witness_generator": "circuit.so",
                     "inputs": [f"input_{i}.json" for i in range(n)], "out": "out-proofline"}]},
          open(f"{work}/jobs.json", "w"))
PY
  echo "$bits bits, $inputs inputs" >"$work/info.txt"
  note "prepared $work ($(du -sh "$work" | cut -f1)); next: scripts/bench-witness.sh run $work"
}

verify_dir() {  # dir prefix count: every proof in dir checked by pairing (and snarkjs if node is there)
  local dir=$1 n=$2 i
  for i in $(seq 0 $((n - 1))); do
    "$proofline" verify "$work/verification_key.json" "$dir/public_$i.json" "$dir/proof_$i.json" >/dev/null ||
      die "$dir/proof_$i.json does not verify"
    if [ -x "$root/node_modules/.bin/snarkjs" ] && command -v node >/dev/null; then
      "$root/node_modules/.bin/snarkjs" groth16 verify "$work/verification_key.json" "$dir/public_$i.json" \
        "$dir/proof_$i.json" >/dev/null || die "snarkjs rejects $dir/proof_$i.json"
    fi
  done
}

run() {
  [ -f "$work/jobs.json" ] || die "$work: no jobs.json (run prepare first)"
  work=$(cd "$work" && pwd)
  [ -x "$proofline" ] || proofline=$(command -v proofline || true)
  [ -n "$proofline" ] && [ -x "$proofline" ] || die "no proofline binary (--proofline PATH)"
  local n cores="0-$((threads - 1))" t0 rows=""
  if [ ! -f "$work/circuit.zkey" ]; then
    [ -f "$work/circuit.r1cs" ] || die "$work: neither circuit.zkey nor circuit.r1cs (run prepare first)"
    note "no circuit.zkey: making it from circuit.r1cs (untimed)"
    make_key "$work/circuit.r1cs"
  fi
  n=$(ls "$work"/input_*.json | wc -l)
  synthesizers=${synthesizers:-$threads}

  # proofline: one job of n inputs
  rm -rf "$work/out-proofline"
  t0=$(now)
  (cd "$work" && taskset -c "$cores" "$proofline" run jobs.json --backend "$backend" --cpu-threads "$threads" \
    --synthesizers "$synthesizers" --report report-proofline.json >run-proofline.log 2>&1) ||
    { cat "$work/run-proofline.log" >&2; die "proofline run failed"; }
  local pl_s
  pl_s=$(since "$t0")
  verify_dir "$work/out-proofline" "$n"
  rows+="proofline run ($backend, $synthesizers synthesizers)|$n|$pl_s\n"
  grep "^witness generation:" "$work/run-proofline.log" >&2 || true
  python3 - "$work/report-proofline.json" >&2 <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
for g in r.get("gpus", r.get("backends", [])):
    if isinstance(g, dict) and "busy" in g: print(f"# {g.get('name', 'backend')}: busy {100 * g['busy']:.1f}%")
w = r.get("stages", {}).get("witness")
if w: print(f"# witness generation: {w['count']} witnesses, p50 {w['p50_ms']:.1f} ms, p99 {w['p99_ms']:.1f} ms")
PY

  # The generator alone against circom's own binary, one core, one process
  # per witness each; their witnesses must agree byte for byte.
  local wn=$((witness_inputs < n ? witness_inputs : n))
  if [ "$wn" -gt 0 ] && [ -x "$work/circuit-witness" ]; then
    rm -rf "$work/out-witness"
    mkdir -p "$work/out-witness"
    local i cw_s pw_s
    t0=$(now)
    for i in $(seq 0 $((wn - 1))); do
      (cd "$work" && taskset -c 0 ./circuit-witness "input_$i.json" "out-witness/circom_$i.wtns" >/dev/null)
    done
    cw_s=$(since "$t0")
    t0=$(now)
    for i in $(seq 0 $((wn - 1))); do
      taskset -c 0 "$proofline" witness calc "$work/circuit.so" "$work/input_$i.json" \
        "$work/out-witness/proofline_$i.wtns" >/dev/null
    done
    pw_s=$(since "$t0")
    for i in $(seq 0 $((wn - 1))); do
      cmp -s "$work/out-witness/circom_$i.wtns" "$work/out-witness/proofline_$i.wtns" ||
        die "witness $i: proofline witness calc and circom's binary disagree"
    done
    note "generator alone, $wn inputs on core 0, one process each: circom's binary $cw_s s," \
      "proofline witness calc $pw_s s ($(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$cw_s" "$pw_s")x); witnesses byte-identical"
  fi

  # rapidsnark with circom's own witness binary, per input as proverServer does
  if [ -n "$rapidsnark" ]; then
    [ -x "$rapidsnark" ] || die "$rapidsnark is not an executable"
    local r=$n
    [ "$rapidsnark_inputs" -gt 0 ] && [ "$rapidsnark_inputs" -lt "$n" ] && r=$rapidsnark_inputs
    rm -rf "$work/out-rapidsnark"
    mkdir -p "$work/out-rapidsnark"
    t0=$(now)
    for i in $(seq 0 $((r - 1))); do
      taskset -c "$cores" "$work/circuit-witness" "$work/input_$i.json" "$work/out-rapidsnark/w.wtns"
      OMP_NUM_THREADS=$threads taskset -c "$cores" "$rapidsnark" "$work/circuit.zkey" "$work/out-rapidsnark/w.wtns" \
        "$work/out-rapidsnark/proof_$i.json" "$work/out-rapidsnark/public_$i.json"
    done
    local rs_s
    rs_s=$(since "$t0")
    verify_dir "$work/out-rapidsnark" "$r"
    rows+="circom witness binary + rapidsnark|$r|$rs_s\n"
  else
    note "rapidsnark: skipped (no --rapidsnark)"
  fi

  # snarkjs fullprove on the first K inputs
  if [ -x "$root/node_modules/.bin/snarkjs" ] && command -v node >/dev/null && [ "$snarkjs_inputs" -gt 0 ]; then
    local k=$((snarkjs_inputs < n ? snarkjs_inputs : n))
    mkdir -p "$work/out-snarkjs"
    t0=$(now)
    for i in $(seq 0 $((k - 1))); do
      taskset -c "$cores" "$root/node_modules/.bin/snarkjs" groth16 fullprove "$work/input_$i.json" \
        "$work/circuit.wasm" "$work/circuit.zkey" "$work/out-snarkjs/proof_$i.json" \
        "$work/out-snarkjs/public_$i.json" >/dev/null
    done
    local sj_s
    sj_s=$(since "$t0")
    verify_dir "$work/out-snarkjs" "$k"
    rows+="snarkjs groth16 fullprove|$k|$sj_s\n"
  else
    note "snarkjs: skipped (no node or snarkjs here)"
  fi

  echo "# $(cat "$work/info.txt"), $threads cores ($cores), $(date -u +%FT%TZ)"
  printf "%-44s %7s %10s %10s\n" "prover (inputs to verified proofs)" "proofs" "wall s" "proofs/s"
  printf "$rows" | while IFS='|' read -r name count secs; do
    printf "%-44s %7s %10s %10s\n" "$name" "$count" "$secs" \
      "$(python3 -c "import sys; print(f'{int(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$count" "$secs")"
  done
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: bench-witness.sh prepare|run ... (see --help)" >&2; exit 2 ;;
esac
