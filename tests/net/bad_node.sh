#!/usr/bin/env bash
# A node whose proofs are corrupt (PROOFLINE_FAULT_INJECT=corrupt:all, with
# --no-verify so that it sends them as good) joins a coordinator that proves
# nothing itself. The coordinator checks every node's proof by pairing before
# it writes it: none of the bad node's proofs is written, the node is
# reported (log, metrics) and taken out of service after three, and once a
# good node joins, the job ends done with every proof verifying (snarkjs),
# each written once.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve coord --listen 127.0.0.1:0 --no-local-proving --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G --log-level debug
ep=127.0.0.1:$serve_port
coord=$serve_pid
node_args=(--join "$ep" --allow-root "$fixtures" --backend cpu --cpu-threads 1 --synthesizers 1
  --slots 2 --memory-budget 512M)
export PROOFLINE_FAULT_INJECT=corrupt:all
serve bad "${node_args[@]}" --no-verify
unset PROOFLINE_FAULT_INJECT
joined() { [ "$(grep -c 'joined: ' coord.err)" -ge "$1" ]; }
wait_until 15 joined 1 || fail "the bad node did not join"

job_file jobs.json j small 6 out/j
expect_rc 0 submit "$proofline" submit --connect "$ep" --no-wait jobs.json
out_of_service() { grep -q "taken out of service" coord.err; }
wait_until 60 out_of_service || fail "the node sending bad proofs was not taken out of service"
grep -q "sent a proof of job j partition [0-9]* that fails the check" coord.err ||
  fail "the coordinator does not report the bad proofs"
if grep -q 'cluster: wrote' coord.err; then fail "a proof of the bad node was written"; fi
[ ! -f out/j/result.json ] || fail "the job finished on the bad node alone"

serve good "${node_args[@]}"
wait_until 15 joined 2 || fail "the good node did not join"
expect_rc 0 await "$proofline" await --connect "$ep" j
check_done out/j j 6
verify "$small/verification_key.json" out/j
[ "$(json out/j/result.json 'all(p["verified"] for p in j["partitions"])')" = True ] ||
  fail "result.json does not say every proof verified: $(cat out/j/result.json)"
[ "$(grep -c 'cluster: wrote' coord.err)" = 6 ] || fail "expected 6 writes, one a partition"

expect_rc 0 metrics "$proofline" metrics --connect "$ep" --json
bad='[n for n in j["nodes"] if n["bad_proofs"] > 0]'
[ "$(json metrics.log "len($bad)")" = 1 ] || fail "metrics: $(cat metrics.log)"
[ "$(json metrics.log "$bad[0]['bad_proofs'] >= 3 and $bad[0]['out_of_service'] and $bad[0]['proved'] == 0")" = True ] ||
  fail "metrics do not report the bad node: $(cat metrics.log)"
[ "$(json metrics.log 'sum(n["proved"] for n in j["nodes"])')" = 6 ] || fail "metrics: $(cat metrics.log)"
expect_rc 0 metrics_text "$proofline" metrics --connect "$ep"
log_has metrics_text "(out of service)"
kill -0 "$coord" || fail "the coordinator died"
echo "PASS: net bad_node"
