#!/usr/bin/env bash
# A path that passed --allow-root at submission and is swapped for a symbolic
# link to outside the roots while its job waits in the queue: the job fails
# when the file is opened, naming the file and the link, and nothing outside
# the roots is read or written. Two victims wait behind a big job: one whose
# witness directory becomes a link to a directory outside holding a valid
# witness (read, the job would succeed), one whose out directory appears as
# a link to outside. Both with openat2 and with the stepwise walk
# (PROOFLINE_CONFINED_STEPWISE=1); the daemon keeps serving after.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

outside=$(dirname "$work")/$(basename "$work").outside
rm -rf "$outside"
mkdir -p "$outside/in"
trap 'cleanup; rm -rf "$outside"' EXIT
w0=$(ls "$small"/witness_*.wtns | head -1)
cp "$w0" "$outside/in/w.wtns"

# victim_file NAME ID WITNESS OUT: a job file of one small partition.
victim_file() {
  python3 - "$@" "$small/circuit.zkey" <<'PY'
import json, sys
name, jid, witness, out, zkey = sys.argv[1:6]
json.dump({"jobs": [{"id": jid, "zkey": zkey, "witness": witness, "out": out}]}, open(name, "w"))
PY
}

swap_round() {
  local mode=$1
  rm -rf "$work/in" "$work/out"
  mkdir -p "$work/in" "$work/out"
  cp "$w0" "$work/in/w.wtns"
  PROOFLINE_CONFINED_STEPWISE=$([ "$mode" = stepwise ] && echo 1 || echo 0) \
    serve "srv_$mode" --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
    --backend cpu --memory-budget 1G --synthesizers 1 --finalizers 1 --cpu-threads 1
  local ep=127.0.0.1:$serve_port
  # The big job holds the queue while the victims wait behind it.
  rm -f big.json
  job_file big.json big medium 40 "$work/out/big"
  victim_file wit.json wit "$work/in/w.wtns" "$work/out/wit"
  victim_file outdir.json outdir "$w0" "$work/out/linked"
  expect_rc 0 "big_$mode" "$proofline" submit --connect "$ep" --no-wait big.json
  expect_rc 0 "wit_$mode" "$proofline" submit --connect "$ep" --no-wait wit.json
  expect_rc 0 "outdir_$mode" "$proofline" submit --connect "$ep" --no-wait outdir.json
  "$proofline" status --connect "$ep" --json >"st_$mode.json"
  [ "$(json "st_$mode.json" '[s["status"] for s in j if s["id"] == "wit"][0]')" = queued ] ||
    fail "$mode: job wit is not waiting in the queue: $(cat "st_$mode.json")"

  # The swap, while both wait.
  mv "$work/in" "$work/in.old"
  ln -s "$outside/in" "$work/in"
  ln -s "$outside" "$work/out/linked"
  expect_rc 0 "cancel_$mode" "$proofline" cancel big --connect "$ep"

  expect_rc 1 "await_wit_$mode" "$proofline" await wit --connect "$ep"
  log_has "await_wit_$mode" "$work/in/w.wtns"
  log_has "await_wit_$mode" "refused: in beneath $work is a symbolic link"
  expect_rc 1 "await_outdir_$mode" "$proofline" await outdir --connect "$ep"
  log_has "await_outdir_$mode" "$work/out/linked"
  log_has "await_outdir_$mode" "out/linked beneath $work is a symbolic link"
  # Nothing was written outside: no proof, public or result file.
  local stray
  stray=$(find "$outside" -type f ! -path "$outside/in/w.wtns")
  [ -z "$stray" ] || fail "$mode: files written outside the roots: $stray"

  # The daemon keeps serving: the same job by its real path proves.
  rm "$work/in" "$work/out/linked"
  mv "$work/in.old" "$work/in"
  victim_file again.json again "$work/in/w.wtns" "$work/out/again"
  expect_rc 0 "again_$mode" "$proofline" submit --connect "$ep" again.json
  verify "$small/verification_key.json" "$work/out/again"
  kill -TERM "$serve_pid"
  wait "$serve_pid" || true
}

swap_round openat2
swap_round stepwise
echo "ok: paths swapped for links while queued are refused at the open"
