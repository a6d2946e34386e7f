#!/usr/bin/env bash
# proofline's CPU backend against rapidsnark's prover, on the same cores and
# the same inputs (issue 14's CPU table).
#
#   scripts/bench-cpu-rapidsnark.sh --rapidsnark /path/to/rapidsnark/prover
#
# Options (environment variables in brackets):
#   --rapidsnark PATH  rapidsnark's `prover` binary [RAPIDSNARK]; required
#   --proofline PATH   proofline binary [PROOFLINE]; default build/proofline
#   --work DIR         fixtures and outputs [WORK]; default /tmp/proofline-cpu-bench
#                      (kept between runs: fixtures are made once)
#   --runs N           runs per measurement, medians reported [RUNS]; default 5
#   --threads T        threads (and cores, with taskset) for both [THREADS];
#                      default every core
#   --circuits LIST    comma-separated subset of sha256,merkle,syn16,syn18,syn20
#                      [CIRCUITS]; default all
#   --batch K          proofs in proofline's batched job [BATCH]; default 8
#
# For each circuit, N times, in alternating order (so slow drifts of the
# machine's load hit both): rapidsnark proves witness 0 (one process: key
# read + proof), proofline proves witness 0 (`proofline prove`, likewise),
# and proofline proves K witnesses in one job (`proofline run --backend cpu`,
# time / K). Both run under `taskset` on cores 0..T-1, rapidsnark with
# OMP_NUM_THREADS=T, proofline with --cpu-threads T. Reported: median wall
# seconds per proof, median CPU seconds (user + sys) per proof, and
# proofline ÷ rapidsnark on wall time. A proof of each prover on each circuit
# is checked with `snarkjs groth16 verify` (a failure stops the script).
#
# Fixtures (made once under WORK): sha256 and merkle from bench/circuits/
# compiled with the repository's circom2 against circomlib (npm install into
# WORK, so the npm registry must be reachable the first time), keyed by
# `proofline setup --dev --r1cs` (seeded, INSECURE, seconds), witnesses by
# the circuits' wasm through snarkjs; syn16/18/20 by `proofline setup --dev`
# (seeded; 2^20 takes minutes).
#
# Needs node and the repository's node_modules (snarkjs, circom2), python3,
# taskset. Takes about RUNS x (3 + 8 + 60) s on 2 cores with every circuit.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rapidsnark=${RAPIDSNARK:-}
proofline=${PROOFLINE:-$root/build/proofline}
work=${WORK:-/tmp/proofline-cpu-bench}
runs=${RUNS:-5}
threads=${THREADS:-$(nproc)}
circuits=${CIRCUITS:-sha256,merkle,syn16,syn18,syn20}
batch=${BATCH:-8}
while [ $# -gt 0 ]; do
  case "$1" in
    --rapidsnark) rapidsnark=$2; shift 2 ;;
    --proofline) proofline=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --circuits) circuits=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench-cpu-rapidsnark.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "bench-cpu-rapidsnark.sh: $*" >&2; exit 1; }
[ -n "$rapidsnark" ] || die "--rapidsnark PATH (rapidsnark's prover binary) is required"
[ -x "$rapidsnark" ] || die "$rapidsnark is not an executable"
[ -x "$proofline" ] || die "$proofline is not an executable (build it: cmake --build build --target proofline)"
snarkjs=$root/node_modules/.bin/snarkjs
circom=$root/node_modules/.bin/circom2
[ -x "$snarkjs" ] || die "$snarkjs not found; run npm ci in $root"
cores="0-$((threads - 1))"
mkdir -p "$work"

# ---- fixtures -----------------------------------------------------------------

make_circom() {  # name: WORK/<name>/ with circuit.zkey, verification_key.json, witness_<i>.wtns
  local name=$1 dir=$work/$1
  [ -f "$dir/witness_$((batch - 1)).wtns" ] && [ -f "$dir/circuit.zkey" ] && return
  [ -x "$circom" ] || die "$circom not found; run npm ci in $root"
  mkdir -p "$dir"
  if [ ! -d "$work/npm/node_modules/circomlib" ]; then
    echo "# installing circomlib into $work/npm" >&2
    mkdir -p "$work/npm"
    (cd "$work/npm" && { [ -f package.json ] || npm init -y >/dev/null; } &&
      npm install --no-audit --no-fund circomlib >/dev/null)
  fi
  echo "# $name: compile, setup, $batch witnesses" >&2
  # circom2 runs in a WASI sandbox that sees the working directory only:
  # compile a copy from inside WORK with relative paths.
  cp "$root/bench/circuits/$name.circom" "$work/$name.circom"
  (cd "$work" && "$circom" "$name.circom" --r1cs --wasm -l npm/node_modules -o "$name" >/dev/null)
  # The key: proofline's development setup of the circuit (seconds; snarkjs's
  # groth16 setup of the same circuit takes most of an hour on 2 cores).
  # Both provers read the same .zkey.
  rm -rf "$dir/key"
  "$proofline" setup --dev --r1cs "$dir/$name.r1cs" --seed 14 --backend cpu --out "$dir/key" \
    --log-level warn >/dev/null
  mv "$dir/key/circuit.zkey" "$dir/key/verification_key.json" "$dir/"
  for i in $(seq 0 $((batch - 1))); do
    python3 - "$name" "$i" > "$dir/input_$i.json" <<'EOF'
import json, random, sys
name, i = sys.argv[1], int(sys.argv[2])
rng = random.Random(1000 + i)
if name == "sha256":
    print(json.dumps({"in": [rng.randrange(2) for _ in range(512)]}))
else:
    print(json.dumps({"leaf": str(rng.randrange(1 << 200)),
                      "sib": [str(rng.randrange(1 << 200)) for _ in range(8)],
                      "bits": [rng.randrange(2) for _ in range(8)]}))
EOF
    "$snarkjs" wtns calculate "$dir/${name}_js/$name.wasm" "$dir/input_$i.json" "$dir/witness_$i.wtns" >/dev/null
  done
}

