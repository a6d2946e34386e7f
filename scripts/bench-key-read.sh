#!/usr/bin/env bash
# Start-up on the host side (issue 10, items 3, 5 and 7): how fast proving
# keys and a witness are read from the page cache, and whether a run's trace
# shows the keys' preparation on the GPU.
#
# For each size in SIZES it makes a key with `proofline setup --dev` (on the
# GPU when BACKEND=cuda), then:
#   1. `proofline bench key-read` on every key: seconds and GB/s of file
#      bytes, the median of RUNS loads after one warm-up load (target: >= 4
#      GB/s, an 8.8 GB key in <= 2.2 s);
#   2. the first witness of the largest key read on all threads and on one
#      (target: a 512 MiB witness, 2^24, in <= 0.3 s);
#   3. `proofline run --trace --report` of the smallest key's job, and the
#      trace's key-preparation spans by name and count per GPU (and the
#      report's busy fraction with and without key work).
#
#   scripts/bench-key-read.sh [BUNDLE_DIR]
#       BUNDLE_DIR: an unpacked bundle (scripts/gpu-bundle.sh unpack), whose
#       bin/proofline and lib/ are used; default: PROOFLINE or build/proofline.
#
# On the GPU host (about 1 minute for SIZES="22 24" with BACKEND=cuda):
#   cmake -S . -B build-gpu && cmake --build build-gpu -j2 --target proofline
#   scripts/gpu-bundle.sh pack build-gpu
#   run(command="scripts/bench-key-read.sh $(scripts/gpu-bundle.sh unpack .carry/gpu)", carry=[".carry/gpu"])
# Here, as a smoke test of the script: BACKEND=cpu SIZES="12 14" scripts/bench-key-read.sh
#
# Environment:
#   SIZES="22 24"   key domains, log2
#   CURVE=bn254     bn254 or bls12_381
#   BACKEND=cuda    setup's and run's --backend (cpu: no GPU needed)
#   RUNS=3          timed loads per key (the median is reported)
#   WORK            scratch (default /tmp/proofline-bench-key-read; removed after)
#   OUT             where summary.txt and bench-key-read.tar.gz (logs, report,
#                   trace) go (default ./bench-key-read-out)
# Exit status: 0 when every step ran, 1 otherwise (the targets are reported,
# not enforced).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=${1:-}
sizes=${SIZES:-22 24}
curve=${CURVE:-bn254}
backend=${BACKEND:-cuda}
runs=${RUNS:-3}
work=${WORK:-/tmp/proofline-bench-key-read}
out=${OUT:-$PWD/bench-key-read-out}

# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"
bench_begin bench-key-read.sh "$bundle" "$work" "$out"

status=0
keys=()
for log_n in $sizes; do
  dir=$work/k$log_n
  t0=$(date +%s.%N)
  if ! "$proofline" setup --dev --curve "$curve" --constraints $(( (1 << log_n) - 2 )) --public 1 \
      --witnesses 1 --seed "$log_n" --backend "$backend" --out "$dir" \
      >"$work/logs/setup-2^$log_n.log" 2>&1; then
    say "setup 2^$log_n failed:"; tail -n 5 "$work/logs/setup-2^$log_n.log" | tee -a "$summary"
    status=1
    continue
  fi
  say "setup 2^$log_n ($backend): $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  keys+=("$log_n")
done
[ ${#keys[@]} -gt 0 ] || { say "no key was made"; exit 1; }
smallest=${keys[0]}
largest=${keys[${#keys[@]}-1]}

# 1 + 2: the keys, largest last, and the largest key's witness.
zkeys=()
for k in "${keys[@]}"; do zkeys+=("$work/k$k/circuit.zkey"); done
say ""
if ! "$proofline" bench key-read "${zkeys[@]}" --runs "$runs" \
    --witness "$work/k$largest/witness_0.wtns" --json "$work/logs/key-read.jsonl" \
    >"$work/logs/key-read.txt" 2>&1; then
  status=1
fi
tee -a "$summary" <"$work/logs/key-read.txt"

# 3: a run of the smallest key's job with a trace and a report.
say ""
if ! "$proofline" run "$work/k$smallest/jobs.json" --backend "$backend" \
    --trace "$work/logs/trace.json" --report "$work/logs/report.json" \
    --html "$work/logs/report.html" >"$work/logs/run.log" 2>&1; then
  say "run 2^$smallest failed:"; tail -n 5 "$work/logs/run.log" | tee -a "$summary"
  status=1
else
  python3 - "$work/logs/trace.json" "$work/logs/report.json" <<'EOF' | tee -a "$summary"
import collections, json, sys
trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
procs = {e["pid"]: e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "process_name"}
lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "thread_name"}
counts = collections.Counter()
for e in events:
    if e.get("ph") == "X" and e.get("cat") == "key":
        counts[(procs.get(e["pid"], "?"), lanes.get((e["pid"], e["tid"]), "?"), e["name"])] += 1
print("trace: key-preparation spans")
if not counts:
    print("  none (the backend reported no key upload or table build)")
for (group, lane, name), n in sorted(counts.items()):
    print(f"  {group} / {lane}: {name} x{n}")
r = json.load(open(sys.argv[2]))
s = r.get("startup", {})
print(f"report: first GPU work {s.get('first_gpu_work_ms')} ms, first proof {s.get('first_proof_ms')} ms")
for k in s.get("keys", []):
    print(f"  key {k.get('path')}: read {k.get('read_ms')} ms, to device {k.get('to_device_ms')} ms, "
          f"tables {k.get('tables_ms')} ms ({k.get('tables_bytes')} bytes)")
for g in r.get("gpus", []):
    print(f"  backend {g.get('device')}: busy {g.get('gpu_busy_fraction')} (partitions), "
          f"{g.get('gpu_busy_fraction_with_keys')} (with key preparation)")
EOF
fi

tar czf "$out/bench-key-read.tar.gz" -C "$work" logs
rm -rf "$work"
exit "$status"
