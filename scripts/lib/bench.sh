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
