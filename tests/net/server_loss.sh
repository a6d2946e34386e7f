#!/usr/bin/env bash
# A server killed (SIGKILL) while `submit` waits for its jobs: the client
# notices within seconds, exits 1 and says the connection is lost, not that
# the jobs go on.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" --backend cpu \
  --memory-budget 1G --synthesizers 1
ep=127.0.0.1:$serve_port
job_file jobs.json long medium 40 out/long
"$proofline" submit --connect "$ep" jobs.json >submit.log 2>&1 &
client=$!
started+=("$client")
wait_until 30 grep -q "partition 0 done" submit.log || fail "no partition finished: $(cat submit.log)"
kill -9 "$serve_pid"
killed_at=$SECONDS
set +e
wait "$client"
rc=$?
set -e
took=$((SECONDS - killed_at))
cat submit.log | tail -3
[ "$rc" = 1 ] || fail "submit exited $rc after the server died, expected 1"
grep -q "lost the connection to $ep: the server stopped or cannot be reached" submit.log ||
  fail "submit does not say the connection is lost: $(tail -2 submit.log)"
[ "$took" -le 12 ] || fail "submit noticed the dead server after $took s (at most 12 expected)"
echo "submit noticed the dead server after $took s"
echo "PASS: net server_loss"
