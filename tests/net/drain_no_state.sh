#!/usr/bin/env bash
# serve without --state, stopped by SIGTERM with a job accepted and queued:
# the dropped job still gets a result.json, status cancelled with the
# reason, and a client awaiting it is told (it does not wait forever).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

common=(--allow-root "$work" --allow-root "$fixtures" --backend cpu --memory-budget 1G
  --synthesizers 1 --finalizers 1 --cpu-threads 1)
serve srv --listen 127.0.0.1:0 "${common[@]}" --drain-timeout 60
ep=127.0.0.1:$serve_port
job_file first.json first medium 2 out/first
job_file queued.json queued medium 4 out/queued
expect_rc 0 submit_first "$proofline" submit --connect "$ep" --no-wait first.json
expect_rc 0 submit_queued "$proofline" submit --connect "$ep" --no-wait queued.json
# A client waiting for the queued job while the daemon stops.
"$proofline" await --connect "$ep" queued >await.log 2>&1 &
await_pid=$!
wait_until 120 test -f out/first/proof_0.json || fail "no partition finished: $(tail -3 srv.err)"
stop_serve
grep -q "drained in" srv.err || fail "serve did not drain: $(tail -5 srv.err)"
[ -f out/queued/result.json ] || fail "the dropped job got no result.json: $(tail -5 srv.err)"
python3 - out/queued/result.json <<'PY' || fail "result.json of the dropped job: $(cat out/queued/result.json)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "cancelled", r
assert "daemon stopped" in r["error"]["message"], r["error"]
assert "--state" in r["error"]["message"], r["error"]
assert all(p["status"] in ("cancelled", "done") for p in r["partitions"]), r["partitions"]
PY
wait_until 30 sh -c "! kill -0 $await_pid 2>/dev/null" || fail "await still waits after the daemon stopped"
set +e
wait "$await_pid"
set -e
grep -q "cancelled" await.log || fail "await was not told the job was cancelled: $(cat await.log)"
echo "PASS: drain_no_state"
