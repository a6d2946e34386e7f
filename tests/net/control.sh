#!/usr/bin/env bash
# The control link: submit waits for a server that starts late and its proofs
# verify; status, await and the exit codes; a second live job with the same
# id, a path outside --allow-root and a bad job file are refused; --inline
# proves witnesses the server cannot read; a key is loaded once across
# submissions and metrics lists the warm keys; a daemon started in / without
# --allow-root is refused; nothing listening makes a client give up with exit 1.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

job_file jobs.json one small 1 out/one
job_file jobs.json three medium 3 out/three high

# 1. submit retries until the server listens, then waits for its jobs.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$proofline" submit --connect "127.0.0.1:$port" --connect-timeout 20 jobs.json >early.log 2>&1 &
early=$!
started+=("$early")
sleep 1
serve srv --listen "127.0.0.1:$port" --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
set +e
wait "$early"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat early.log >&2; fail "submit before the server listened exited $rc"; }
log_has early "job three: partition 2 done (proof_2.json"
log_has early "2 jobs: 2 done, 0 failed; 4 proofs"
check result out/one --id one --status done --partitions 1
check result out/three --id three --status done --partitions 3
check same-json out/three/public_1.json "$medium/public_1.json"
verify "$small/verification_key.json" out/one
verify "$medium/verification_key.json" out/three

# 2. status and await of finished jobs.
expect_rc 0 status "$proofline" status --connect "127.0.0.1:$port" --json
[ "$(json status.log '",".join(x["id"]+":"+x["status"] for x in j)')" = "one:done,three:done" ] ||
  fail "status --json: $(cat status.log)"
expect_rc 0 status_one "$proofline" status three --connect "127.0.0.1:$port"
log_has status_one "three"
expect_rc 0 await_done "$proofline" await three --connect "127.0.0.1:$port"
log_has await_done "1 job: 1 done, 0 failed; 3 proofs"
expect_rc 1 await_nope "$proofline" await nope --connect "127.0.0.1:$port"
log_has await_nope 'no job "nope"'
expect_rc 1 cancel_done "$proofline" cancel three --connect "127.0.0.1:$port"
log_has cancel_done "already finished (done)"

# 3. A second live job with the same id, or the same out directory, is
#    refused; a finished id may be reused.
job_file slow.json slow medium 12 out/slow
expect_rc 0 slow "$proofline" submit --connect "127.0.0.1:$port" --no-wait slow.json
log_has slow "slow"
expect_rc 2 dup "$proofline" submit --connect "127.0.0.1:$port" slow.json
log_has dup 'job "slow": the id is already used by a live job'
job_file sameout.json other-id small 1 out/slow
expect_rc 2 sameout "$proofline" submit --connect "127.0.0.1:$port" sameout.json
log_has sameout 'job "other-id": field "out": '"$work"'/out/slow is the out directory of live job "slow"'
expect_rc 0 await_slow "$proofline" await slow --connect "127.0.0.1:$port"
check result out/slow --id slow --status done --partitions 12
job_file again.json one small 1 out/one-again
expect_rc 0 again "$proofline" submit --connect "127.0.0.1:$port" again.json
verify "$small/verification_key.json" out/one-again

# 4. Paths outside the allowed roots are refused, naming the path; a bad job
#    file is refused before connecting (exit 2 like run).
outside=$(dirname "$work")/control-outside
rm -rf "$outside"
mkdir -p "$outside"
cp "$small/circuit.zkey" "$small/witness_0.wtns" "$outside/"
cat >"$outside/jobs.json" <<JSON
{"jobs": [{"id": "far", "zkey": "$small/circuit.zkey", "witness": "witness_0.wtns", "out": "$work/out/far"}]}
JSON
expect_rc 2 outside "$proofline" submit --connect "127.0.0.1:$port" "$outside/jobs.json"
log_has outside "$outside/witness_0.wtns: outside the allowed roots"
echo '{"jobs": [{"id": "x"}]}' >bad.json
expect_rc 2 badfile "$proofline" submit --connect "127.0.0.1:$port" bad.json
log_has badfile 'missing field "zkey"'

