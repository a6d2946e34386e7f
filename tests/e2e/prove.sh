#!/usr/bin/env bash
# `proofline prove ZKEY WITNESS PROOF PUBLIC` (rapidsnark's order) on the
# bundled example:
#  * a proof from a file and one from standard input (-), each accepted by
#    snarkjs and by `proofline verify`; the public signals equal those of
#    `snarkjs groth16 prove` on the same witness;
#  * input errors exit 2 naming the file: a missing key, a missing witness,
#    a witness of another circuit, an output directory that cannot be
#    written (refused before any backend starts);
#  * a witness that does not satisfy the circuit exits 2 naming it, after
#    one retry on the only backend;
#  * a backend that fails every proof exits 1, naming the partition and
#    the backend, and writes nothing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ex=$repo/examples
mkdir -p out stdin e bad nv  # prove writes into existing directories only
zkey=$ex/circuit.zkey
vkey=$ex/verification_key.json

"$proofline" --help >help.txt
grep -q "prove" help.txt || fail "proofline --help does not list prove"

# ---- proofs, verified both ways
prove file 0 prove "$zkey" "$ex/witness_0.wtns" out/proof.json out/public.json --backend cpu
log_names file "out/proof.json" "verified by pairing" "cpu:0"
[ -s out/proof.json ] && [ -s out/public.json ] || fail "prove wrote no proof"
"$snarkjs" groth16 verify "$vkey" out/public.json out/proof.json >/dev/null ||
  fail "snarkjs rejects the proof of proofline prove"
"$proofline" verify "$vkey" out/public.json out/proof.json >/dev/null ||
  fail "proofline verify rejects the proof of proofline prove"
"$proofline" verify "$zkey" out/public.json out/proof.json >/dev/null ||
  fail "proofline verify (with the .zkey) rejects the proof of proofline prove"
ls -A out | grep -q '\.tmp' && fail "temporary files left in out/: $(ls -A out)"

echo "+ proofline prove $zkey - stdin/proof.json stdin/public.json < witness_1.wtns"
"$proofline" prove --backend cpu "$zkey" - stdin/proof.json stdin/public.json \
  <"$ex/witness_1.wtns" >stdin.log 2>&1 || { cat stdin.log >&2; fail "prove from stdin"; }
"$snarkjs" groth16 verify "$vkey" stdin/public.json stdin/proof.json >/dev/null ||
  fail "snarkjs rejects the proof of a witness read from stdin"
"$proofline" verify "$vkey" stdin/public.json stdin/proof.json >/dev/null ||
  fail "proofline verify rejects the proof of a witness read from stdin"

# The same files from snarkjs: the public signals agree (the proofs differ:
# fresh random r, s each time).
"$snarkjs" groth16 prove "$zkey" "$ex/witness_1.wtns" snarkjs_proof.json snarkjs_public.json \
  >/dev/null || fail "snarkjs groth16 prove"
python3 - stdin/public.json snarkjs_public.json <<'PY' || fail "public.json differs from snarkjs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a == b, (a, b)
PY

# ---- input errors: exit 2, the file named
prove nokey 2 prove missing.zkey "$ex/witness_0.wtns" e/proof.json e/public.json --backend cpu
log_names nokey missing.zkey
prove nowtns 2 prove "$zkey" missing.wtns e/proof.json e/public.json --backend cpu
log_names nowtns missing.wtns
other=$fixtures/bn254/small/witness_0.wtns
prove wrongwtns 2 prove "$zkey" "$other" e/proof.json e/public.json --backend cpu
log_names wrongwtns "$other" "witness values" "$zkey"
: | "$proofline" prove --backend cpu "$zkey" - e/proof.json e/public.json >empty.log 2>&1 && fail "an empty stdin was accepted"
grep -q "standard input" empty.log || fail "empty stdin not named: $(cat empty.log)"
[ ! -e e/proof.json ] || fail "a failed prove wrote e/proof.json"

# A missing output directory is a usage error naming the path, not created.
prove nodir 2 prove "$zkey" "$ex/witness_0.wtns" missing-dir/proof.json public.json --backend cpu
log_names nodir "missing-dir/proof.json" "does not exist"
[ ! -e missing-dir ] || fail "prove created missing-dir/"

# An output directory that cannot be created (a file stands in the way; this
# holds for root too): refused before a backend is chosen.
touch blocker
prove unwritable 2 prove "$zkey" "$ex/witness_0.wtns" blocker/proof.json out2/public.json \
  --backend cpu --log-level info
log_names unwritable "blocker/proof.json"
grep -q "backend:" unwritable.log && fail "a backend started before the output check: $(cat unwritable.log)"

