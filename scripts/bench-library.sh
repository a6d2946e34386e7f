#!/usr/bin/env bash
# libproofline measured (issue 27): a proof through the library with a warm
# key against `proofline prove` (a process per proof) and rapidsnark (its
# `prover` command and its library), and, on a GPU host, many threads on one
# handle against `proofline run` on the same partitions.
#
#   scripts/bench-library.sh cpu [--rapidsnark-lib LIB] [--rapidsnark PROVER]
#       (here) on the same cores (taskset 0..THREADS-1; rapidsnark with
#       OMP_NUM_THREADS=THREADS, proofline with cpu-threads THREADS), for
#       each of LOGS (synthetic keys, `proofline setup --dev`, made once
#       under WORK): RUNS proofs through each library on one warm prover
#       object (proofline-library-bench: the same rapidsnark-ABI calls to
#       both libraries), RUNS `proofline prove` processes and RUNS rapidsnark
#       `prover` processes, interleaved; medians per proof. A proof of each
#       is checked with snarkjs.
#   scripts/bench-library.sh gpu CARRY_DIR
#       (GPU host; CARRY_DIR from scripts/gpu-bundle.sh unpack) for 2^20:
#       JOBS64 witnesses proved by `proofline run` (one job) and by
#       THREADS16 threads on one library handle; for 2^22: one call at a time
#       on a warm key (median of RUNS22 calls) and the same partition's
#       synthesis and device spans from `proofline run --report`. Writes
#       $OUT/bench-library.tar.gz (reports, JSON lines, proofs).
#
# Environment: LOGS="16 18" RUNS=5 THREADS=<cores> WORK=/tmp/proofline-bench-library
#   PROOFLINE=build/proofline LIB=build/lib/libproofline.so BENCH=build/proofline-library-bench
#   (gpu) JOBS64=64 THREADS16=16 RUNS22=10 WORK=/tmp/pl-bench-library
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
shift || true
die() { echo "bench-library.sh: $*" >&2; exit 1; }

median() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f"{statistics.median(v):.4f}" if v else "nan")' "$@"; }
json_field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); 
for k in sys.argv[2].split("."): d=d[k]
print(d)' "$1" "$2"; }

cpu() {
  local rs_lib="" rs_prover=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --rapidsnark-lib) rs_lib=$2; shift 2 ;;
      --rapidsnark) rs_prover=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  local proofline=${PROOFLINE:-$root/build/proofline} lib=${LIB:-$root/build/lib/libproofline.so}
  local bench=${BENCH:-$root/build/proofline-library-bench} runs=${RUNS:-5}
  local threads=${THREADS:-$(nproc)} work=${WORK:-/tmp/proofline-bench-library} logs=${LOGS:-16 18}
  local cores="0-$((threads - 1))"
  for f in "$proofline" "$lib" "$bench"; do [ -e "$f" ] || die "$f not built"; done
  mkdir -p "$work"
  export PROOFLINE_OPTIONS="{\"backend\": \"cpu\", \"cpu-threads\": $threads}"
  local table=$work/table.txt
  : > "$table"
  for log in $logs; do
    local dir=$work/syn$log
    if [ ! -f "$dir/witness_0.wtns" ]; then
      echo "# syn$log: proofline setup --dev" >&2
      "$proofline" setup --dev --curve bn254 --constraints $(((1 << log) - 2)) --witnesses 2 \
        --seed "$log" --out "$dir" --force --backend cpu --log-level warn > /dev/null
    fi
    local pl_lib=() rs_libv=() pl_cli=() rs_cli=() r out
    for ((r = 0; r < runs; ++r)); do
      mkdir -p "$dir/out-lib" "$dir/out-rslib" "$dir/out-cli" "$dir/out-rs"
      out=$(taskset -c "$cores" "$bench" --library "$lib" --zkey "$dir/circuit.zkey" \
              --witness "$dir/witness_0.wtns" --proofs 3 --warmup 1 --out "$dir/out-lib")
      pl_lib+=("$(json_field "$out" latency_ms.median)")
      if [ -n "$rs_lib" ]; then
        out=$(OMP_NUM_THREADS=$threads taskset -c "$cores" "$bench" --library "$rs_lib" \
                --zkey "$dir/circuit.zkey" --witness "$dir/witness_0.wtns" --proofs 3 --warmup 1 \
                --out "$dir/out-rslib")
        rs_libv+=("$(json_field "$out" latency_ms.median)")
      fi
      local t0 t1
      t0=$(date +%s.%N)
      taskset -c "$cores" "$proofline" prove "$dir/circuit.zkey" "$dir/witness_0.wtns" \
        "$dir/out-cli/proof.json" "$dir/out-cli/public.json" --backend cpu --cpu-threads "$threads" -q
      t1=$(date +%s.%N)
      pl_cli+=("$(python3 -c "print(($t1 - $t0) * 1000)")")
      if [ -n "$rs_prover" ]; then
        t0=$(date +%s.%N)
        OMP_NUM_THREADS=$threads taskset -c "$cores" "$rs_prover" "$dir/circuit.zkey" \
          "$dir/witness_0.wtns" "$dir/out-rs/proof.json" "$dir/out-rs/public.json" > /dev/null
        t1=$(date +%s.%N)
        rs_cli+=("$(python3 -c "print(($t1 - $t0) * 1000)")")
      fi
    done
    for d in out-lib out-rslib out-cli out-rs; do
      [ -n "$(ls "$dir/$d" 2>/dev/null)" ] || continue
      "$root/scripts/verify-proofs.sh" "$dir/verification_key.json" "$dir/$d" > /dev/null ||
        die "syn$log: snarkjs rejected a proof in $dir/$d"
    done
    printf 'syn%s (2^%s)  proofline library %s ms  rapidsnark library %s ms  proofline prove %s ms  rapidsnark prover %s ms\n' \
      "$log" "$log" "$(median "${pl_lib[@]}")" "$(median "${rs_libv[@]}")" "$(median "${pl_cli[@]}")" \
      "$(median "${rs_cli[@]}")" | tee -a "$table"
  done
  echo "medians of $runs runs on cores $cores; every proof checked by snarkjs; $table"
}

