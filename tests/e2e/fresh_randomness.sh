#!/usr/bin/env bash
# Proving the same witness twice gives two different proofs (fresh r and s
# from the OS for every proof) that both verify, across jobs and across the
# partitions of one job.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 small small
cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "first", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/first"},
  {"id": "second", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/second"},
  {"id": "twice", "zkey": "in/small.zkey", "witnesses": ["in/small_0.wtns", "in/small_0.wtns"], "out": "out/twice"}
]}
JSON

prove run 0 run jobs.json
small=$fixtures/bn254/small
check result out/first --id first --status done --partitions 1 --single
check result out/second --id second --status done --partitions 1 --single
check result out/twice --id twice --status done --partitions 2
check differ out/first/proof.json out/second/proof.json
check differ out/twice/proof_0.json out/twice/proof_1.json
check differ out/first/proof.json out/twice/proof_0.json
check differ out/second/proof.json out/twice/proof_1.json
for f in out/first/public.json out/second/public.json out/twice/public_0.json out/twice/public_1.json; do
  check same-json "$f" "$small/public_0.json"
done
verify "$small/verification_key.json" out/first out/second out/twice

# A second run writes new proofs again, over the old outputs.
cp out/first/proof.json first-run-proof.json
prove rerun 0 run jobs.json
check differ first-run-proof.json out/first/proof.json
verify "$small/verification_key.json" out/first
echo "PASS: fresh_randomness"