make_synthetic() {  # syn<log>: a random R1CS with a 2^log domain
  local name=$1 log=${1#syn} dir=$work/$1
  [ -f "$dir/witness_$((batch - 1)).wtns" ] && [ -f "$dir/circuit.zkey" ] && return
  echo "# $name: proofline setup --dev, $batch witnesses" >&2
  "$proofline" setup --dev --curve bn254 --constraints $(((1 << log) - 2)) --witnesses "$batch" \
    --seed "$log" --out "$dir" --force --log-level warn >/dev/null
}

write_job() {  # dir: jobs file proving the batch's witnesses in one job
  local dir=$1
  python3 - "$dir" "$batch" > "$dir/bench_job.json" <<'EOF'
import json, sys
d, k = sys.argv[1], int(sys.argv[2])
print(json.dumps({"jobs": [{"id": "bench", "zkey": d + "/circuit.zkey",
                            "witnesses": [f"{d}/witness_{i}.wtns" for i in range(k)],
                            "out": d + "/out-batch"}]}))
EOF
}

IFS=, read -r -a list <<< "$circuits"
for c in "${list[@]}"; do
  case "$c" in
    sha256|merkle) make_circom "$c" ;;
    syn16|syn18|syn20) make_synthetic "$c" ;;
    *) die "unknown circuit $c (sha256, merkle, syn16, syn18, syn20)" ;;
  esac
  write_job "$work/$c"
done

# ---- measurements ---------------------------------------------------------------

results=$work/results.tsv
: > "$results"
timed() {  # label circuit divisor command...: appends "circuit label wall cpu" per proof
  local label=$1 circuit=$2 div=$3 e u s; shift 3
  if ! /usr/bin/time -f '%e %U %S' -o "$work/last.time" taskset -c "$cores" "$@" \
      >"$work/last.out" 2>&1; then
    cat "$work/last.out" >&2
    die "$label on $circuit failed: $*"
  fi
  read -r e u s < <(tail -1 "$work/last.time")
  awk -v c="$circuit" -v l="$label" -v e="$e" -v u="$u" -v s="$s" -v k="$div" \
    'BEGIN { printf "%s\t%s\t%.4f\t%.4f\n", c, l, e / k, (u + s) / k }' >> "$results"
}

echo "# $runs runs, $threads threads on cores $cores; $(uptime | sed 's/.*load/load/')" >&2
for run in $(seq 1 "$runs"); do
  for c in "${list[@]}"; do
    d=$work/$c
    rs() { timed rapidsnark "$c" 1 env OMP_NUM_THREADS="$threads" "$rapidsnark" "$d/circuit.zkey" "$d/witness_0.wtns" "$d/rs_proof.json" "$d/rs_public.json"; }
    pl() { timed proofline "$c" 1 "$proofline" prove "$d/circuit.zkey" "$d/witness_0.wtns" "$d/pl_proof.json" "$d/pl_public.json" --backend cpu --cpu-threads "$threads" --log-level error; }
    pb() { rm -rf "$d/out-batch"; timed "proofline_x$batch" "$c" "$batch" "$proofline" run "$d/bench_job.json" --backend cpu --cpu-threads "$threads" --log-level error; }
    if [ $((run % 2)) -eq 1 ]; then rs; pl; pb; else pb; pl; rs; fi
    echo "# run $run/$runs $c done" >&2
  done
done

for c in "${list[@]}"; do
  d=$work/$c
  for who in rs pl; do
    "$snarkjs" groth16 verify "$d/verification_key.json" "$d/${who}_public.json" "$d/${who}_proof.json" 2>&1 |
      grep -q 'OK' || die "snarkjs does not verify $d/${who}_proof.json"
  done
  first=$(ls "$d"/out-batch/*proof*.json 2>/dev/null | head -1)
  pub=$(ls "$d"/out-batch/*public*.json 2>/dev/null | head -1)
  if [ -n "$first" ] && [ -n "$pub" ]; then
    "$snarkjs" groth16 verify "$d/verification_key.json" "$pub" "$first" 2>&1 | grep -q 'OK' ||
      die "snarkjs does not verify $first"
  fi
done
echo "# snarkjs verified a rapidsnark and a proofline proof of every circuit" >&2

python3 - "$results" "$batch" "$threads" "$runs" <<'EOF'
import collections, statistics, sys
path, batch, threads, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
wall, cpu = collections.defaultdict(list), collections.defaultdict(list)
order = []
for line in open(path):
    c, who, w, u = line.split("\t")
    if c not in order: order.append(c)
    wall[c, who].append(float(w)); cpu[c, who].append(float(u))
med = lambda xs: statistics.median(xs) if xs else float("nan")
b = "proofline_x" + batch
print(f"medians of {runs} runs, {threads} threads; seconds per proof, wall (cpu)")
print(f"| circuit | rapidsnark | proofline | ÷ rapidsnark | proofline, {batch} a job | ÷ rapidsnark |")
print("|---|---|---|---|---|---|")
for c in order:
    r, p, q = (med(wall[c, k]) for k in ("rapidsnark", "proofline", b))
    rc, pc, qc = (med(cpu[c, k]) for k in ("rapidsnark", "proofline", b))
    print(f"| {c} | {r:.3f} ({rc:.3f}) | {p:.3f} ({pc:.3f}) | {p / r:.2f}× | {q:.3f} ({qc:.3f}) | {q / r:.2f}× |")
EOF
