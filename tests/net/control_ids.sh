#!/usr/bin/env bash
# A job id holding ESC and a newline, through `submit` and `run`: the job is
# refused alone with an error naming the id (escaped) and the character's
# position, its neighbour is proved, and no text output (the server's log,
# `status`, submit's and run's summaries and logs) carries the raw bytes, so
# no forged log line appears.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" --backend cpu
ep=127.0.0.1:$serve_port

# The id clears the line (ESC [2K), then starts a line that reads as the log's own.
python3 - "$small" "$work" <<'PY'
import json, os, sys
small, work = sys.argv[1:3]
evil = "evil\x1b[2K\n[00:00:00.000] [info] job forged done"
def job(jid, out):
    return {"id": jid, "zkey": os.path.join(small, "circuit.zkey"),
            "witness": os.path.join(small, "witness_0.wtns"), "out": os.path.join(work, out)}
for name, out in (("ids.json", "out"), ("run_ids.json", "run_out")):
    json.dump({"jobs": [job(evil, out + "/evil"), job("plain", out + "/plain")]}, open(name, "w"))
PY

# done OUT: OUT/result.json says the job is done, its proof written.
done_in() {
  [ "$(json "$1/result.json" 'j["status"]')" = done ] && [ -f "$1/proof.json" ] ||
    fail "$1: the job with a plain id is not done"
}

# No line of FILE starts with the forged text, and FILE holds no ESC byte.
clean() {
  if grep -q '^\[00:00:00.000\] \[info\] job forged' "$1"; then
    sed 's/^/  | /' "$1" >&2
    fail "$1 holds a forged log line"
  fi
  if grep -q $'\x1b' "$1"; then fail "$1 holds a raw ESC byte"; fi
}

expect_rc 1 submit "$proofline" submit --connect "$ep" ids.json
log_has submit 'control character \x1b at byte 4'
log_has submit 'evil\x1b[2K\x0a[00:00:00.000]'
clean submit.log
done_in out/plain
python3 - <<'PY' || fail "out/evil/result.json does not fail the job on its id"
import json
r = json.load(open("out/evil/result.json"))
assert r["status"] == "failed", r["status"]
assert "control character" in r["error"]["message"], r["error"]
PY

expect_rc 0 status "$proofline" status --connect "$ep"
log_has status 'evil\x1b[2K\x0a'
clean status.log
clean srv.err
grep -qF 'evil\x1b[2K\x0a[00:00:00.000] [info] job forged done' srv.err ||
  fail "the server's log does not name the refused id escaped"

# The same job file through run: its log and summary are as clean.
set +e
"$proofline" run run_ids.json --backend cpu >run.log 2>run.err
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat run.err >&2; fail "run exited $rc, expected 1 (one job failed)"; }
clean run.log
clean run.err
grep -qF 'control character \x1b at byte 4' run.err run.log ||
  fail "run does not say which character of the id is refused"
done_in run_out/plain
echo "ok: control characters in ids are refused and escaped"
