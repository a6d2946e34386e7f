#!/usr/bin/env bash
# What an operator sees of outputs and failures: an out directory that
# cannot be written fails its job before anything is proved (the others
# prove); a --report path that cannot be written is a usage error before
# proving; --quiet still prints every failed job with its error.
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
echo "PASS: outputs"
