#!/usr/bin/env bash
# `proofline setup --dev` with its fixed-base products on the GPU (issue 10,
# item 6: a 2^26 BN254 setup in <= 5 min on the GPU host). First a check:
# BN254 2^CHECK_LOG on the GPU and on the CPU with the same seed must give
# the same zkey and verification key, byte for byte. Then each size in
# SIZES on the GPU, timed, with the setup's own step times. Prints a table.
#
#   scripts/bench-setup-gpu.sh [BUNDLE_DIR]
#       BUNDLE_DIR: an unpacked bundle (scripts/gpu-bundle.sh unpack), whose
#       bin/proofline and lib/ are used; default: PROOFLINE or build/proofline.
#
# The whole sequence:
#   cmake -S . -B build-gpu && cmake --build build-gpu -j2 --target proofline
#   scripts/gpu-bundle.sh pack build-gpu
#   run(command="scripts/bench-setup-gpu.sh $(scripts/gpu-bundle.sh unpack .carry/gpu)", carry=[".carry/gpu"])
# 2^26 alone (about 35 GB of zkey on the host's disk, removed afterwards):
#   run(command="CHECK_LOG=0 SIZES=26 scripts/bench-setup-gpu.sh $(scripts/gpu-bundle.sh unpack .carry/gpu)", carry=[".carry/gpu"])
#
# Environment:
#   CHECK_LOG=20     domain of the GPU-vs-CPU byte check (0: skip it)
#   SIZES="24"       domains timed on the GPU, log2 (each setup is removed after)
#   CURVE=bn254      bn254 or bls12_381
#   WITNESSES=2      witnesses per setup
#   LIMIT=300        seconds allowed per timed setup (the verdict column)
#   BACKEND=cuda     --backend of the timed setups and of the check's first
#                    side (cpu here makes a smoke test of the script itself:
#                    BACKEND=cpu CHECK_LOG=10 SIZES=12 scripts/bench-setup-gpu.sh)
#   WORK             scratch (default /tmp/proofline-bench-setup-gpu)
#   OUT              where summary.txt and bench-setup-gpu.tar.gz (the logs)
#                    go (default ./bench-setup-gpu-out)
# Exit status: 0 when the check passed and every timed setup met LIMIT,
# 1 otherwise.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=${1:-}
check_log=${CHECK_LOG:-20}
sizes=${SIZES:-24}
curve=${CURVE:-bn254}
witnesses=${WITNESSES:-2}
limit=${LIMIT:-300}
backend=${BACKEND:-cuda}
work=${WORK:-/tmp/proofline-bench-setup-gpu}
out=${OUT:-$PWD/bench-setup-gpu-out}

# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"
bench_begin bench-setup-gpu.sh "$bundle" "$work" "$out"

status=0
rows=()

# setup LOG BACKEND DIR: runs one setup, leaves its log in logs/, sets
# $wall (s), $rc and $key_s (the key's own time).
setup() {
  local log_n=$1 backend=$2 dir=$3
  local log=$work/logs/setup-$curve-2^$log_n-$backend.log
  local constraints=$(( (1 << log_n) - 2 ))  # public 1: N + P + 1 = 2^log_n rows
  local t0 t1
  rm -rf "$dir"
  t0=$(date +%s.%N)
  "$proofline" setup --dev --curve "$curve" --constraints "$constraints" --public 1 \
    --witnesses "$witnesses" --seed "$log_n" --backend "$backend" --out "$dir" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  key_s=$(sed -n 's/.*wrote .*circuit.zkey .* in \([0-9.]*\) s$/\1/p' "$log" | tail -1)
  products_s=$(sed -n 's/.*key: \(A\|B1\|B2\|C\|H\) points \([0-9.]*\) s$/\2/p' "$log" |
               awk '{ s += $1 } END { printf "%.1f", s }')
  engine=$(sed -n 's/.*key: fixed-base products on \(.*\)$/\1/p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    tail -n 5 "$log" | sed 's/^/  | /' | tee -a "$summary"
    status=1
  fi
}

if [ "$check_log" != 0 ]; then
  setup "$check_log" "$backend" "$work/check-gpu"
  g_wall=$wall g_rc=$rc g_key=$key_s g_prod=$products_s g_engine=$engine
  setup "$check_log" cpu "$work/check-cpu"
  c_wall=$wall c_rc=$rc c_key=$key_s c_prod=$products_s
  same=no
  if [ "$g_rc" -eq 0 ] && [ "$c_rc" -eq 0 ] &&
     cmp -s "$work/check-gpu/circuit.zkey" "$work/check-cpu/circuit.zkey" &&
     cmp -s "$work/check-gpu/verification_key.json" "$work/check-cpu/verification_key.json"; then
    same=yes
  else
    status=1
  fi
  say "check 2^$check_log $curve: zkey and verification key identical with --backend $backend ($g_engine) and cpu: $same"
  rows+=("2^$check_log|$backend|$g_wall|$g_key|$g_prod|$same")
  rows+=("2^$check_log|cpu|$c_wall|$c_key|$c_prod|$same")
  rm -rf "$work/check-gpu" "$work/check-cpu"
fi

for log_n in $sizes; do
  setup "$log_n" "$backend" "$work/k$log_n"
  verdict=PASS
  if [ "$rc" -ne 0 ] || awk -v w="$wall" -v l="$limit" 'BEGIN { exit !(w > l) }'; then
    verdict=FAIL
    status=1
  fi
  zkey=$(du -h "$work/k$log_n/circuit.zkey" 2>/dev/null | cut -f1)
  rows+=("2^$log_n|$backend|$wall|$key_s|$products_s|$verdict (limit $limit s, zkey $zkey)")
  say "2^$log_n $curve on $engine: $wall s ($verdict); steps:"
  grep -E "circuit:|key:|wrote|setup done" "$work/logs/setup-$curve-2^$log_n-$backend.log" |
    sed 's/^\[[^]]*\] \[[^]]*\] /    /' | tee -a "$summary"
  rm -rf "$work/k$log_n"
done

say ""
say "| domain | backend | wall s | key s | fixed-base products s | result |"
say "|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  IFS='|' read -r a b c d e f <<<"$r"
  say "| $a | $b | $c | $d | $e | $f |"
done
tar czf "$out/bench-setup-gpu.tar.gz" -C "$work" logs
exit "$status"
