#!/usr/bin/env bash
# The actor pipeline on the GPU host: one multi-job file (the bundled example,
# BN254 small and medium, BLS12-381 small; single and partitioned jobs,
# several priorities) proved by `proofline run --backend cuda`, once with two
# GPU-worker lanes per GPU (the default) and once with one; then
# `proofline bench prove` and `bench msm` at 2^20 through the CLI. Proofs,
# result.json files and verification keys come back in $OUT/pipeline.tar.gz
# for `snarkjs groth16 verify` here (the host has no node).
#
#   scripts/gpu-pipeline.sh CARRY_DIR      (a folder from gpu-bundle.sh unpack)
# Afterwards, here:
#   mkdir -p /tmp/gp && tar xzf <files_at>/pipeline.tar.gz -C /tmp/gp && scripts/gpu-pipeline-verify.sh /tmp/gp
# Environment: EXTRA_RUN_ARGS (added to both runs), SKIP_BENCH=1.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
carry=$(cd "${1:?usage: gpu-pipeline.sh CARRY_DIR}" && pwd)
out=${OUT:-$PWD/gpu-pipeline-out}
work=${WORK:-/tmp/proofline-gpu-pipeline}
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
pl=$carry/bin/proofline
fx=$root/tests/fixtures
rm -rf "$work"
mkdir -p "$work" "$out"

jobs() {  # jobs OUTDIR: the multi-job file, absolute paths
  local o=$1
  cat <<JSON
{"jobs": [
  {"id": "example-single", "zkey": "$root/examples/circuit.zkey", "witness": "$root/examples/witness_0.wtns", "out": "$o/example-single"},
  {"id": "example-batch", "zkey": "$root/examples/circuit.zkey", "priority": "high",
   "witnesses": ["$root/examples/witness_0.wtns", "$root/examples/witness_1.wtns", "$root/examples/witness_2.wtns", "$root/examples/witness_3.wtns"],
   "out": "$o/example-batch"},
  {"id": "bn254-small", "zkey": "$fx/bn254/small/circuit.zkey", "priority": "low",
   "witnesses": ["$fx/bn254/small/witness_0.wtns", "$fx/bn254/small/witness_1.wtns", "$fx/bn254/small/witness_2.wtns", "$fx/bn254/small/witness_3.wtns"],
   "out": "$o/bn254-small"},
  {"id": "bn254-medium", "zkey": "$fx/bn254/medium/circuit.zkey", "priority": "critical",
   "witnesses": ["$fx/bn254/medium/witness_0.wtns", "$fx/bn254/medium/witness_1.wtns", "$fx/bn254/medium/witness_2.wtns"],
   "out": "$o/bn254-medium"},
  {"id": "bls12-381-small", "zkey": "$fx/bls12_381/small/circuit.zkey",
   "witnesses": ["$fx/bls12_381/small/witness_0.wtns", "$fx/bls12_381/small/witness_1.wtns", "$fx/bls12_381/small/witness_2.wtns", "$fx/bls12_381/small/witness_3.wtns"],
   "out": "$o/bls12-381-small"}
]}
JSON
}

rc=0
for lanes in 2 1; do
  o=$work/lanes$lanes
  mkdir -p "$o"
  jobs "$o" > "$o/jobs.json"
  echo "== proofline run --backend cuda --gpu-lanes $lanes (16 partitions, 5 jobs)"
  # shellcheck disable=SC2086
  "$pl" run "$o/jobs.json" --backend cuda --gpu-lanes "$lanes" --log-level debug ${EXTRA_RUN_ARGS:-} \
    > "$o/stdout.txt" 2> "$o/log.txt"
  r=$?
  echo "exit $r"
  [ $r -eq 0 ] || rc=1
  cat "$o/stdout.txt"
  grep -E "backend|lane|error" "$o/log.txt" | head -8
done
# verification keys beside the proofs
mkdir -p "$work/vk"
cp "$root/examples/verification_key.json" "$work/vk/example.json"
cp "$fx/bn254/small/verification_key.json" "$work/vk/bn254-small.json"
cp "$fx/bn254/medium/verification_key.json" "$work/vk/bn254-medium.json"
cp "$fx/bls12_381/small/verification_key.json" "$work/vk/bls12-381-small.json"

if [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "== proofline bench prove / msm (2^20, CUDA)"
  "$pl" bench prove --log-n 20 --backend cuda --json "$work/bench.jsonl" 2>&1 | tee "$work/bench.txt" || rc=1
  "$pl" bench msm --log-n 20 --backend cuda --json "$work/bench-msm.jsonl" 2>&1 | tee -a "$work/bench.txt" || rc=1
fi
(cd "$work" && tar czf "$out/pipeline.tar.gz" .)
echo "== pipeline: exit $rc; $out/pipeline.tar.gz"
exit $rc
