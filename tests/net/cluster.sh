#!/usr/bin/env bash
# A coordinator that proves nothing itself and two nodes share one backlog:
# every proof verifies, both nodes proved some of it, and the coordinator
# wrote each output once. An --inline job proves on the nodes although its
# witnesses lie outside every node's allowed roots.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve coord --listen 127.0.0.1:0 --no-local-proving --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G --log-level debug
ep=127.0.0.1:$serve_port
coord=$serve_pid
for n in a b; do
  serve "node_$n" --join "$ep" --allow-root "$fixtures" --backend cpu --cpu-threads 1 \
    --synthesizers 1 --slots 2 --memory-budget 512M
done
joined() { [ "$(grep -c 'joined: ' coord.err)" -ge 2 ]; }
wait_until 15 joined || fail "the nodes did not join"

job_file backlog.json low0 medium 6 out/low0 low
job_file backlog.json norm1 medium 6 out/norm1
job_file backlog.json crit2 medium 6 out/crit2 critical
expect_rc 0 backlog "$proofline" submit --connect "$ep" backlog.json
log_has backlog "3 jobs: 3 done, 0 failed; 18 proofs"
for j in low0 norm1 crit2; do
  check_done "out/$j" "$j" 6
  verify "$medium/verification_key.json" "out/$j"
done

# The work was spread: both nodes proved partitions, 18 in all.
expect_rc 0 metrics "$proofline" metrics --connect "$ep" --json
[ "$(json metrics.log 'len(j["nodes"])')" = 2 ] || fail "metrics: $(cat metrics.log)"
[ "$(json metrics.log 'sum(n["proved"] for n in j["nodes"])')" = 18 ] || fail "metrics: $(cat metrics.log)"
[ "$(json metrics.log 'min(n["proved"] for n in j["nodes"])')" -ge 3 ] ||
  fail "one node proved almost nothing: $(cat metrics.log)"
# Each output was written once.
grep -o 'cluster: wrote [^ ]* of job [^ ]*' coord.err | sort | uniq -d >dups.txt
[ ! -s dups.txt ] || fail "written twice: $(cat dups.txt)"
[ "$(grep -c 'cluster: wrote' coord.err)" = 18 ] || fail "expected 18 writes"

# --inline: the witness bytes travel to the nodes.
inline_src=$(dirname "$work")/cluster-inline
rm -rf "$inline_src"
mkdir -p "$inline_src"
cp "$small"/witness_*.wtns "$inline_src/"
cat >"$inline_src/jobs.json" <<JSON
{"jobs": [{"id": "carried", "zkey": "$small/circuit.zkey",
  "witnesses": ["witness_0.wtns", "witness_1.wtns", "witness_2.wtns", "witness_3.wtns"],
  "out": "$work/out/carried"}]}
JSON
expect_rc 0 inline "$proofline" submit --connect "$ep" --inline "$inline_src/jobs.json"
rm -rf "$inline_src"
check_done out/carried carried 4
for i in 0 1 2 3; do check same-json "out/carried/public_$i.json" "$small/public_$i.json"; done
verify "$small/verification_key.json" out/carried
kill -0 "$coord" || fail "the coordinator died"
echo "PASS: net cluster"
