#!/usr/bin/env bash
# proofline run proves single-witness and multi-partition jobs of mixed
# priorities; every proof verifies with snarkjs, every public.json equals the
# public signals snarkjs computed for that witness, and each result.json
# lists its partitions with the contract's file names and spans; the same
# jobs again with --resident-pool.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 small small
stage bn254 medium medium
cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "one", "zkey": "in/small.zkey", "witness": "in/small_2.wtns", "out": "out/one", "priority": "low"},
  {"id": "four", "zkey": "in/small.zkey",
   "witnesses": ["in/small_0.wtns", "in/small_1.wtns", "in/small_2.wtns", "in/small_3.wtns"],
   "out": "out/four", "priority": "critical"},
  {"id": "mid", "zkey": "in/medium.zkey", "witness": "in/medium_1.wtns", "out": "out/mid"},
  {"id": "mid-pair", "zkey": "in/medium.zkey", "witnesses": ["in/medium_2.wtns", "in/medium_0.wtns"],
   "out": "nested/deeper/mid-pair", "priority": "high"}
]}
JSON

prove run 0 run jobs.json

small=$fixtures/bn254/small
medium=$fixtures/bn254/medium

check result out/one --id one --status done --partitions 1 --single
check files out/one proof.json public.json result.json
check proof-format out/one/proof.json bn128
check same-json out/one/public.json "$small/public_2.json"
verify "$small/verification_key.json" out/one

check result out/four --id four --status done --partitions 4
check files out/four proof_0.json proof_1.json proof_2.json proof_3.json \
  public_0.json public_1.json public_2.json public_3.json result.json
for i in 0 1 2 3; do
  check proof-format "out/four/proof_$i.json" bn128
  check same-json "out/four/public_$i.json" "$small/public_$i.json"
done
verify "$small/verification_key.json" out/four

check result out/mid --id mid --status done --partitions 1 --single
check same-json out/mid/public.json "$medium/public_1.json"
verify "$medium/verification_key.json" out/mid

check result nested/deeper/mid-pair --id mid-pair --status done --partitions 2
check same-json nested/deeper/mid-pair/public_0.json "$medium/public_2.json"
check same-json nested/deeper/mid-pair/public_1.json "$medium/public_0.json"
verify "$medium/verification_key.json" nested/deeper/mid-pair

# A proof of one circuit must not verify under another's key: guards against a
# verify step that accepts anything.
if "$repo/scripts/verify-proofs.sh" "$medium/verification_key.json" out/one >/dev/null 2>&1; then
  fail "a bn254/small proof verified under bn254/medium's key"
fi
# --resident-pool: the same jobs read into a pool of ordinary pages, sized
# for the first job's partitions (so those of "four", on the same key, come
# from pool blocks), proofs as good.
rm -rf out nested
prove resident 0 run jobs.json --resident-pool --log-level debug
log_names resident "of ordinary pages" "pool=1"
[ "$(grep -c 'SYNTH_TIMING job=four .* pool=1' resident.log)" -eq 4 ] ||
  fail "the partitions of job four were not read into the resident pool"

verify "$small/verification_key.json" out/four
verify "$medium/verification_key.json" nested/deeper/mid-pair
echo "PASS: run_jobs"
