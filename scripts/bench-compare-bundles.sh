#!/usr/bin/env bash
# Kernel and proof times of two builds on one GPU, interleaved, so that a
# change expected to move nothing (or something) is measured against the
# code before it in the same call (docs/BENCHMARKS.md).
#
#   scripts/bench-compare-bundles.sh OLD_CARRY NEW_CARRY [OUT_DIR]
#       (GPU host) OLD_CARRY and NEW_CARRY are folders that
#       `scripts/gpu-bundle.sh pack` wrote (bundle.tar.xz); each is unpacked
#       under /tmp. For ROUNDS rounds (default 2), old then new:
#       `proofline-bench` msm 2^20 and 2^24, msm_g2 2^20, ntt 2^20..2^24,
#       prove 2^20 and 2^24, RUNS timed runs each (default 5); then, with
#       MSM_KERNELS="affine affine:k7" (the default; empty: none), the new
#       build's MSMs again under each PROOFLINE_MSM_KERNEL spelling. Prints
#       one line per figure (tag, what, median ms) and writes each bench's
#       log and JSON under OUT_DIR (default $PWD/compare-out).
set -uo pipefail
old_carry=${1:?usage: bench-compare-bundles.sh OLD_CARRY NEW_CARRY [OUT_DIR]}
new_carry=${2:?usage: bench-compare-bundles.sh OLD_CARRY NEW_CARRY [OUT_DIR]}
out=${3:-$PWD/compare-out}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$out"
old=$("$root/scripts/gpu-bundle.sh" unpack "$old_carry" /tmp/compare-old) || exit 1
new=$("$root/scripts/gpu-bundle.sh" unpack "$new_carry" /tmp/compare-new) || exit 1
echo "# old: $(head -1 "$old/build-info.txt"); new: $(head -1 "$new/build-info.txt")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'

# one TAG DIR NAME KERNEL ARGS...: one bench, its medians printed.
one() {
  local tag=$1 dir=$2 name=$3 kernel=$4
  shift 4
  env ${kernel:+PROOFLINE_MSM_KERNEL=$kernel} LD_LIBRARY_PATH="$dir/lib" timeout 180 \
    "$dir/bin/proofline-bench" "$@" --runs "${RUNS:-5}" --json "$out/$tag-$name.json" \
    > "$out/$tag-$name.log" 2>&1 || echo "$tag $name: exit $?"
  awk -v t="$tag" '$4 == "cuda" && $5 ~ /^[0-9.]+$/ {print t, $1, $2, "2^" $3, $5, "ms"}' "$out/$tag-$name.log"
}
benches=("msm --log-n 20" "msm --log-n 24" "msm_g2 --log-n 20" "ntt --log-n 20 --log-n-to 24 --step 4"
         "prove --log-n 20" "prove --log-n 24")
for round in $(seq "${ROUNDS:-2}"); do
  for tag in old new; do
    dir=$old; [ "$tag" = new ] && dir=$new
    for b in "${benches[@]}"; do
      # shellcheck disable=SC2086
      one "$tag" "$round-$(echo "$b" | tr ' ' '_' | tr -d '-')" "" $b
    done
  done
done
for k in ${MSM_KERNELS-affine affine:k7}; do
  for b in "msm --log-n 16" "msm --log-n 20" "msm --log-n 24" "msm_g2 --log-n 20"; do
    # shellcheck disable=SC2086
    one "new[$k]" "$(echo "$k-$b" | tr ' :' '__' | tr -d '-')" "$k" $b
  done
done
