#!/usr/bin/env bash
# The MSM level-1 kernels (PROOFLINE_MSM_KERNEL) and window reductions
# (PROOFLINE_MSM_REDUCE, gpu/cuda/msm/tuning.hpp) against each other on
# the GPU host, in one call (issue 14): correctness first, then timings.
#
#   scripts/bench-kernels-msm.sh CARRY_DIR
#       CARRY_DIR: the unpacked bundle (bin/, lib/; scripts/gpu-bundle.sh):
#         d=$(scripts/gpu-bundle.sh unpack .carry/gpu) && scripts/bench-kernels-msm.sh $d
#
# 1. cuda_gpu_test: every level-1 kernel and every window reduction against
#    the CPU backend bit for bit (skewed inputs, plain and fixed base,
#    chunked), then the MSM cases up to 2^MSM_TEST_LOG_N with the defaults.
# 2. proofline-bench under each PROOFLINE_MSM_KERNEL: msm_g2 (BN254) at 2^20 and 2^22
#    under G2_KERNELS, msm (BN254 G1) at 2^20 and 2^22 under BN_G1_KERNELS,
#    msm on BLS12-381 at 2^20 under BLS_G1_KERNELS, msm_g2 on BLS12-381 at
#    2^20 under BLS_G2_KERNELS; then, with the default level-1 kernel,
#    each window reduction in REDUCES: msm (BN254) at 2^20-2^24, msm_g2 at
#    2^20 and 2^22, msm and msm_g2 on BLS12-381 at 2^20.
# 3. A table of medians on stdout and in $OUT/summary.txt; the logs and the
#    JSON lines in $OUT/bench-kernels-msm.tar.gz.
#
# Environment:
#   OUT              results folder (default ./bench-kernels-msm-out)
#   G2_KERNELS, BN_G1_KERNELS, BLS_G1_KERNELS, BLS_G2_KERNELS
#                    level-1 kernels to time (msm::parse_level1's spelling;
#                    default: both, xyzz and xyzz:lazy)
#   REDUCES="block block:t7:r2"  window reductions to time
#                    (msm::parse_reduce's spelling)
#   RUNS=10          timed runs per size (the figure is their median)
#   MSM_TEST_LOG_N=14  largest G1 MSM size step 1 checks
#   SKIP_TESTS=1     timings only
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"

bench_kernels_setup bench-kernels-msm "${1:?usage: bench-kernels-msm.sh CARRY_DIR (bin/ and lib/ of scripts/gpu-bundle.sh)}"
runs=${RUNS:-10}
g2_kernels=${G2_KERNELS:-"xyzz xyzz:lazy"}
bn_g1_kernels=${BN_G1_KERNELS:-"xyzz xyzz:lazy"}
bls_g1_kernels=${BLS_G1_KERNELS:-"xyzz xyzz:lazy"}
bls_g2_kernels=${BLS_G2_KERNELS:-"xyzz xyzz:lazy"}
reduces=${REDUCES:-"block block:t7:r2"}

# ---- 1. correctness ----------------------------------------------------------
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  bench_gtest "level-1 kernels" test-level1 'both level-1*'
  bench_gtest "window reductions" test-reduce 'every window reduction*'
  TIMEOUT=120 bench_gtest MSM test-msm 'MSMs*' PROOFLINE_GPU_TEST_LOG_N="${MSM_TEST_LOG_N:-14}"
fi

# ---- 2. timings ----------------------------------------------------------------
run_bench() {  # WHAT CURVE LOG_N LOG_N_TO KERNEL [REDUCE]
  local what=$1 curve=$2 lo=$3 hi=$4 k=$5 r=${6:-} tag
  tag="$what-$curve${k:+-${k//:/_}}${r:+-${r//:/_}}"
  PROOFLINE_MSM_KERNEL=$k PROOFLINE_MSM_REDUCE=$r timeout 120 "$bench" "$what" --backend cuda --curve "$curve" --log-n "$lo" \
    --log-n-to "$hi" --step 2 --runs "$runs" --warmup 2 --json "$work/$tag.jsonl" > "$work/logs/$tag.log" 2>&1 || {
    note "bench $what $curve $k: failed (logs/$tag.log)"
    failed=1
  }
}
for k in $g2_kernels; do run_bench msm_g2 bn254 20 22 "$k"; done
for k in $bn_g1_kernels; do run_bench msm bn254 20 22 "$k"; done
for k in $bls_g1_kernels; do run_bench msm bls12_381 20 20 "$k"; done
for k in $bls_g2_kernels; do run_bench msm_g2 bls12_381 20 20 "$k"; done
for r in $reduces; do
  run_bench msm bn254 20 24 "" "$r"
  run_bench msm_g2 bn254 20 22 "" "$r"
  run_bench msm bls12_381 20 20 "" "$r"
  run_bench msm_g2 bls12_381 20 20 "" "$r"
done

# ---- 3. table --------------------------------------------------------------------
{
  echo
  echo "medians in ms (targets: BN254 G2 2^20 <= 15, 2^22 <= 48; BN254 G1 2^20 <= 6; BLS12-381 G1 2^20 <= 12)"
  bench_medians "$work" file
} | tee -a "$summary"
bench_finish "$work" "$out" bench-kernels-msm "$failed"
