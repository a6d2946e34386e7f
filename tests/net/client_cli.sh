#!/usr/bin/env bash
# What submit and await print, and how they stop:
#  * `submit -` reads the job file from standard input, its relative paths
#    resolving against the current directory; an error in it names standard
#    input;
#  * away from a terminal the progress line is a plain line ("[N/M proofs,
#    ETA ...] JOB d/t"), with no carriage return or escape sequence;
#  * `submit --json` and `await --json` print one JSON document on stdout
#    (each job's id, seq, status and result.json), no progress lines;
#    `--no-wait --json` the accepted ids;
#  * SIGINT on a waiting submit or await exits 130 and says on stderr that
#    the jobs go on at the server, naming them and the await and cancel
#    commands; the jobs do go on, and the cancel command printed stops one.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G --cpu-threads 1 --synthesizers 1
c=(--connect "127.0.0.1:$serve_port")

# 1. submit - from another directory: relative paths against it.
mkdir -p piped
cp "$medium/circuit.zkey" "$medium/witness_0.wtns" "$medium/witness_1.wtns" piped/
cat >piped/jobs.json <<'JSON'
{"jobs": [{"id": "piped", "zkey": "circuit.zkey",
           "witnesses": ["witness_0.wtns", "witness_1.wtns", "witness_0.wtns"], "out": "out/piped"}]}
JSON
(cd piped && expect_rc 0 ../piped "$proofline" submit "${c[@]}" - <jobs.json)
check result piped/out/piped --id piped --status done --partitions 3
check same-json piped/out/piped/public_1.json "$medium/public_1.json"
verify "$medium/verification_key.json" piped/out/piped
log_has piped "job piped: partition 2 done (proof_2.json"
# The progress line, plain: at least one, each of this form, no terminal codes.
grep -Eq '^\[[0-9]/3 proofs, ETA [^]]+\]( piped [0-9]/3)?$' piped.log ||
  { sed 's/^/  | /' piped.log >&2; fail "no plain progress line in piped.log"; }
if grep -q $'\r\|\x1b' piped.log; then fail "terminal codes in the output of a submit to a file"; fi
echo '{"jobs": [{"id": "x"}]}' | (cd piped && expect_rc 2 ../badpipe "$proofline" submit "${c[@]}" -)
log_has badpipe '- (standard input)'
log_has badpipe 'missing field "zkey"'

# 2. --json: one document on stdout, progress off.
job_file two.json a small 1 out/a
job_file two.json b medium 2 out/b
"$proofline" submit "${c[@]}" --json two.json >two.out 2>two.err || fail "submit --json: $(cat two.err)"
python3 - two.out "127.0.0.1:$serve_port" <<'PY' || fail "submit --json: $(cat two.out)"
import json, sys
j = json.load(open(sys.argv[1]))
assert set(j) == {"server", "jobs"} and j["server"] == sys.argv[2], j
assert [x["id"] for x in j["jobs"]] == ["a", "b"], j
for x, n in zip(j["jobs"], (1, 2)):
    assert set(x) == {"id", "seq", "status", "result"}, x
    assert isinstance(x["seq"], int) and x["status"] == "done", x
    r = x["result"]
    assert r["id"] == x["id"] and r["status"] == "done" and r["error"] is None, r
    assert len(r["partitions"]) == n and all(p["status"] == "done" for p in r["partitions"]), r
print("ok: submit --json")
PY
"$proofline" await b "${c[@]}" --json >await.out 2>await.err || fail "await --json: $(cat await.err)"
python3 - await.out <<'PY' || fail "await --json: $(cat await.out)"
import json, sys
j = json.load(open(sys.argv[1]))
[x] = j["jobs"]
assert x["id"] == "b" and x["status"] == "done" and len(x["result"]["partitions"]) == 2, j
print("ok: await --json")
PY
job_file later.json later small 1 out/later
"$proofline" submit "${c[@]}" --json --no-wait later.json >later.out 2>later.err ||
  fail "submit --json --no-wait: $(cat later.err)"
[ "$(json later.out '[(x["id"], x["status"], x["result"]) for x in j["jobs"]]')" = "[('later', None, None)]" ] ||
  fail "submit --json --no-wait: $(cat later.out)"
expect_rc 0 await_later "$proofline" await later "${c[@]}"

# 3. SIGINT on a waiting submit: exit 130, the jobs named, and they go on.
job_file long.json long medium 40 out/long
job_file long.json other medium 40 out/other
# interrupted LABEL PID: sends SIGINT to PID once LABEL.out shows a finished
# partition, and checks that it exits 130.
interrupted() {
  local label=$1 pid=$2 waited=0 rc
  until grep -q "partition .* done" "$label.out"; do
    kill -0 "$pid" 2>/dev/null || { cat "$label.out" "$label.err" >&2; fail "$label ended before the signal"; }
    sleep 0.1
    waited=$((waited + 1))
    [ "$waited" -lt 600 ] || fail "$label: no partition done in 60 s"
  done
  kill -INT "$pid"
  waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do  # at most 10 s
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -KILL "$pid" 2>/dev/null || true  # one that ignored the signal fails below
  set +e
  wait "$pid"
  rc=$?
  set -e
  [ "$rc" -eq 130 ] || { sed 's/^/  | /' "$label.out" "$label.err" >&2; fail "$label exited $rc after SIGINT, expected 130"; }
}
"$proofline" submit "${c[@]}" long.json >sub_int.out 2>sub_int.err &
pid=$!
started+=("$pid")
interrupted sub_int "$pid"
grep -qF 'proofline submit: interrupted (SIGINT); the jobs go on at the server: `proofline await ID --connect 127.0.0.1:'"$serve_port"'` waits for one again, `proofline cancel ID --connect 127.0.0.1:'"$serve_port"'` stops one (ids: long other)' sub_int.err ||
  fail "submit after SIGINT: $(cat sub_int.err)"
expect_rc 0 status_long "$proofline" status "${c[@]}" --json
[ "$(json status_long.log '" ".join(str(x["status"] in ("queued", "synthesizing", "proving")) for x in j if x["id"] in ("long", "other"))')" = "True True" ] ||
  fail "the jobs did not go on after their client stopped: $(cat status_long.log)"

# 4. SIGINT on await: the same for one job; its cancel command works.
"$proofline" await long "${c[@]}" >await_int.out 2>await_int.err &
pid=$!
started+=("$pid")
interrupted await_int "$pid"
line=$(grep -F 'proofline await: interrupted (SIGINT); job long goes on at the server: `proofline await long --connect 127.0.0.1:'"$serve_port"'` waits for it again, `proofline cancel long --connect 127.0.0.1:'"$serve_port"'` stops it' await_int.err) ||
  fail "await after SIGINT: $(cat await_int.err)"
cancel_cmd=$(sed -n 's/.*`\(proofline cancel [^`]*\)`.*/\1/p' <<<"$line")
read -r -a words <<<"$cancel_cmd"
expect_rc 0 cancel_long "$proofline" "${words[@]:1}"
log_has cancel_long "job long cancelled"
expect_rc 0 cancel_other "$proofline" cancel other "${c[@]}"
wait_until 10 test -f out/other/result.json || fail "no result.json for the cancelled job other"
[ "$(json out/long/result.json '(j["status"], len(j["partitions"]))')" = "('cancelled', 40)" ] ||
  fail "out/long/result.json: $(cat out/long/result.json)"
kill -0 "$serve_pid" || fail "the server died"
echo "PASS: net client_cli"
