#!/usr/bin/env bash
# A BLS12-381 job proves and its proofs verify with snarkjs; a BN254 job in
# the same file still proves alongside it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bls12_381 small bls
stage bn254 small bn
cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "bls-one", "zkey": "in/bls.zkey", "witness": "in/bls_1.wtns", "out": "out/bls-one"},
  {"id": "bls-three", "zkey": "in/bls.zkey", "witnesses": ["in/bls_0.wtns", "in/bls_2.wtns", "in/bls_3.wtns"],
   "out": "out/bls-three", "priority": "high"},
  {"id": "bn", "zkey": "in/bn.zkey", "witness": "in/bn_1.wtns", "out": "out/bn"}
]}
JSON

prove run 0 run jobs.json
bls=$fixtures/bls12_381/small
check result out/bls-one --id bls-one --status done --partitions 1 --single
check proof-format out/bls-one/proof.json bls12381
check same-json out/bls-one/public.json "$bls/public_1.json"
check result out/bls-three --id bls-three --status done --partitions 3
check same-json out/bls-three/public_0.json "$bls/public_0.json"
check same-json out/bls-three/public_1.json "$bls/public_2.json"
check same-json out/bls-three/public_2.json "$bls/public_3.json"
verify "$bls/verification_key.json" out/bls-one out/bls-three
check result out/bn --id bn --status done --partitions 1 --single
verify "$fixtures/bn254/small/verification_key.json" out/bn
echo "PASS: bls12_381"
