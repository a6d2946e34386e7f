#!/usr/bin/env bash
# The memory system's figures on the GPU host, in one device call: purge vs
# malloc_trim at 4 GiB, upload bandwidth from the pinned pool vs pageable
# memory vs cudaHostAlloc (the pool must reach >= 80% of the latter), hand-off
# gaps with purges off / by message / inline while partitions really upload,
# and a `proofline run` on the CUDA backend whose memory line shows the pool
# pinned. The host has no CAF or jemalloc, so binaries are built here (static
# jemalloc and cudart), packed with their shared libraries, carried over.
#
#   scripts/bench-memory-gpu.sh pack BUILD_DIR [CARRY_DIR]
#       (here) copy proofline and proofline-trim-baseline from BUILD_DIR (a
#       build with CUDA: configure without -DPROOFLINE_CUDA=OFF) with their
#       non-system shared libraries (ldd) and build-info.txt into CARRY_DIR
#       (default .carry/bench-memory, git-ignored).
#   scripts/bench-memory-gpu.sh run [CARRY_DIR]
#       (GPU host) run everything, write logs and JSON under $OUT (default
#       ./bench-memory-out), print the tables.
#
# The whole sequence:
#   cmake -S . -B build-gpu && cmake --build build-gpu -j2 --target proofline proofline-trim-baseline
#   scripts/bench-memory-gpu.sh pack build-gpu
#   run(command="scripts/bench-memory-gpu.sh run .carry/bench-memory", carry=[".carry"])
# Environment (run): BYTES (default 4G), LOG_DOMAIN (backlog partitions,
# default 22: 384 MiB of a, b, c each), PARTITIONS (default 16), PROVE_MS
# (simulated kernels per partition, default 40). About a minute in all.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/carry.sh
source "$root/scripts/lib/carry.sh"
mode=${1:-}
shift || true

pack() {
  local build=${1:?usage: bench-memory-gpu.sh pack BUILD_DIR [CARRY_DIR]}
  local dest=${2:-$root/.carry/bench-memory}
  carry_pack bench-memory-gpu.sh "$build" "$dest" proofline proofline-trim-baseline
  mkdir -p "$dest/examples"
  cp -f "$root"/examples/* "$dest/examples/" 2>/dev/null || true
  ls -l "$dest/bin" "$dest/lib"
}

run() {
  local carry=${1:-$root/.carry/bench-memory}
  carry=$(cd "$carry" && pwd)
  local out=${OUT:-$PWD/bench-memory-out}
  mkdir -p "$out"
  export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local bin=$carry/bin
  local bytes=${BYTES:-4G} log_domain=${LOG_DOMAIN:-22} parts=${PARTITIONS:-16}
  local prove_ms=${PROVE_MS:-40}
  {
    cat "$carry/build-info.txt"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -n), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  } | tee "$out/machine.txt"

  local rc=0 t0
  step() {  # step NAME ARGS...: one bench run, its table on stdout and in NAME.txt
    local name=$1
    shift
    t0=$SECONDS
    echo "== $name: proofline $*"
    timeout 300 "$bin/proofline" "$@" > "$out/$name.txt" 2> "$out/$name.log"
    local r=$?
    cat "$out/$name.txt"
    echo "== $name: exit $r in $((SECONDS - t0)) s"
    [ $r -eq 0 ] || { tail -20 "$out/$name.log"; rc=1; }
  }
  # 1. Purge vs trim at 4 GiB, bandwidth from a 4 GiB pool, gaps while partitions upload (pageable).
  step large bench memory --bytes "$bytes" --log-domain "$log_domain" --partitions "$parts" \
    --prove-ms "$prove_ms" --backend cuda-upload --json "$out/large.json"
  # 2. The same backlog with its witness and a, b, c in a pinned pool (uploads at pinned speed).
  step pooled bench memory --bytes 256M --log-domain "$log_domain" --partitions "$parts" \
    --prove-ms "$prove_ms" --backend cuda-upload --pool 4G --json "$out/pooled.json"
  # 3. The CUDA backend on the bundled example: the memory line shows the pool pinned.
  step run run "$carry/examples/jobs.json" --backend cuda --out-root "$out/run-out"
  exit $rc
}

case "$mode" in
  pack) pack "$@" ;;
  run) run "$@" ;;
  *)
    sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