# 5. --inline sends the witness bytes, so a witness outside the roots proves.
expect_rc 0 inline "$proofline" submit --connect "127.0.0.1:$port" --inline "$outside/jobs.json"
check result out/far --id far --status done --partitions 1 --single
check same-json out/far/public.json "$small/public_0.json"
verify "$small/verification_key.json" out/far
rm -rf "$outside"

# 5b. status shows a failed job's error (and exits 1 for it).
cat >mismatch.json <<JSON
{"jobs": [{"id": "mismatch", "zkey": "$medium/circuit.zkey", "witness": "$small/witness_0.wtns", "out": "$work/out/mismatch"}]}
JSON
expect_rc 1 mismatch "$proofline" submit --connect "127.0.0.1:$port" mismatch.json
expect_rc 1 status_failed "$proofline" status mismatch --connect "127.0.0.1:$port"
log_has status_failed "failed"
log_has status_failed "$small/witness_0.wtns"
expect_rc 1 status_failed_json "$proofline" status mismatch --connect "127.0.0.1:$port" --json
[ "$(json status_failed_json.log 'j[0]["error"]["file"]')" = "$small/witness_0.wtns" ] ||
  fail "status --json of a failed job: $(cat status_failed_json.log)"

# 6. The server writes result.json for every job, and metrics count them.
expect_rc 0 metrics "$proofline" metrics --connect "127.0.0.1:$port" --json
[ "$(json metrics.log 'j["jobs"]["done"]')" = 5 ] || fail "metrics: $(cat metrics.log)"
[ "$(json metrics.log 'j["partitions"]["done"]')" = 18 ] || fail "metrics: $(cat metrics.log)"
# Keys stay warm: the small key served jobs one, far and one-again but was
# read once, and metrics lists both keys.
loads=$(grep -cF "loading key $small/circuit.zkey" srv.err || true)
[ "$loads" = 1 ] || fail "the small key was loaded $loads times (warm keys load once): $(cat srv.err)"
[ "$(json metrics.log 'len(j["keys"])')" = 2 ] || fail "metrics keys: $(cat metrics.log)"
expect_rc 0 metrics_text "$proofline" metrics --connect "127.0.0.1:$port"
log_has metrics_text "warm key $small/circuit.zkey"

# 7. Refusals at start and when nothing listens.
expect_rc 2 both "$proofline" serve --listen 127.0.0.1:0 --insecure --tls-dir "$work/tls"
log_has both "--insecure turns TLS off"
expect_rc 2 badtls "$proofline" serve --listen 127.0.0.1:0 --tls-dir "$small"
log_has badtls "$small: exists but does not hold ca.pem, peer.pem and peer.key"
expect_rc 2 halftls "$proofline" serve --listen 127.0.0.1:0 --tls-cert "$small/circuit.zkey"
log_has halftls "TLS needs all of --tls-cert, --tls-key and --tls-ca"
# Started in / without --allow-root, the daemon would serve every path.
expect_rc 2 rootdir env -C / "$proofline" serve --listen 127.0.0.1:0 --tls-dir "$work/tls"
log_has rootdir "the working directory is /"
log_has rootdir "--allow-root DIR"
expect_rc 1 nothing "$proofline" status --connect 127.0.0.1:1 --connect-timeout 1
log_has nothing "cannot connect to 127.0.0.1:1"
log_has nothing 'nothing answers at 127.0.0.1:1: is `proofline serve` running there?'
expect_rc 2 inuse "$proofline" serve --listen "127.0.0.1:$port" --backend cpu
log_has inuse "the port is in use"
expect_rc 1 onesided "$proofline" status --connect "127.0.0.1:$port" --insecure --connect-timeout 1
log_has onesided "it expects TLS (this side runs --insecure)"
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >taken.port &
started+=("$!")
wait_until 10 test -s taken.port || fail "no port taken"
expect_rc 2 metricsport "$proofline" serve --listen 127.0.0.1:0 --metrics "127.0.0.1:$(cat taken.port)" --backend cpu
log_has metricsport "Address already in use"
! grep -q "listening on" metricsport.log || fail "serve said it listens although its metrics port is taken"
kill -0 "$serve_pid" || fail "the server died"
echo "PASS: net control"
