#!/usr/bin/env bash
# Several GPUs of one host (issue 16): the backlog of bench-utilization.sh
# (8 jobs x 4 partitions, BN254, a 2^20 domain) scaled with the GPUs used:
# 8 x N jobs on N GPUs, proved by `proofline run --gpus ...` on 1 GPU, on 2
# and on all visible GPUs (each count once; a one-GPU host runs `--gpus 0`
# only, as a control). Prints per GPU its busy fraction (device spans, and
# NVML's), hand-off gaps, partitions proved and key preparation, then
# throughput and its scaling against one GPU.
#
#   scripts/bench-multigpu.sh pack BUILD_DIR [CARRY_DIR]
#       (here) copy proofline from BUILD_DIR (a build with CUDA for the GPU
#       host) with its non-system shared libraries and build-info.txt into
#       CARRY_DIR (default .carry/bench-multigpu, git-ignored).
#   scripts/bench-multigpu.sh run [CARRY_DIR]
#       (GPU host, or here on the CPU at small sizes) generate the inputs
#       with `proofline setup --dev`, run each GPU count, print the tables,
#       and leave in $OUT (default ./bench-multigpu-out): summary.txt, one
#       report per GPU count (gpus-<N>.json) and bench-multigpu.tar.gz
#       (summary, reports, logs, job files, verification key, every proof).
#
# The whole sequence:
#   cmake -S . -B build-gpu && cmake --build build-gpu -j2 --target proofline
#   scripts/bench-multigpu.sh pack build-gpu
#   run(command="scripts/bench-multigpu.sh run .carry/bench-multigpu", carry=[".carry"],
#       kind="nvidia-h200-x8")          # or nvidia-h200 for the one-GPU control
# Afterwards, here: mkdir -p /tmp/bm && tar xzf <files_at>/bench-multigpu.tar.gz -C /tmp/bm &&
#   scripts/verify-proofs.sh /tmp/bm/verification_key.json /tmp/bm/proofs/*/*
#
# Environment (run):
#   LOG_N=20 JOBS_PER_GPU=8 PARTS=4   the backlog on N GPUs: JOBS_PER_GPU x N jobs of
#                                     PARTS partitions, domain 2^LOG_N
#   GPU_COUNTS="1 2 all"              GPU counts to run (devices 0..N-1); counts above
#                                     the visible GPUs are left out, repeats run once
#   CURVE=bn254 BACKEND=cuda          bn254 or bls12_381; cuda, or cpu for a smoke test
#   SYNTHESIZERS                      synthesis threads (default: cores - 2, at least 2)
#   FINALIZERS=2 LANES=2              finalizer threads; GPU-worker lanes per GPU
#   PROOFLINE                         binary to use instead of CARRY_DIR/bin/proofline
#   WORK                              scratch (default /tmp/proofline-bench-multigpu)
#   RUN_TIMEOUT=180                   seconds each run may take
# A smoke test here, on the CPU (one "GPU": the CPU backend):
#   PROOFLINE=build/proofline BACKEND=cpu LOG_N=10 JOBS_PER_GPU=2 PARTS=2 \
#     OUT=/tmp/bm-out scripts/bench-multigpu.sh run
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/carry.sh
source "$root/scripts/lib/carry.sh"
# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"
mode=${1:-}
shift || true

pack() {
  local build=${1:?usage: bench-multigpu.sh pack BUILD_DIR [CARRY_DIR]}
  local dest=${2:-$root/.carry/bench-multigpu}
  carry_pack bench-multigpu.sh "$build" "$dest" proofline
  ls -l "$dest/bin" "$dest/lib"
}

# visible_gpus: CUDA devices this process may use (CUDA_VISIBLE_DEVICES, else nvidia-smi).
visible_gpus() {
  if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
    echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .
  elif command -v nvidia-smi > /dev/null; then
    nvidia-smi -L 2> /dev/null | grep -c '^GPU '
  else
    echo 0
  fi
}

