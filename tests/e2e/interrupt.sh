#!/usr/bin/env bash
# Ctrl-C on `proofline run`: SIGINT during a 40-partition job cancels it.
# The run exits 130 (143 for SIGTERM); the cancelled job's result.json says
# "cancelled" and lists every partition, the finished ones with their proofs
# (which snarkjs accepts), the rest "cancelled"; no temporary or unlisted
# file is left in its out directory; the summary names the cancelled job; a
# job that finished before the signal stays done.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 medium medium
python3 - <<'PY'
import json
ws = ["in/medium_%d.wtns" % (i % 3) for i in range(40)]
json.dump({"jobs": [
    {"id": "small", "zkey": "in/medium.zkey", "witness": "in/medium_0.wtns", "out": "out/small"},
    {"id": "big", "zkey": "in/medium.zkey", "witnesses": ws, "out": "out/big"}]},
    open("jobs.json", "w"))
PY

# interrupt SIGNAL EXPECTED_RC LABEL: runs the job file on one CPU thread,
# sends SIGNAL once the big job's first proof is written, and checks the exit
# code.
interrupt() {
  local sig=$1 want=$2 label=$3 pid rc waited=0
  rm -rf out
  "$proofline" run jobs.json --backend cpu --synthesizers 1 --finalizers 1 --cpu-threads 1 \
    >"$label.log" 2>"$label-err.log" &
  pid=$!
  until [ -f out/big/proof_0.json ]; do
    kill -0 "$pid" 2>/dev/null || { cat "$label-err.log" >&2; fail "$label: run ended before the signal"; }
    sleep 0.05
    waited=$((waited + 1))
    [ "$waited" -lt 1200 ] || { kill -KILL "$pid"; fail "$label: no proof after 60 s"; }
  done
  kill "-$sig" "$pid"
  waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 1200 ]; do  # at most 60 s
    sleep 0.05
    waited=$((waited + 1))
  done
  kill -KILL "$pid" 2>/dev/null || true  # a run that ignored the signal fails below
  set +e
  wait "$pid"
  rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    sed "s/^/  | /" "$label.log" "$label-err.log" >&2
    fail "$label: exited $rc after SIG$sig, expected $want"
  fi
}

check_cancelled() {
  python3 - "$1" <<'PY' || fail "$1: result.json of the cancelled job is wrong"
import json, os, sys
label = sys.argv[1]
r = json.load(open("out/big/result.json"))
assert r["status"] == "cancelled", r["status"]
parts = r["partitions"]
assert len(parts) == 40, len(parts)
assert [p["index"] for p in parts] == list(range(40))
states = {p["status"] for p in parts}
assert states <= {"done", "cancelled"}, states
done = [p for p in parts if p["status"] == "done"]
assert 1 <= len(done) < 40, len(done)
assert any(p["status"] == "cancelled" for p in parts)
listed = {"result.json"}
for p in done:
    listed |= {p["proof"], p["public"]}
for p in parts:
    if p["status"] == "cancelled":
        assert p["proof"] is None and p["public"] is None, p
left = set(os.listdir("out/big"))
assert left == listed, ("unlisted or missing files", sorted(left ^ listed))
small = json.load(open("out/small/result.json"))
assert small["status"] == "done", small["status"]
print("%s: %d of 40 partitions done, the rest cancelled" % (label, len(done)))
PY
}

interrupt INT 130 sigint
check_cancelled sigint
log_names sigint "big" "cancelled" "interrupted (SIGINT): cancelled 1 job (big)"
log_names sigint "1 done, 0 failed, 1 cancelled"
log_names sigint-err "interrupted (SIGINT): cancelling the unfinished jobs"
verify "$fixtures/bn254/medium/verification_key.json" out/big

interrupt TERM 143 sigterm
check_cancelled sigterm
log_names sigterm "terminated (SIGTERM): cancelled 1 job (big)"
echo "PASS: interrupt"
