#!/usr/bin/env bash
# Faults and one-shot proving on the GPU host (issue 11), a minute or two:
#  1. `proofline prove --backend cuda` on the bundled example, from a file and
#     from standard input, each checked with `proofline verify`;
#  2. the example's jobs with PROOFLINE_FAULT_INJECT=corrupt:all on CUDA: every
#     partition is proved twice on the GPU, then by the CPU fallback
#     (result.json: retries 2, backend cpu:fallback), and verified;
#  3. the same with throw:2,corrupt:4: each retried once on the GPU (result.json:
#     retries 1, backend cuda:0), every proof verified.
# Proofs, result.json files and the key come back in $OUT/faults.tar.gz for
# `snarkjs groth16 verify` here (the host has no node).
#
#   scripts/gpu-faults.sh CARRY_DIR      (a folder from gpu-bundle.sh unpack)
# Afterwards, here:
#   mkdir -p /tmp/gf && tar xzf <files_at>/faults.tar.gz -C /tmp/gf &&
#   scripts/verify-proofs.sh examples/verification_key.json /tmp/gf/prove /tmp/gf/{all,some}/out/{single,batch}
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
carry=$(cd "${1:?usage: gpu-faults.sh CARRY_DIR}" && pwd)
out=${OUT:-$PWD/gpu-faults-out}
work=${WORK:-/tmp/proofline-gpu-faults}
export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
pl=$carry/bin/proofline
backend=${BACKEND:-cuda}  # BACKEND=cpu: a dry run of this script without a GPU (no fallback: "all" fails)
ex=$root/examples
rm -rf "$work"
mkdir -p "$work/prove" "$out"
rc=0
step() { echo "== $*"; }

step "proofline prove --backend cuda (file, then stdin)"
"$pl" prove --backend "$backend" --log-level info "$ex/circuit.zkey" "$ex/witness_0.wtns" \
  "$work/prove/proof.json" "$work/prove/public.json" 2>"$work/prove/log.txt"
echo "exit $?"
"$pl" prove --backend "$backend" "$ex/circuit.zkey" - "$work/prove/proof_1.json" "$work/prove/public_1.json" \
  <"$ex/witness_1.wtns" 2>>"$work/prove/log.txt"
echo "exit $?"
"$pl" verify "$ex/verification_key.json" "$work/prove/public.json" "$work/prove/proof.json" || rc=1
"$pl" verify "$ex/verification_key.json" "$work/prove/public_1.json" "$work/prove/proof_1.json" || rc=1

for case in "all corrupt:all" "some throw:2,corrupt:4"; do
  set -- $case
  name=$1 faults=$2
  step "proofline run --backend cuda, PROOFLINE_FAULT_INJECT=$faults"
  mkdir -p "$work/$name"
  PROOFLINE_FAULT_INJECT=$faults "$pl" run "$ex/jobs.json" --backend "$backend" --out-root "$work/$name" \
    >"$work/$name/stdout.txt" 2>"$work/$name/log.txt"
  r=$?
  echo "exit $r"
  [ $r -eq 0 ] || rc=1
  cat "$work/$name/stdout.txt"
  grep -E "proving it again|device lost|error" "$work/$name/log.txt" | head -6
  for res in "$work/$name"/out/*/result.json; do
    python3 - "$res" <<'PY' || rc=1
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["partitions"]:
    print(r["id"], p["index"], p["status"], "verified" if p["verified"] else "UNCHECKED",
          "retries", p["retries"], "backend", p.get("backend"))
assert r["status"] == "done" and all(p["verified"] for p in r["partitions"]), r
PY
  done
  for proof in "$work/$name"/out/*/proof*.json; do
    [ -e "$proof" ] || continue
    b=$(basename "$proof")
    pub=$(dirname "$proof")/${b/proof/public}
    "$pl" verify "$ex/verification_key.json" "$pub" "$proof" >/dev/null || { echo "INVALID $proof"; rc=1; }
  done
done
(cd "$work" && tar czf "$out/faults.tar.gz" .)
echo "== faults: exit $rc; $out/faults.tar.gz"
exit $rc