run() {
  local carry=${1:-$root/.carry/bench-multigpu}
  [ -d "$carry" ] && carry=$(cd "$carry" && pwd)
  local out=${OUT:-$PWD/bench-multigpu-out}
  local work=${WORK:-/tmp/proofline-bench-multigpu}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  [ -d "$carry/lib" ] && export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local proofline=${PROOFLINE:-$carry/bin/proofline}
  [ -x "$proofline" ] ||
    { echo "bench-multigpu.sh: $proofline: not an executable (pack first, or set PROOFLINE)" >&2; exit 2; }
  local log_n=${LOG_N:-20} per_gpu=${JOBS_PER_GPU:-8} parts=${PARTS:-4} backend=${BACKEND:-cuda}
  local curve=${CURVE:-bn254} lanes=${LANES:-2} finalizers=${FINALIZERS:-2}
  local cores
  cores=$(nproc)
  local synth=${SYNTHESIZERS:-$(( cores > 4 ? cores - 2 : 2 ))}
  local n_public=1
  local constraints=$(( (1 << log_n) - n_public - 1 ))  # + P + 1 rows = exactly 2^LOG_N

  # GPU counts to run: 1, 2, all, within what is visible, each once.
  local visible counts=()
  if [ "$backend" = cpu ]; then visible=1; else visible=$(visible_gpus); fi
  [ "$visible" -ge 1 ] || { echo "bench-multigpu.sh: no GPU visible (BACKEND=cpu for a smoke test)" >&2; exit 2; }
  for c in ${GPU_COUNTS:-1 2 all}; do
    [ "$c" = all ] && c=$visible
    [ "$c" -ge 1 ] && [ "$c" -le "$visible" ] || continue
    case " ${counts[*]} " in *" $c "*) ;; *) counts+=("$c") ;; esac
  done

  rm -rf "$work"
  mkdir -p "$work/logs" "$work/reports"
  local summary=$work/summary.txt
  : > "$summary"
  note() { echo "$*" | tee -a "$summary"; }
  local rc=0

  bench_header bench-multigpu "$carry" "$summary" "$visible GPU(s) visible"
  note "backlog per GPU: $per_gpu jobs x $parts partitions, $curve, domain 2^$log_n ($constraints constraints);" \
       "--backend $backend, $synth synthesizers, $finalizers finalizers, $lanes lanes per GPU; GPU counts: ${counts[*]}"
  [ "${#counts[@]}" -eq 1 ] && [ "${counts[0]}" -eq 1 ] && note "one GPU only: this is the control run (--gpus 0)"

  # 1. Inputs, generated here: one key, PARTS witnesses shared by every job.
  local t0=$SECONDS
  "$proofline" setup --dev --curve "$curve" --constraints "$constraints" --public "$n_public" \
    --witnesses "$parts" --seed 16 --out "$work/inputs" --log-level warn > "$work/logs/setup.log" 2>&1 ||
    { tail -20 "$work/logs/setup.log"; note "setup failed"; exit 1; }
  note "setup: $((SECONDS - t0)) s"

  # 2. One run per GPU count, on devices 0..N-1, with JOBS_PER_GPU x N jobs.
  local names=()
  for n in "${counts[@]}"; do
    local name=gpus-$n jobs=$(( per_gpu * n ))
    python3 - "$work/jobs-$n.json" "$jobs" "$parts" <<'EOF'
import json, sys
path, jobs, parts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
witnesses = [f"inputs/witness_{i}.wtns" for i in range(parts)]
spec = {"jobs": [{"id": f"j{k}", "zkey": "inputs/circuit.zkey", "witnesses": witnesses,
                  "out": f"j{k}"} for k in range(jobs)]}
json.dump(spec, open(path, "w"), indent=1)
EOF
    local args=(run "$work/jobs-$n.json" --backend "$backend" --synthesizers "$synth"
                --finalizers "$finalizers" --out-root "$work/out/$name"
                --report "$work/reports/$name.json")
    [ "$backend" = cpu ] || args+=(--gpus "$(seq -s, 0 $(( n - 1 )))" --gpu-lanes "$lanes")
    echo "+ proofline ${args[*]}" > "$work/logs/$name.log"
    local t=$SECONDS
    timeout "${RUN_TIMEOUT:-180}" "$proofline" "${args[@]}" >> "$work/logs/$name.log" 2>&1
    local r=$?
    note "$name: $jobs jobs x $parts partitions, exit $r in $((SECONDS - t)) s"
    if [ $r -ne 0 ] || [ ! -s "$work/reports/$name.json" ]; then
      tail -15 "$work/logs/$name.log" | sed 's/^/  | /' | tee -a "$summary"
      rc=1
    fi
    names+=("$name")
  done

  # 3. Per GPU, then throughput and scaling against one GPU.
  python3 - "$work/reports" "${names[@]}" <<'EOF' | tee -a "$summary"
