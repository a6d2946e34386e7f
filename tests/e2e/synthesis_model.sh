#!/usr/bin/env bash
# `proofline run --synthesis-model lc` (a, b, c computed while allocating
# like a bellperson-style prover) writes proofs that snarkjs accepts, on
# BN254 and BLS12-381; an unknown model is a usage error.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 medium bn
stage bls12_381 small bls
cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "bn", "zkey": "in/bn.zkey", "witnesses": ["in/bn_0.wtns", "in/bn_1.wtns"], "out": "out/bn"},
  {"id": "bls", "zkey": "in/bls.zkey", "witness": "in/bls_2.wtns", "out": "out/bls"}
]}
JSON

prove lc 0 run jobs.json --backend cpu --synthesis-model lc
check result out/bn --id bn --status done --partitions 2
check result out/bls --id bls --status done --partitions 1 --single
check same-json out/bn/public_1.json "$fixtures/bn254/medium/public_1.json"
verify "$fixtures/bn254/medium/verification_key.json" out/bn
verify "$fixtures/bls12_381/small/verification_key.json" out/bls

prove bad-model 2 run jobs.json --backend cpu --synthesis-model bellman
grep -q "synthesis-model" bad-model.log || fail "the usage error does not name --synthesis-model"
echo "PASS: synthesis_model"
