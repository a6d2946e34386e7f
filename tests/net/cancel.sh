#!/usr/bin/env bash
# Cancel stops a job of many partitions mid-way: no proof is written after it,
# result.json says "cancelled", the memory manager drops the job's queued
# partitions and every reservation it held is released (metrics); another
# job, queued behind it, still finishes with proofs that verify.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
job_file big.json big medium 40 out/big
job_file other.json other small 4 out/other low

expect_rc 0 big "$proofline" submit --connect "$ep" --no-wait big.json
expect_rc 0 other "$proofline" submit --connect "$ep" --no-wait other.json
# A client waiting for the job sees it end as cancelled (exit 1).
"$proofline" await big --connect "$ep" >await_big.log 2>&1 &
waiter=$!
started+=("$waiter")

# Cancel once a few partitions are done.
done_count() {
  "$proofline" status big --connect "$ep" --json >st.json 2>/dev/null &&
    [ "$(json st.json 'j[0]["done"]')" -ge "$1" ]
}
wait_until 60 done_count 3 || fail "job big did not get 3 partitions done"
expect_rc 0 cancel "$proofline" cancel big --connect "$ep"
log_has cancel "job big cancelled"
set +e
wait "$waiter"
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat await_big.log >&2; fail "await of the cancelled job exited $rc, expected 1"; }
log_has await_big "job big: cancelled"
log_has await_big "1 job: 0 done, 0 failed, 1 cancelled"

# It stopped: result.json says so, and no proof appears after a pause.
check_stopped() {
  [ "$(json out/big/result.json 'j["status"]')" = cancelled ] || fail "result.json: not cancelled"
  local done cancelled files
  done=$(json out/big/result.json 'sum(p["status"] == "done" for p in j["partitions"])')
  cancelled=$(json out/big/result.json 'sum(p["status"] == "cancelled" for p in j["partitions"])')
  [ "$((done + cancelled))" -eq 40 ] || fail "result.json: $done done + $cancelled cancelled != 40"
  [ "$cancelled" -ge 20 ] || fail "only $cancelled partitions cancelled: the job was not stopped mid-way"
  echo "$done"
}
done=$(check_stopped)
files_then=$(ls out/big | grep -c '^proof_' || true)
sleep 2
files_now=$(ls out/big | grep -c '^proof_' || true)
[ "$files_now" -eq "$files_then" ] || fail "proofs of the cancelled job kept appearing ($files_then -> $files_now)"
# A partition already past its finalizer's check may land; never more than that.
[ "$files_now" -le "$((done + 2))" ] || fail "$files_now proofs on disk, result.json lists $done done"
verify "$medium/verification_key.json" out/big

# Its memory: nothing queued, and only the fixed charges (pinned pool, keys,
# backends' buffers) still reserved.
released() {
  "$proofline" metrics --connect "$ep" --json >m.json 2>/dev/null &&
    [ "$(json m.json 'j["memory"]["queued"]')" = 0 ] &&
    [ "$(json m.json 'j["memory"]["reserved"] - j["memory"]["pool"] - j["memory"]["keys"] - j["memory"]["fixed"]')" = 0 ]
}
expect_rc 0 await_other "$proofline" await other --connect "$ep"
wait_until 10 released || fail "memory not released after cancel: $(cat m.json)"
[ "$(json m.json 'j["memory"]["cancelled"]')" -ge 20 ] ||
  fail "the memory manager dropped fewer than 20 queued partitions: $(cat m.json)"
[ "$(json m.json 'j["jobs"]["cancelled"]')" = 1 ] || fail "metrics: $(cat m.json)"

# The other job finished.
check result out/other --id other --status done --partitions 4
verify "$small/verification_key.json" out/other
expect_rc 1 status_cancelled "$proofline" status big --connect "$ep"
expect_rc 0 status_done "$proofline" status other --connect "$ep"
expect_rc 0 status "$proofline" status --connect "$ep" --json
[ "$(json status.log '",".join(x["id"]+":"+x["status"] for x in j)')" = "big:cancelled,other:done" ] ||
  fail "status: $(cat status.log)"
echo "PASS: net cancel"