import json, os, sys
folder, names = sys.argv[1], sys.argv[2:]
def load(n):
    try:
        return json.load(open(os.path.join(folder, n + ".json")))
    except (OSError, ValueError):
        return None
reports = {n: load(n) for n in names}
def fmt(f):
    try:
        return f()
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return "-"
print()
print(f"{'run':<9}{'gpu':>4}{'partitions':>11}{'busy':>9}{'nvml':>8}{'gap p50 ms':>12}{'gap p99 ms':>12}"
      f"{'gap max ms':>12}{'keys':>6}{'key prep ms':>13}{'to device ms':>14}")
for n in names:
    r = reports[n]
    if r is None:
        print(f"{n:<9}  no report")
        continue
    for g in r.get("gpus", []):
        gap = g.get("handoff_gap_ms", {})
        print(f"{n:<9}{g['device']:>4}{g['partitions']:>11}"
              f"{fmt(lambda: format(100 * g['gpu_busy_fraction'], '.2f') + '%'):>9}"
              f"{fmt(lambda: format(100 * g['nvml_busy_fraction'], '.1f') + '%'):>8}"
              f"{fmt(lambda: format(gap['p50'], '.3f')):>12}{fmt(lambda: format(gap['p99'], '.3f')):>12}"
              f"{fmt(lambda: format(gap['max'], '.3f')):>12}{fmt(lambda: str(g['keys_prepared'])):>6}"
              f"{fmt(lambda: format(g['key_prepare_ms'], '.1f')):>13}"
              f"{fmt(lambda: format(g['key_to_device_ms'], '.1f')):>14}")
# Throughput over the wall time, and over the devices' busy window (first
# device span to last, any GPU): the second leaves out key reading and the
# first partition's synthesis, which do not grow with the GPUs.
def steady(r):
    gs = [g for g in r["gpus"] if g["partitions"] > 0]
    window = max(g["last_span_ms"] for g in gs) - min(g["first_span_ms"] for g in gs)
    return r["proofs"] / (window / 1000.0)
base = reports.get(names[0]) if names else None
print()
print(f"{'run':<9}{'gpus':>5}{'proofs':>8}{'failed':>8}{'wall s':>9}{'proofs/s':>10}{'steady/s':>10}"
      f"{'x wall':>8}{'x steady':>10}{'eff steady':>12}")
for n in names:
    r = reports[n]
    if r is None:
        continue
    k = len([g for g in r.get("gpus", [])])
    x_wall = fmt(lambda: format(r["proofs_per_s"] / base["proofs_per_s"], ".2f"))
    x_steady = fmt(lambda: format(steady(r) / steady(base), ".2f"))
    eff = fmt(lambda: format(steady(r) / steady(base) / k * len(base["gpus"]), ".3f"))
    print(f"{n:<9}{k:>5}{r['proofs']:>8}{r['failed']:>8}{r['wall_s']:>9.3f}{r['proofs_per_s']:>10.2f}"
          f"{fmt(lambda: format(steady(r), '.2f')):>10}{x_wall:>8}{x_steady:>10}{eff:>12}")
print("\nx: throughput against the first run; eff: x steady / GPUs (target >= 0.95)")
EOF

  # 4. Results: summary, reports, logs, job files, verification key, every proof.
  PROOFS_OF='j*' bench_bundle "$work" "$out" bench-multigpu "$work"/jobs-*.json
  note "== results: $out/bench-multigpu.tar.gz, $out/summary.txt (exit $rc)"
  exit $rc
}

case "$mode" in
  pack) pack "$@" ;;
  run) run "$@" ;;
  *)
    sed -n '2,42p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
