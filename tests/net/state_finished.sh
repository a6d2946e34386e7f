#!/usr/bin/env bash
# serve --state remembers finished jobs across a crash: jobs that finished
# before a SIGKILL are answered after the restart as before it (`await` and
# `status` give their outcome, done or cancelled, with the same partitions),
# while the unfinished ones are queued again and finish. Up to
# --keep-finished: a restart with a smaller bound answers for the newest only.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state=$work/state
common=(--allow-root "$work" --allow-root "$fixtures" --backend cpu --memory-budget 1G
  --synthesizers 1 --finalizers 1 --cpu-threads 1 --state "$state")

# status_line LABEL: the job's row of `status --json` in LABEL.log, as "status done/total".
status_line() {
  python3 -c "import json,sys; j=json.load(open(sys.argv[1]))[0]; print(j['status'], str(j['done']) + '/' + str(j['total']))" "$1.log"
}

serve first --listen 127.0.0.1:0 "${common[@]}"
ep=127.0.0.1:$serve_port
job_file first.json s0 small 1 out/s0 high
job_file first.json c0 medium 6 out/c0
job_file second.json s1 medium 4 out/s1
job_file second.json s2 medium 4 out/s2
job_file second.json s3 small 2 out/s3
expect_rc 0 submit_first "$proofline" submit --connect "$ep" --no-wait first.json
wait_until 120 test -f out/s0/result.json || fail "job s0 did not finish: $(tail -3 first.err)"
expect_rc 0 cancel_c0 "$proofline" cancel --connect "$ep" c0
wait_until 60 test -f out/c0/result.json || fail "job c0 has no result.json after its cancel"
expect_rc 0 submit_second "$proofline" submit --connect "$ep" --no-wait second.json
# What the first server answers for the finished jobs, before the crash.
expect_rc 0 await_s0_before "$proofline" await --connect "$ep" s0
expect_rc 0 status_s0_before "$proofline" status --connect "$ep" --json s0
expect_rc 1 status_c0_before "$proofline" status --connect "$ep" --json c0
s0_before=$(status_line status_s0_before)
c0_before=$(status_line status_c0_before)
[ "$s0_before" = "done 1/1" ] || fail "s0 before the crash: $s0_before"
case "$c0_before" in cancelled*) ;; *) fail "c0 before the crash: $c0_before" ;; esac
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
[ ! -f out/s3/result.json ] || fail "the whole backlog finished before the kill; nothing to test"

serve second --listen 127.0.0.1:0 "${common[@]}"
ep=127.0.0.1:$serve_port
expect_rc 0 await_s0 "$proofline" await --connect "$ep" s0
log_has await_s0 "s0"
expect_rc 0 status_s0 "$proofline" status --connect "$ep" --json s0
expect_rc 1 status_c0 "$proofline" status --connect "$ep" --json c0
[ "$(status_line status_s0)" = "$s0_before" ] ||
  fail "s0 after the restart: $(status_line status_s0), before: $s0_before"
[ "$(status_line status_c0)" = "$c0_before" ] ||
  fail "c0 after the restart: $(status_line status_c0), before: $c0_before"
expect_rc 1 await_c0 "$proofline" await --connect "$ep" c0
# The unfinished jobs are queued again and finish.
for id in s1 s2 s3; do
  expect_rc 0 "await_$id" "$proofline" await --connect "$ep" "$id"
done
check_done out/s0 s0 1
check_done out/s3 s3 2
verify "$fixtures/bn254/medium/verification_key.json" out/s1 out/s2
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true

# --keep-finished bounds what is answered for after a restart: the newest.
serve third --listen 127.0.0.1:0 "${common[@]}" --keep-finished 2
ep=127.0.0.1:$serve_port
expect_rc 0 status_all "$proofline" status --connect "$ep" --json
kept=$(python3 -c "import json,sys; print(' '.join(sorted(j['id'] for j in json.load(open(sys.argv[1])))))" status_all.log)
[ "$(echo "$kept" | wc -w)" = 2 ] || fail "with --keep-finished 2 the restarted server answers for: $kept"
expect_rc 1 status_s0_gone "$proofline" status --connect "$ep" s0
log_has status_s0_gone 'no job "s0"'
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
echo "ok: finished jobs answered after the crash; --keep-finished bounds them"
