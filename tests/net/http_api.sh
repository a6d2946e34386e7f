#!/usr/bin/env bash
# serve --http (docs/API.md), over mutual TLS with bearer tokens: curl and
# the Python client (tests/net/http_client.py, standard library only) prove
# and snarkjs verifies; unauthenticated requests get 401 (no token, a wrong
# one) or no TLS session (no client certificate); 400 names the field, 403
# names --allow-root, 404, 405, 413 over --http-max-body, 422 for a witness
# of another circuit; every route and status answered is in
# docs/openapi.json (served at /v1/openapi.json); a burst over --max-pending
# is answered 200 or 429 with Retry-After; 500 requests (proofs, status, a
# job's view and its events) leave the resident memory flat; a draining server answers new proofs 503 with Retry-After
# and finishes the one in flight. Jobs (POST /v1/jobs, uploaded or by path):
# 202, 409 for a duplicate id, polled to done, proofs by index verified by
# snarkjs, Server-Sent Events of a finished and a live job, cancel, 429 over
# --max-pending, 400 naming the field, 403 outside --allow-root, 404; keys
# preloaded, listed, used by id and evicted. With --state, a job accepted
# before a kill -9 finishes after the restart and its proofs verify. The
# door's option checks refuse a public plain-text bind naming the flag. Jobs
# sent as forms (multipart/form-data) verify, and --http-keep-jobs removes
# the oldest finished job's outputs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

client="$net_dir/http_client.py"
token=0123456789abcdef-http-test
printf '# test clients\nalice %s\nbob another-token-0123456789\n' "$token" >tokens
chmod 600 tokens

# 1. Refused options, each naming its flag.
expect_rc 2 public "$proofline" serve --insecure --listen 127.0.0.1:0 --http 0.0.0.0:0 \
  --allow-root "$work" --backend cpu
log_has public "--http 0.0.0.0:0: not a loopback address"
log_has public "--http-tokens"
printf 'alice short\n' >bad_tokens
expect_rc 2 short "$proofline" serve --listen 127.0.0.1:0 --http 127.0.0.1:0 \
  --http-tokens bad_tokens --allow-root "$work" --backend cpu
log_has short "bad_tokens:1: the token of alice is shorter than 16 characters"

# 2. A TLS door with tokens.
serve srv --listen 127.0.0.1:0 --http 127.0.0.1:0 --http-tokens tokens --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G --http-max-body 1M --max-pending 2
http_up() { grep -q "http on https://" srv.out; }
wait_until 10 http_up || fail "serve did not print its HTTP address"
url=$(sed -n 's/.*http on //p' srv.out)
port=${url##*:}
py() { python3 "$client" "$url" "$PROOFLINE_TLS_DIR" "$token" "$@"; }

# curl: the certificate names the installation (its CN), not 127.0.0.1.
if command -v curl >/dev/null; then
  cn=$(openssl x509 -in "$PROOFLINE_TLS_DIR/peer.pem" -noout -subject | sed 's/.*CN *= *//')
  tls=(--resolve "$cn:$port:127.0.0.1" --cacert "$PROOFLINE_TLS_DIR/ca.pem"
       --cert "$PROOFLINE_TLS_DIR/peer.pem" --key "$PROOFLINE_TLS_DIR/peer.key")
  code=$(curl -s "${tls[@]}" -o curl_anon.json -w '%{http_code}' "https://$cn:$port/v1/status")
  [ "$code" = 401 ] || fail "curl without a token: $code"
  curl -sf "${tls[@]}" -H "Authorization: Bearer $token" --data-binary @"$small/witness_1.wtns" \
    "https://$cn:$port/v1/prove?key=$small/circuit.zkey" -o curl_answer.json ||
    fail "curl could not prove"
  mkdir -p out/curl
  python3 -c "
import json, sys
a = json.load(open('curl_answer.json'))
json.dump(a['proof'], open('out/curl/proof.json', 'w'))
json.dump(a['public_signals'], open('out/curl/public.json', 'w'))"
  verify "$small/verification_key.json" out/curl
else
  echo "curl not installed: the curl client is skipped"
fi

py prove "$small/circuit.zkey" "$small/witness_0.wtns" out/py || fail "python prove"
verify "$small/verification_key.json" out/py
grep -q "http: alice proves http-alice-" srv.err || fail "the log does not name the token's holder"
grep -qF "$token" srv.err && fail "the log shows a token"

py refusals "$small" "$medium" /etc/hostname 1048576 || fail "refusals"
py jobs "$small" "$medium" /etc/hostname out/jobs || fail "jobs"
verify "$small/verification_key.json" out/jobs/up out/jobs/paths
py keys "$small" /etc/hostname || fail "keys"
py burst "$medium/circuit.zkey" "$medium/witness_0.wtns" 12 || fail "burst"
py rss "$serve_pid" "$small/circuit.zkey" "$small/witness_0.wtns" 500 up || fail "rss"

# 3. Draining: with a proof running, a new one is answered 503 and the running one finishes.
py drain "$serve_pid" "$medium/circuit.zkey" "$medium/witness_1.wtns" out/inflight || fail "drain"
verify "$medium/verification_key.json" out/inflight
wait "$serve_pid" 2>/dev/null || true

# 4. kill -9 with --state: a job accepted over HTTP (uploaded witnesses)
# finishes after the restart, its proofs verified.
plain() { python3 "$client" "$(sed -n 's/.*http on //p' "$1.out")" - - "${@:2}"; }
plain_up() { grep -q "http on http://" "$1.out"; }
serve k9a --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G --state state
wait_until 10 plain_up k9a || fail "serve did not print its HTTP address"
plain k9a submit "$medium/circuit.zkey" crash "$medium/witness_0.wtns" "$medium/witness_1.wtns" \
  "$medium/witness_2.wtns" "$medium/witness_0.wtns" "$medium/witness_1.wtns" "$medium/witness_2.wtns" ||
  fail "submit before the kill"
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
ls state/spool/*/http-crash/0.wtns >/dev/null || fail "the uploaded witnesses are not in the state spool"
serve k9b --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G --state state
wait_until 10 plain_up k9b || fail "the restarted serve did not print its HTTP address"
grep -q "1 unfinished job(s) to resume" k9b.err || fail "the journal did not keep the HTTP job"
plain k9b finish crash 6 out/crash || fail "the HTTP job after the restart"
verify "$medium/verification_key.json" out/crash

# 5. Jobs sent as forms (curl -F, and Python's multipart) verify; with
# --http-keep-jobs 1 the older finished job's outputs go and its id is free.
serve keep --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G --state state5 --http-keep-jobs 1
wait_until 10 plain_up keep || fail "serve --http-keep-jobs did not print its HTTP address"
plain keep form "$small/circuit.zkey" form1 out/form "$small/witness_0.wtns" "$small/witness_1.wtns" ||
  fail "a job sent as a form"
verify "$small/verification_key.json" out/form
if command -v curl >/dev/null; then
  keep_url=$(sed -n 's/.*http on //p' keep.out)
  curl -sf -F key="$small/circuit.zkey" -F id=curl1 -F witness=@"$small/witness_1.wtns" \
    "$keep_url/v1/jobs" -o curl_form.json || fail "curl -F could not submit a job"
  plain keep finish curl1 1 out/curlform || fail "the job curl -F sent"
  verify "$small/verification_key.json" out/curlform
fi
plain keep retention "$small/circuit.zkey" "$small/witness_0.wtns" state5/http-jobs ||
  fail "retention"
grep -q "removed the outputs of 1 finished job(s)" keep.err || fail "the log does not say what went"
echo "PASS: net http_api"
