#!/usr/bin/env bash
# A node killed with SIGKILL in the middle of a backlog: the coordinator
# queues its partitions again, every job still finishes, every proof
# verifies, and no partition's output is written twice.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve coord --listen 127.0.0.1:0 --no-local-proving --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G --log-level debug
ep=127.0.0.1:$serve_port
coord=$serve_pid
serve node_a --join "$ep" --allow-root "$fixtures" --backend cpu --cpu-threads 1 \
  --synthesizers 1 --slots 2 --memory-budget 512M
victim=$serve_pid
serve node_b --join "$ep" --allow-root "$fixtures" --backend cpu --cpu-threads 1 \
  --synthesizers 1 --slots 2 --memory-budget 512M
joined() { [ "$(grep -c 'joined: ' coord.err)" -ge 2 ]; }
wait_until 15 joined || fail "the nodes did not join"
victim_id=$(sed -n "s/.*cluster: node \([0-9]*\) ([^)]*:$victim) joined.*/\1/p" coord.err)
[ -n "$victim_id" ] || fail "cannot find the victim's node id in coord.err"

job_file backlog.json j0 medium 8 out/j0
job_file backlog.json j1 medium 8 out/j1 high
job_file backlog.json j2 medium 8 out/j2
"$proofline" submit --connect "$ep" backlog.json >backlog.log 2>&1 &
client=$!
started+=("$client")

# Kill the victim once it has proved something and holds leases.
victim_busy() {
  grep -q "node $victim_id (" coord.err && [ "$(grep -c 'cluster: wrote' coord.err)" -ge 3 ] &&
    grep -q "to node $victim_id " coord.err
}
wait_until 60 victim_busy || fail "the victim never got work"
kill -9 "$victim"
echo "killed node $victim_id (pid $victim)"

set +e
wait "$client"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat backlog.log >&2; fail "submit exited $rc after the node loss"; }
log_has backlog "3 jobs: 3 done, 0 failed; 24 proofs"
grep -q "cluster: node $victim_id (.*) left; [1-9][0-9]* partition(s) queued again" coord.err ||
  fail "the coordinator did not queue the lost node's partitions again"
for j in j0 j1 j2; do
  check_done "out/$j" "$j" 8
  verify "$medium/verification_key.json" "out/$j"
done
grep -o 'cluster: wrote [^ ]* of job [^ ]*' coord.err | sort | uniq -d >dups.txt
[ ! -s dups.txt ] || fail "written twice: $(cat dups.txt)"
[ "$(grep -c 'cluster: wrote' coord.err)" = 24 ] || fail "expected 24 writes"
expect_rc 0 metrics "$proofline" metrics --connect "$ep" --json
[ "$(json metrics.log 'len(j["nodes"])')" = 1 ] || fail "the dead node is still listed: $(cat metrics.log)"
kill -0 "$coord" || fail "the coordinator died"
echo "PASS: net node_loss"
