#!/usr/bin/env bash
# Job files that are not valid JSON or break the schema are rejected before
# anything runs: exit 2, a message naming the job and the field, and no output
# written, not even for the valid job placed before the broken one. Usage
# errors exit 2 as well; --help exits 0.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 small small
good='{"id": "good", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/good"}'

# rejected NAME JOBS_JSON WORD...: a job file whose "jobs" array is the good
# job followed by JOBS_JSON exits 2, mentions every WORD, and writes nothing.
rejected() {
  local name=$1 jobs=$2
  shift 2
  rm -rf out
  printf '{"jobs": [%s, %s]}\n' "$good" "$jobs" >"$name.json"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$name.json" ||
    fail "$name.json: the test meant valid JSON"
  prove "$name" 2 run "$name.json"
  log_names "$name" "$@"
  [ ! -e out ] || fail "$name.json: output written although the file was rejected: $(find out | head -5)"
  echo "ok: $name rejected"
}

rejected missing-zkey \
  '{"id": "no-key", "witness": "in/small_0.wtns", "out": "out/no-key"}' no-key zkey
rejected missing-out \
  '{"id": "no-out", "zkey": "in/small.zkey", "witness": "in/small_0.wtns"}' no-out out
rejected missing-id \
  '{"zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/anon"}' id
rejected both-witness-fields \
  '{"id": "job-both", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "witnesses": ["in/small_1.wtns"], "out": "out/both"}' \
  job-both witness
rejected no-witness-field \
  '{"id": "job-neither", "zkey": "in/small.zkey", "out": "out/neither"}' job-neither witness
rejected duplicate-id \
  '{"id": "good", "zkey": "in/small.zkey", "witness": "in/small_1.wtns", "out": "out/other"}' good id
rejected duplicate-out \
  '{"id": "same-out", "zkey": "in/small.zkey", "witness": "in/small_1.wtns", "out": "out/good"}' out out/good
rejected unknown-key \
  '{"id": "job-extra", "zkey": "in/small.zkey", "witness": "in/small_1.wtns", "out": "out/extra", "prioritty": "high"}' \
  job-extra prioritty
rejected bad-priority \
  '{"id": "job-prio", "zkey": "in/small.zkey", "witness": "in/small_1.wtns", "out": "out/prio", "priority": "urgent"}' \
  job-prio priority

rejected nul-in-path \
  '{"id": "nul", "zkey": "in/small.zkey\u0000.x", "witness": "in/small_1.wtns", "out": "out/nul"}' \
  nul zkey "NUL character"
rejected number-overflow \
  '{"id": "big", "zkey": "in/small.zkey", "witness": "in/small_1.wtns", "out": "out/big", "priority": 1e999999}' \
  priority "number overflow"

# Not a job file at all: a device, a FIFO (refused at once, not waited on).
prove dev-zero 2 run /dev/zero
log_names dev-zero "/dev/zero: not a regular file (a device)"
mkfifo fifo.json
prove fifo 2 run fifo.json
log_names fifo "fifo.json: not a regular file (a FIFO)"

# Not JSON at all: names the file.
rm -rf out
printf '{"jobs": [%s, {"id": "cut", ' "$good" >truncated-json.json
prove truncated-json 2 run truncated-json.json
log_names truncated-json truncated-json.json
[ ! -e out ] || fail "truncated-json.json: output written although the file was rejected"

# Usage errors exit 2; help exits 0 and describes the run command.
prove no-such-command 2 frobnicate
prove unknown-flag 2 run --no-such-flag jobs.json
prove two-job-files 2 run truncated-json.json missing-zkey.json
prove help 0 --help
log_names help run
prove run-help 0 run --help
log_names run-help priority witnesses
echo "PASS: schema_errors"