gpu() {
  local carry=${1:?usage: bench-library.sh gpu CARRY_DIR}
  local pl=$carry/bin/proofline bench=$carry/bin/proofline-library-bench lib=$carry/lib/libproofline.so
  local work=${WORK:-/tmp/pl-bench-library} out=${OUT:-$PWD/bench-library-out}
  local jobs=${JOBS64:-64} threads=${THREADS16:-16} runs22=${RUNS22:-10}
  local la=${LOG_A:-20} lb=${LOG_B:-22} backend=${BACKEND:-cuda}
  export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  mkdir -p "$work" "$out"
  local log=$out/bench-library.log
  : > "$log"
  # 2^20: JOBS64 witnesses, one key.
  "$pl" setup --dev --curve bn254 --constraints $(((1 << la) - 2)) --witnesses "$jobs" --seed 20 \
    --out "$work/k20" --force --log-level warn >> "$log" 2>&1
  "$pl" setup --dev --curve bn254 --constraints $(((1 << lb) - 2)) --witnesses 2 --seed 22 \
    --out "$work/k22" --force --log-level warn >> "$log" 2>&1
  python3 - "$work/k22" > "$work/k22/one.json" <<'PY'
import json, sys
d = sys.argv[1]
print(json.dumps({"jobs": [{"id": "one", "zkey": d + "/circuit.zkey", "witness": d + "/witness_0.wtns",
                            "out": d + "/out-run-one"}]}))
PY
  export PROOFLINE_OPTIONS="{\"backend\": \"$backend\"}"
  # run, then the library, twice each, alternating
  local witness_args=() i
  for ((i = 0; i < jobs; ++i)); do witness_args+=(--witness "$work/k20/witness_$i.wtns"); done
  for pass in 1 2; do
    "$pl" run "$work/k20/jobs.json" --backend "$backend" --report "$out/run20_$pass.json" -q >> "$log" 2>&1
    cp "$work/k20/out/result.json" "$out/run20_$pass.result.json"
    # the library uploads from its pinned pool; run does with --pinned-pool
    "$pl" run "$work/k20/jobs.json" --backend "$backend" --pinned-pool --report "$out/run20p_$pass.json" -q >> "$log" 2>&1
    cp "$work/k20/out/result.json" "$out/run20p_$pass.result.json"
    "$bench" --library "$lib" --zkey "$work/k20/circuit.zkey" "${witness_args[@]}" --threads "$threads" \
      --proofs "$jobs" --warmup 2 --out "$work/k20" > "$out/lib20_$pass.json" 2>> "$log"
  done
  mkdir -p "$work/k20/lib-proofs" && mv "$work"/k20/proof_*.json "$work"/k20/public_*.json "$work/k20/lib-proofs/" 2>/dev/null || true
  "$pl" run "$work/k22/one.json" --backend "$backend" --report "$out/run22_one.json" -q >> "$log" 2>&1
  cp "$work/k22/out-run-one/result.json" "$out/run22_one.result.json"
  mkdir -p "$work/k22/lib-proofs"
  # One call at a time, its synthesis and device time from the runtime's own
  # debug lines (SYNTH_TIMING total_us, GPU_TIMING prove_us) of the same calls.
  PROOFLINE_OPTIONS="{\"backend\": \"$backend\", \"log\": \"stderr\", \"log-level\": \"debug\"}" \
    "$bench" --library "$lib" --zkey "$work/k22/circuit.zkey" --witness "$work/k22/witness_0.wtns" \
    --threads 1 --proofs "$runs22" --warmup 2 --out "$work/k22/lib-proofs" > "$out/lib22.json" 2> "$out/lib22.log"
  LA=$la LB=$lb python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(n): return json.load(open(os.path.join(out, n)))
def run_rate(report, result):
    # proofs over the span from the first partition's synthesis to the last proof written:
    # the steady pipeline, without the key read (the library's key is warm)
    parts = result["partitions"]
    t0 = min(p["spans_ms"]["synthesize"][0] for p in parts)
    t1 = max(p["spans_ms"]["finalize"][1] for p in parts)
    return len(parts) / ((t1 - t0) / 1000), report["proofs_per_s"]
for p in (1, 2):
    l = load(f"lib20_{p}.json")
    steady, whole = run_rate(load(f"run20_{p}.json"), load(f"run20_{p}.result.json"))
    pin, pin_whole = run_rate(load(f"run20p_{p}.json"), load(f"run20p_{p}.result.json"))
    print(f"2^{os.environ.get('LA', '20')} pass {p}: run {steady:.2f} proofs/s, --pinned-pool {pin:.2f} "
          f"(first synthesis to last proof; over the wall {whole:.2f}, {pin_whole:.2f}) | "
          f"library {l['threads']} threads {l['proofs_per_s']:.2f} proofs/s = {l['proofs_per_s'] / steady:.3f} of run, "
          f"{l['proofs_per_s'] / pin:.3f} of run --pinned-pool; latency median {l['latency_ms']['median']:.1f} ms")
p = load("run22_one.result.json")["partitions"][0]["spans_ms"]
synth = p["synthesize"][1] - p["synthesize"][0]; dev = p["prove"][1] - p["prove"][0]
l = load("lib22.json")
import re, statistics
lines = open(os.path.join(out, "lib22.log")).read().splitlines()
synth_us = [float(m.group(1)) for m in (re.search(r"SYNTH_TIMING .* total_us=([0-9.]+)", x) for x in lines) if m]
prove_us = [float(m.group(1)) for m in (re.search(r"GPU_TIMING .* prove_us=([0-9.]+)", x) for x in lines) if m]
ls, lp = statistics.median(synth_us[2:]) / 1000, statistics.median(prove_us[2:]) / 1000
print(f"2^{os.environ.get('LB', '22')} one call, its own parts: synthesis {ls:.1f} + device {lp:.1f} = {ls + lp:.1f} ms "
      f"(medians of {len(synth_us) - 2} calls); the call {l['latency_ms']['median']:.1f} ms = {l['latency_ms']['median'] / (ls + lp):.3f} x")
print(f"2^{os.environ.get('LB', '22')} one call: library median {l['latency_ms']['median']:.1f} ms (p90 {l['latency_ms']['p90']:.1f}); "
      f"run's partition synthesize {synth:.1f} + prove {dev:.1f} = {synth + dev:.1f} ms; ratio {l['latency_ms']['median'] / (synth + dev):.3f}")
PY
  tar -C "$work" -czf "$out/bench-library.tar.gz" k20/verification_key.json k20/lib-proofs k22/verification_key.json \
    k22/lib-proofs k22/out-run-one -C "$out" summary.txt run20_1.json run20_2.json lib20_1.json lib20_2.json \
    run20_1.result.json run20_2.result.json run20p_1.json run20p_2.json run20p_1.result.json \
    run20p_2.result.json run22_one.json run22_one.result.json lib22.json lib22.log bench-library.log
  ls -l "$out/bench-library.tar.gz"
}

case "$mode" in
  cpu) cpu "$@" ;;
  gpu) gpu "$@" ;;
  *) sed -n '2,25p' "$0"; exit 2 ;;
esac
