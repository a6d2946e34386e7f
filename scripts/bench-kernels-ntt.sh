#!/usr/bin/env bash
# The NTT kernels old against new on the GPU host, in one call (issue 14):
# correctness first, then timings.
#
#   scripts/bench-kernels-ntt.sh CARRY_DIR
#       CARRY_DIR: the unpacked bundle (bin/, lib/; scripts/gpu-bundle.sh):
#         d=$(scripts/gpu-bundle.sh unpack .carry/gpu) && scripts/bench-kernels-ntt.sh $d
#
# 1. cuda_gpu_test: the NTT and odd-coset case (every NTT kernel below, sizes
#    up to 2^GPU_TEST_LOG_N, against the CPU backend bit for bit), the MSM
#    cases, and whole partitions with PROOFLINE_NTT_KERNEL set to the new
#    kernel (the backend's proofs against the CPU backend's).
# 2. proofline-bench ntt at 2^20, 2^22, 2^24 for the old kernel (tiled) and
#    each fused shape in KERNELS; ntt_coset (the proof's step) for tiled and
#    the first two fused shapes; msm_g2 at 2^20 and 2^22.
# 3. A table of medians on stdout and in $OUT/summary.txt; the logs and the
#    JSON lines in $OUT/bench-kernels-ntt.tar.gz.
#
# Environment:
#   OUT              results folder (default ./bench-kernels-ntt-out)
#   KERNELS          fused shapes to time (ntt::parse_kernel's spelling); each
#                    must be in cuda_gpu_test's list so step 1 checked it
#   RUNS=20          timed runs per size (the figure is their median)
#   GPU_TEST_LOG_N=20  largest NTT size step 1 checks
#   MSM_TEST_LOG_N=14  largest G1 MSM size step 1 checks (the MSM kernels are unchanged)
#   SKIP_TESTS=1     timings only
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"

bench_kernels_setup bench-kernels-ntt "${1:?usage: bench-kernels-ntt.sh CARRY_DIR (bin/ and lib/ of scripts/gpu-bundle.sh)}"
runs=${RUNS:-20}
kernels=${KERNELS:-"fused:t11:c1:r2:b256 fused:t10:c1:r2:b128 fused:t10:c1:r3:b128 fused:t10:c1:r1:b256 fused:t11:c1:r1:b256 fused:t11:c0:r2:b256 fused:t12:c0:r2:b512"}
read -r -a shapes <<< "$kernels"

# ---- 1. correctness ----------------------------------------------------------
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  bench_gtest "NTT (all kernels, up to 2^${GPU_TEST_LOG_N:-20})" test-ntt 'NTTs*' \
    PROOFLINE_GPU_TEST_LOG_N="${GPU_TEST_LOG_N:-20}"
  TIMEOUT=120 bench_gtest MSM test-msm 'MSMs on the GPU*' PROOFLINE_GPU_TEST_LOG_N="${MSM_TEST_LOG_N:-14}"
  TIMEOUT=120 bench_gtest "whole partitions with PROOFLINE_NTT_KERNEL=${shapes[0]}" test-prove-fused \
    'whole partitions*' PROOFLINE_NTT_KERNEL="${shapes[0]}"
fi

# ---- 2. timings ----------------------------------------------------------------
run_bench() {  # WHAT LOG_N LOG_N_TO KERNEL(or -) TAG
  local what=$1 lo=$2 hi=$3 k=$4 tag=$5 args=()
  [ "$k" = - ] || args=(--ntt-kernel "$k")
  timeout 120 "$bench" "$what" --backend cuda --log-n "$lo" --log-n-to "$hi" --step 2 --runs "$runs" --warmup 3 \
    "${args[@]}" --json "$work/$what.jsonl" > "$work/logs/$what-$tag.log" 2>&1 || {
    note "bench $what $k: failed (logs/$what-$tag.log)"
    failed=1
  }
}
run_bench ntt 20 24 tiled old
i=0
for k in "${shapes[@]}"; do
  run_bench ntt 20 24 "$k" "new$i"
  i=$((i + 1))
done
run_bench ntt_coset 20 24 tiled old
run_bench ntt_coset 20 24 "${shapes[0]}" new0
[ "${#shapes[@]}" -gt 1 ] && run_bench ntt_coset 20 24 "${shapes[1]}" new1
run_bench msm_g2 20 22 - g2

# ---- 3. table --------------------------------------------------------------------
{
  echo
  echo "medians in ms (targets: ntt 2^20 <= 0.25, 2^24 <= 4.0; msm_g2 2^20 <= 15, 2^22 <= 48)"
  bench_medians "$work" kernel
} | tee -a "$summary"
bench_finish "$work" "$out" bench-kernels-ntt "$failed"
