#!/usr/bin/env bash
# A job file mixing good jobs with broken ones (truncated witness, witness of
# another circuit, witness of another curve, missing witness, zkey with a
# corrupt magic, a FIFO as witness and as zkey) exits 1 without waiting on the
# FIFOs; the good jobs' proofs verify, and each broken job
# has a result.json with status "failed" and an error naming the bad file.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 small small
stage bn254 medium medium
stage bls12_381 small bls
size=$(stat -c %s in/small_0.wtns)
head -c $((size / 2)) in/small_0.wtns >in/truncated.wtns
cp in/small.zkey in/corrupt.zkey
printf 'zkez' | dd of=in/corrupt.zkey bs=1 seek=0 count=4 conv=notrunc status=none
[ "$(head -c 4 in/corrupt.zkey)" = "zkez" ] || fail "could not corrupt in/corrupt.zkey"
[ ! -e in/absent.wtns ] || fail "in/absent.wtns should not exist"
mkfifo in/fifo.wtns in/fifo.zkey

cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "good-one", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/good-one"},
  {"id": "truncated", "zkey": "in/small.zkey", "witness": "in/truncated.wtns", "out": "out/truncated"},
  {"id": "wrong-circuit", "zkey": "in/medium.zkey", "witness": "in/small_1.wtns", "out": "out/wrong-circuit"},
  {"id": "wrong-curve", "zkey": "in/small.zkey", "witness": "in/bls_0.wtns", "out": "out/wrong-curve"},
  {"id": "missing", "zkey": "in/small.zkey",
   "witnesses": ["in/small_1.wtns", "in/absent.wtns", "in/small_3.wtns"], "out": "out/missing"},
  {"id": "corrupt-zkey", "zkey": "in/corrupt.zkey", "witness": "in/small_2.wtns", "out": "out/corrupt-zkey",
   "priority": "critical"},
  {"id": "good-four", "zkey": "in/small.zkey",
   "witnesses": ["in/small_0.wtns", "in/small_1.wtns", "in/small_2.wtns", "in/small_3.wtns"],
   "out": "out/good-four", "priority": "low"},
  {"id": "good-mid", "zkey": "in/medium.zkey", "witness": "in/medium_2.wtns", "out": "out/good-mid",
   "priority": "high"},
  {"id": "fifo-witness", "zkey": "in/small.zkey", "witness": "in/fifo.wtns", "out": "out/fifo-witness"},
  {"id": "fifo-zkey", "zkey": "in/fifo.zkey", "witness": "in/small_0.wtns", "out": "out/fifo-zkey"}
]}
JSON

prove run 1 run jobs.json

small=$fixtures/bn254/small
medium=$fixtures/bn254/medium

# Good jobs are untouched by their broken neighbours.
check result out/good-one --id good-one --status done --partitions 1 --single
check same-json out/good-one/public.json "$small/public_0.json"
check result out/good-four --id good-four --status done --partitions 4
check result out/good-mid --id good-mid --status done --partitions 1 --single
check same-json out/good-mid/public.json "$medium/public_2.json"
verify "$small/verification_key.json" out/good-one out/good-four
verify "$medium/verification_key.json" out/good-mid

# Broken jobs fail alone, each naming its bad file.
check result out/truncated --id truncated --status failed --culprit truncated.wtns
check result out/wrong-circuit --id wrong-circuit --status failed --culprit small_1.wtns
check result out/wrong-curve --id wrong-curve --status failed --culprit bls_0.wtns
check result out/missing --id missing --status failed --culprit absent.wtns
check result out/corrupt-zkey --id corrupt-zkey --status failed --culprit corrupt.zkey
check result out/fifo-witness --id fifo-witness --status failed --culprit fifo.wtns
check result out/fifo-zkey --id fifo-zkey --status failed --culprit fifo.zkey
grep -q "not a regular file (a FIFO)" out/fifo-witness/result.json ||
  fail "the FIFO witness's error does not say what is wrong: $(cat out/fifo-witness/result.json)"
for job in truncated wrong-circuit wrong-curve corrupt-zkey fifo-witness fifo-zkey; do
  if compgen -G "out/$job/proof*.json" >/dev/null; then
    fail "out/$job holds a proof although its only partition is broken"
  fi
done
# Partitions of the missing-witness job that were proved are kept and verify.
if compgen -G "out/missing/proof*.json" >/dev/null; then
  verify "$small/verification_key.json" out/missing
fi

# The count mismatch states both counts (witness values vs the key's nVars).
small_vars=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wires"])' "$small/info.json")
medium_vars=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wires"])' "$medium/info.json")
python3 - "$small_vars" "$medium_vars" <<'PY' || fail "wrong-circuit error does not state both counts"
import json, sys
err = json.load(open("out/wrong-circuit/result.json"))["error"]
text = err["file"] + " " + err["message"]
missing = [n for n in sys.argv[1:] if n not in text]
if missing:
    print(f"FAIL: error {err!r} does not mention {missing}", file=sys.stderr)
    sys.exit(1)
PY
echo "PASS: broken_jobs"
