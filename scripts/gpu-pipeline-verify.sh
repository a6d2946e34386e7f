#!/usr/bin/env bash
# Verifies, here (snarkjs), the proofs gpu-pipeline.sh brought back from the
# GPU host: every proof of both runs against its circuit's verification key.
#   scripts/gpu-pipeline-verify.sh DIR     (DIR: pipeline.tar.gz unpacked)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
d=${1:?usage: gpu-pipeline-verify.sh DIR}
rc=0
for run in "$d"/lanes*; do
  "$root/scripts/verify-proofs.sh" "$d/vk/example.json" "$run/example-single" "$run/example-batch" || rc=1
  "$root/scripts/verify-proofs.sh" "$d/vk/bn254-small.json" "$run/bn254-small" || rc=1
  "$root/scripts/verify-proofs.sh" "$d/vk/bn254-medium.json" "$run/bn254-medium" || rc=1
  "$root/scripts/verify-proofs.sh" "$d/vk/bls12-381-small.json" "$run/bls12-381-small" || rc=1
done
exit $rc