# ---- a witness that does not satisfy the circuit (one value changed): an
# input error (exit 2) naming the witness, retried once on the only backend
# and no further, nothing written
python3 - "$ex/witness_0.wtns" unsat.wtns <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) - 32] ^= 1  # the low byte of the last witness value
open(sys.argv[2], "wb").write(b)
PY
prove unsat 2 prove "$zkey" unsat.wtns bad/proof.json bad/public.json --backend cpu
log_names unsat "unsat.wtns: the witness does not satisfy the circuit of $zkey" "pairing check"
[ "$(grep -c "proving it again" unsat.log)" = 1 ] || fail "unsat.wtns was retried more than once: $(cat unsat.log)"
[ ! -e bad/proof.json ] && [ ! -e bad/public.json ] || fail "a proof that failed its check was written"

# ---- the same witness against the circuit's constraints (--r1cs): refused
# before any proving, naming the first constraint it breaks, the one
# snarkjs's own check stops at
r1cs=$ex/circuit.r1cs
"$snarkjs" wtns check "$r1cs" unsat.wtns >wtns_check.log 2>&1 || true
broken=$(sed -n 's/.*aborting checking process at constraint \([0-9][0-9]*\).*/\1/p' wtns_check.log)
[ -n "$broken" ] || fail "snarkjs wtns check names no broken constraint: $(cat wtns_check.log)"
prove unsat_r1cs 2 prove "$zkey" unsat.wtns bad/proof.json bad/public.json --backend cpu --r1cs "$r1cs"
log_names unsat_r1cs "unsat.wtns: the witness does not satisfy the circuit: constraint $broken (counting from 0) of the 3916 in $r1cs"
grep -q "pairing check\|proving it again" unsat_r1cs.log &&
  fail "the witness was proved although --r1cs shows it breaks a constraint: $(cat unsat_r1cs.log)"
[ ! -e bad/proof.json ] || fail "a proof of an unsatisfying witness was written"
prove sat_r1cs 0 prove "$zkey" "$ex/witness_1.wtns" out/proof_r1cs.json out/public_r1cs.json \
  --backend cpu --r1cs "$r1cs"
"$snarkjs" groth16 verify "$vkey" out/public_r1cs.json out/proof_r1cs.json >/dev/null ||
  fail "snarkjs rejects the proof made with --r1cs"
# An .r1cs of another circuit: refused before anything runs, naming it.
"$repo/node_modules/.bin/circom2" "$repo/tests/fixtures/circuits/small.circom" --r1cs -o . >/dev/null
prove wrong_r1cs 2 prove "$zkey" "$ex/witness_1.wtns" bad/proof.json bad/public.json \
  --backend cpu --r1cs "$PWD/small.r1cs"
log_names wrong_r1cs "$PWD/small.r1cs:" "not this key's circuit"
# A job's "r1cs" in `run`: the unsatisfying partition fails at once as an
# input error naming its witness and the constraint; the others are proved.
mkdir -p checked_in
cp unsat.wtns "$ex/witness_1.wtns" "$ex/witness_2.wtns" checked_in/
printf '{"jobs": [{"id": "checked", "zkey": "%s", "r1cs": "%s", "out": "checked",
  "witnesses": ["checked_in/witness_1.wtns", "checked_in/unsat.wtns", "checked_in/witness_2.wtns"]}]}\n' \
  "$zkey" "$r1cs" >r1cs_jobs.json
prove run_r1cs 1 run r1cs_jobs.json --backend cpu
python3 - checked/result.json "$broken" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
parts = r["partitions"]
states = [p["status"] for p in parts]
assert states == ["done", "failed", "done"], states
err = parts[1]["error"]
assert err["file"].endswith("checked_in/unsat.wtns"), err
assert "constraint " + sys.argv[2] + " (counting from 0)" in err["message"], err
assert parts[1].get("retries", 0) == 0, parts[1]
PY
for i in 0 2; do
  "$snarkjs" groth16 verify "$vkey" checked/public_$i.json checked/proof_$i.json >/dev/null ||
    fail "snarkjs rejects proof $i of the job with an r1cs"
done

# ---- proving that fails: exit 1, partition and backend named, nothing written
PROOFLINE_FAULT_INJECT=throw:all prove broken 1 prove "$zkey" "$ex/witness_0.wtns" \
  bad/proof.json bad/public.json --backend cpu
log_names broken "partition 0" "cpu:0" "injected fault"
[ ! -e bad/proof.json ] && [ ! -e bad/public.json ] || fail "a failed proof was written"

prove unchecked 0 prove "$zkey" "$ex/witness_2.wtns" nv/proof.json nv/public.json --backend cpu --no-verify
log_names unchecked "not checked"
"$snarkjs" groth16 verify "$vkey" nv/public.json nv/proof.json >/dev/null || fail "snarkjs rejects the --no-verify proof"
echo "PASS: prove"
