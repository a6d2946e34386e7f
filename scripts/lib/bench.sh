# Shared by the benchmarks that run on the GPU host (bench-utilization.sh,
# bench-multigpu.sh, bench-fragmentation.sh, bench-key-read.sh,
# bench-setup-gpu.sh). Source it.

# bench_header NAME CARRY SUMMARY [EXTRA]: the run's first lines, on stdout
# and appended to SUMMARY: name and UTC date, the bundle's build-info.txt,
# the host (cores, memory, then EXTRA) and each GPU's index, name, driver and memory.
bench_header() {
  local name=$1 carry=$2 summary=$3 extra=${4:-}
  echo "== $name $(date -u +%Y-%m-%dT%H:%M:%SZ)" | tee -a "$summary"
  [ -f "$carry/build-info.txt" ] && tee -a "$summary" < "$carry/build-info.txt"
  echo "host: $(uname -n), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)${extra:+, $extra}" |
    tee -a "$summary"
  command -v nvidia-smi > /dev/null &&
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
  return 0
}

# bench_kernels_setup NAME CARRY: the set-up the kernel sweeps
# (bench-kernels-msm.sh, bench-kernels-ntt.sh) share: the carried binaries'
# libraries on LD_LIBRARY_PATH; bench, gtest (their paths); work (a temporary
# folder, removed on exit) with work/logs; out (OUT, default ./NAME-out)
# made; summary started with bench_header; failed=0; note TEXT (echo and
# append to the summary).
bench_kernels_setup() {
  local name=$1
  carry=$2
  out=${OUT:-$PWD/$name-out}
  export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  bench="$carry/bin/proofline-bench"
  gtest="$carry/bin/cuda_gpu_test"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$out" "$work/logs"
  summary="$work/summary.txt"
  : > "$summary"
  bench_header "$name" "$carry" "$summary"
  failed=0
  note() { echo "$*" | tee -a "$summary"; }
}

# bench_gtest LABEL LOG FILTER [VAR=VALUE...]: after bench_kernels_setup,
# cuda_gpu_test's cases matching FILTER (doctest -tc) under the given
# environment, output to work/logs/LOG.log, within TIMEOUT seconds (default
# 150); notes LABEL with the exit code, the assertions and the seconds, and
# sets failed=1 when it fails.
bench_gtest() {
  local label=$1 log=$2 filter=$3 t0 rc
  shift 3
  t0=$(date +%s)
  env "$@" timeout "${TIMEOUT:-150}" "$gtest" -tc="$filter" > "$work/logs/$log.log" 2>&1
  rc=$?
  note "test $label: rc=$rc ($(tail -3 "$work/logs/$log.log" | grep -o 'assertions:.*' | head -1)), $(($(date +%s) - t0)) s"
  [ "$rc" = 0 ] || failed=1
}

# bench_bundle WORK OUT NAME JOBS...: packs WORK/reports, WORK/logs, JOBS (job
# files), WORK/inputs/verification_key.json, WORK/summary.txt and the proofs
# of every WORK/out/<run>/<job> for the jobs named by the glob PROOFS_OF
# (default j0) into OUT/NAME.tar.gz, and copies the summary and the reports
# to OUT.
bench_bundle() {
  local work=$1 out=$2 name=$3
  shift 3
  local d run
  mkdir -p "$work/bundle/proofs"
  cp -r "$work/reports" "$work/logs" "$@" "$work/bundle/"
  cp "$work/inputs/verification_key.json" "$work/bundle/" 2>/dev/null
  for d in "$work"/out/*/${PROOFS_OF:-j0}; do
    [ -d "$d" ] || continue
    run=$(basename "$(dirname "$d")")
    mkdir -p "$work/bundle/proofs/$run"
    cp -r "$d" "$work/bundle/proofs/$run/"
  done
  cp "$work/summary.txt" "$work/bundle/"
  (cd "$work/bundle" && tar czf "$out/$name.tar.gz" .)
  cp "$work/summary.txt" "$out/summary.txt"
  cp "$work"/reports/*.json "$out/" 2>/dev/null
  return 0
}

# bench_proofline NAME [BUNDLE]: sets `proofline` to BUNDLE/bin/proofline (and
# puts BUNDLE/lib on LD_LIBRARY_PATH), or without BUNDLE to $PROOFLINE or the
# build/ tree's binary; exits 2, naming NAME, when there is no such binary.
bench_proofline() {
  local name=$1 bundle=${2:-} root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if [ -n "$bundle" ]; then
    proofline=$bundle/bin/proofline
    [ -d "$bundle/lib" ] && export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  else
    proofline=${PROOFLINE:-$root/build/proofline}
  fi
  [ -x "$proofline" ] || { echo "$name: no proofline binary at $proofline" >&2; exit 2; }
}

# bench_begin NAME BUNDLE WORK OUT: bench_proofline, then an empty WORK (with
# WORK/logs), OUT, and OUT/summary.txt (set as `summary`) started with
# bench_header and the binary's path; `say` writes a line to stdout and the
# summary.
bench_begin() {
  local name=$1 bundle=$2 work=$3 out=$4 root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  bench_proofline "$name" "$bundle"
  rm -rf "$work"
  mkdir -p "$work/logs" "$out"
  summary=$out/summary.txt
  : > "$summary"
  bench_header "$name" "${bundle:-$root/build}" "$summary"
  say "proofline: $proofline"
  say ""
}
say() { echo "$*" | tee -a "$summary"; }

# bench_medians WORK KEY: a table of the median_ms of every WORK/*.jsonl
# line (proofline-bench --json), a row per KEY and a column per log_n. KEY
# "file" names a row by its file's name (one setting per file); KEY
# "kernel" by the line's what and ntt_kernel. Without python3, the logs.
bench_medians() {
  local work=$1 key=$2 f
  if ! command -v python3 > /dev/null; then
    grep -h -v '^what' "$work"/logs/*.log
    return 0
  fi
  for f in "$work"/*.jsonl; do
    [ -f "$f" ] && sed "s/^{/{\"file\":\"$(basename "$f" .jsonl)\",/" "$f"
  done | python3 -c '
import json, sys
by_file = sys.argv[1] == "file"
rows = {}
for line in sys.stdin:
    try: r = json.loads(line)
    except ValueError: continue
    key = r["file"] if by_file else "%-10s %s" % (r.get("what", "?"), r.get("ntt_kernel", "-"))
    rows.setdefault(key, {})[r["log_n"]] = r["median_ms"]
sizes = sorted({n for v in rows.values() for n in v})
print("%-36s " % ("setting" if by_file else "what       kernel") + " ".join("%9s" % ("2^%d" % n) for n in sizes))
for key in sorted(rows):
    v = rows[key]
    print("%-36s " % key + " ".join("%9s" % ("%.3f" % v[n] if n in v else "-") for n in sizes))
' "$key"
}

# bench_finish WORK OUT NAME FAILED: the verdict line in WORK/summary.txt,
# the JSON lines and the summary into WORK/logs, OUT/NAME.tar.gz of the logs
# and OUT/summary.txt; exits with FAILED.
bench_finish() {
  local work=$1 out=$2 name=$3 failed=$4
  if [ "$failed" = 0 ]; then echo "all steps passed"; else echo "SOME STEPS FAILED (see the logs)"; fi |
    tee -a "$work/summary.txt"
  cp "$work"/*.jsonl "$work/logs/" 2>/dev/null
  cp "$work/summary.txt" "$work/logs/"
  (cd "$work" && tar czf "$out/$name.tar.gz" logs)
  cp "$work/summary.txt" "$out/summary.txt"
  exit "$failed"
}
