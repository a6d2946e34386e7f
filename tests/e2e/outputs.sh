#!/usr/bin/env bash
# What an operator sees of outputs and failures: an out directory that
# cannot be written fails its job before anything is proved (the others
# prove); a --report path that cannot be written is a usage error before
# proving; --quiet still prints every failed job with its error; a new job in
# an out directory removes the proofs an earlier job left there.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 small small
stage bn254 medium medium

cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "good", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/good"},
  {"id": "in-proc", "zkey": "in/small.zkey", "witness": "in/small_1.wtns", "out": "/proc/proofline-x"},
  {"id": "under-file", "zkey": "in/small.zkey", "witness": "in/small_2.wtns", "out": "in/small.zkey/out"}
]}
JSON
prove unwritable 1 run jobs.json
log_names unwritable "in-proc" "/proc/proofline-x: cannot create the directory" \
  "under-file" "in/small.zkey/out: cannot create the directory"
check result out/good --id good --status done --partitions 1 --single
verify "$fixtures/bn254/small/verification_key.json" out/good
# Nothing was proved for the unwritable jobs: no GPU/prove span mentions them.
! grep -q "job=in-proc\|job=under-file" unwritable.log || fail "an unwritable job was proved"

# A report that cannot be written stops the run before it proves anything.
rm -rf out
prove badreport 2 run jobs.json --report /proc/proofline-x/report.json
log_names badreport "/proc/proofline-x/report.json"
[ ! -e out ] || fail "the run proved although its report path cannot be written"

# --quiet: silent when all is well, but every failure is printed.
cat >mixed.json <<'JSON'
{"jobs": [
  {"id": "fine", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "q/fine"},
  {"id": "mismatch", "zkey": "in/medium.zkey", "witness": "in/small_1.wtns", "out": "q/mismatch"}
]}
JSON
prove quiet 1 run -q mixed.json
log_names quiet "job mismatch failed" "small_1.wtns"
! grep -q "fine" quiet.log || fail "--quiet printed the job that succeeded"
# A second run into the same out directory leaves no proof of the first
# beside its result: 4 partitions, then 2, then a single proof.
four='{"jobs": [{"id": "r", "zkey": "in/small.zkey", "witnesses": ["in/small_0.wtns", "in/small_1.wtns", "in/small_2.wtns", "in/small_3.wtns"], "out": "re"}]}'
two='{"jobs": [{"id": "r", "zkey": "in/small.zkey", "witnesses": ["in/small_0.wtns", "in/small_1.wtns"], "out": "re"}]}'
one='{"jobs": [{"id": "r", "zkey": "in/small.zkey", "witness": "in/small_2.wtns", "out": "re"}]}'
echo "$four" >four.json; echo "$two" >two.json; echo "$one" >one.json
prove four 0 run four.json
[ -f re/proof_3.json ] || fail "the 4-partition job wrote no proof_3.json"
prove two 0 run two.json
left=$(cd re && ls | tr '\n' ' ')
[ "$left" = "proof_0.json proof_1.json public_0.json public_1.json result.json " ] ||
  fail "after the 2-partition run re/ holds: $left"
prove one 0 run one.json
left=$(cd re && ls | tr '\n' ' ')
[ "$left" = "proof.json public.json result.json " ] || fail "after the single run re/ holds: $left"
echo "PASS: outputs"
