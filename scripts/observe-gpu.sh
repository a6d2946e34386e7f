#!/usr/bin/env bash
# The observability checks that need a GPU (docs/OBSERVABILITY.md), in one
# call on the GPU host: device spans from CUDA events in the timing log, the
# trace and the report, and NVML's busy fraction beside the spans' one.
#
#   scripts/observe-gpu.sh run [CARRY_DIR]
#       CARRY_DIR/bin/proofline is a CUDA build with its libraries in
#       CARRY_DIR/lib, as `scripts/bench-utilization.sh pack BUILD_DIR` or
#       `scripts/gpu-host.sh pack BUILD_DIR` leave it (default
#       .carry/bench-utilization). Generates a backlog with `proofline setup
#       --dev`, proves it with --backend cuda --report --trace --html
#       --log-level debug, checks the outputs, and leaves in $OUT (default
#       ./observe-gpu-out) summary.txt, report.json, trace.json, report.html
#       and run.log. Exit 0 when every check holds.
#
# Through the device tool (one call, carrying .carry):
#   run(command="scripts/observe-gpu.sh run .carry/bench-utilization", carry=[".carry"])
#
# Checks:
#   * GPU_TIMING lines name upload, ntt_a, msm_h and download spans;
#   * the report has NVML samples and each GPU's nvml_busy_fraction; it
#     prints both busy fractions and their difference in points (the target
#     is 2 points or less, over a backlog long enough for NVML's 1/6..1 s
#     sampling periods: a warning below 5 s of busy time, an error above);
#   * the trace's GPU lanes hold device spans of every partition.
#
# Environment: LOG_N=19 JOBS=8 PARTS=4 (the backlog), CURVE=bn254, LANES=2,
# PROOFLINE (binary to use instead of CARRY_DIR/bin/proofline),
# WORK (scratch, default /tmp/proofline-observe-gpu). A smoke test of the
# script itself on the CPU (NVML and transfer checks then skipped):
#   PROOFLINE=build/proofline BACKEND=cpu LOG_N=10 JOBS=2 PARTS=2 scripts/observe-gpu.sh run
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
shift || true
[ "$mode" = run ] || { sed -n '2,30p' "$0"; exit 2; }

carry=${1:-$root/.carry/bench-utilization}
[ -d "$carry" ] && carry=$(cd "$carry" && pwd)
out=${OUT:-$PWD/observe-gpu-out}
work=${WORK:-/tmp/proofline-observe-gpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -d "$carry/lib" ] && export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
proofline=${PROOFLINE:-$carry/bin/proofline}
[ -x "$proofline" ] || { echo "observe-gpu.sh: $proofline: not an executable (pack first)" >&2; exit 2; }
backend=${BACKEND:-cuda} log_n=${LOG_N:-19} jobs=${JOBS:-8} parts=${PARTS:-4} curve=${CURVE:-bn254} lanes=${LANES:-2}
constraints=$(( (1 << log_n) - 2 ))  # + 1 public + 1 = exactly 2^LOG_N rows

rm -rf "$work"
mkdir -p "$work"
summary=$out/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
note "== observe-gpu $(date -u +%Y-%m-%dT%H:%M:%SZ): $jobs jobs x $parts partitions, 2^$log_n, $curve"
command -v nvidia-smi > /dev/null &&
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$summary"

"$proofline" setup --dev --curve "$curve" --constraints "$constraints" --public 1 \
  --witnesses "$parts" --seed 7 --out "$work/inputs" --log-level warn > "$work/setup.log" 2>&1 ||
  { tail -20 "$work/setup.log"; note "setup failed"; exit 1; }
python3 - "$work/jobs.json" "$jobs" "$parts" <<'EOF'
import json, sys
path, jobs, parts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
witnesses = [f"inputs/witness_{i}.wtns" for i in range(parts)]
json.dump({"jobs": [{"id": f"j{k}", "zkey": "inputs/circuit.zkey", "witnesses": witnesses,
                     "out": f"out/j{k}"} for k in range(jobs)]}, open(path, "w"), indent=1)
EOF

"$proofline" run "$work/jobs.json" --backend "$backend" --gpu-lanes "$lanes" --log-level debug \
  --report "$out/report.json" --trace "$out/trace.json" --html "$out/report.html" \
  > "$out/run.log" 2>&1
rc=$?
note "proofline run: exit $rc"
[ $rc -eq 0 ] || { tail -20 "$out/run.log" | tee -a "$summary"; exit 1; }
grep -vE '^\[' "$out/run.log" | grep -E "busy|NVML|memory:" | tee -a "$summary"  # the summary, not the log

python3 - "$out" "$((jobs * parts))" "$backend" <<'EOF' 2>&1 | tee -a "$summary"
import json, os, sys
out, partitions, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
gpu = backend != "cpu"  # the CPU backend has no transfers and no NVML
bad = []
log = open(os.path.join(out, "run.log")).read()
timing = [l for l in log.splitlines() if "GPU_TIMING" in l]
if len(timing) != partitions:
    bad.append(f"{len(timing)} GPU_TIMING lines, expected {partitions}")
keys = ("upload_us=", "ntt_a_us=", "msm_h_us=") + (("download_us=", "backend=cuda") if gpu else ())
for key in keys:
    if timing and not all(key in l for l in timing):
        bad.append(f"a GPU_TIMING line lacks {key}")
r = json.load(open(os.path.join(out, "report.json")))
if gpu and not r["nvml"]["available"]:
    bad.append("no NVML samples: " + str(r["nvml"]["reason"]))
for g in r["gpus"]:
    busy, nvml = g["gpu_busy_fraction"], g["nvml_busy_fraction"]
    line = (f"GPU {g['device']} ({g['name']}): spans {100 * busy:.2f}% busy over {g['window_ms'] / 1000:.2f} s, "
            f"NVML {'-' if nvml is None else f'{100 * nvml:.2f}%'} over {g['nvml_samples']} samples, "
            f"gaps p50 {g['handoff_gap_ms']['p50']:.3f} / p99 {g['handoff_gap_ms']['p99']:.3f} ms")
    print(line)
    if nvml is None:
        if gpu:
            bad.append(f"GPU {g['device']}: no NVML figure")
        continue
    diff = abs(busy - nvml) * 100
    print(f"GPU {g['device']}: spans and NVML differ by {diff:.2f} points (target <= 2)")
    if diff > 2:
        if g["busy_ms"] < 5000:
            print(f"warning: only {g['busy_ms'] / 1000:.1f} s busy; NVML's periods need a longer backlog")
        else:
            bad.append(f"GPU {g['device']}: spans and NVML differ by {diff:.2f} points")
t = json.load(open(os.path.join(out, "trace.json")))
procs = {e["pid"]: e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
device = [e for e in t["traceEvents"] if e["ph"] == "X" and e["cat"] in ("device", "transfer")
          and procs.get(e["pid"], "").startswith("GPU " if gpu else "CPU backend")]
parts = {(e["args"]["job"], e["args"]["partition"]) for e in device}
if len(parts) != partitions:
    bad.append(f"trace: device spans of {len(parts)} partitions on GPU lanes, expected {partitions}")
if gpu and not any(e["name"] == "download" for e in device):
    bad.append("trace: no download span")
for b in bad:
    print("FAIL: " + b)
print("observe-gpu: " + ("FAILED" if bad else "all checks hold"))
sys.exit(1 if bad else 0)
EOF
exit "${PIPESTATUS[0]}"
