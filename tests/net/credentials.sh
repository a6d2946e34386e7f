#!/usr/bin/env bash
# A TLS server loads its credentials once and again on SIGHUP, never per
# connection: with peer.pem gone for a while (a rotation that is not atomic)
# connections keep being accepted and a client still gets answers; SIGHUP
# while the files are missing, or while the certificate and key do not
# match, keeps the credentials in use and says why; SIGHUP after a complete
# rotation makes new connections present the new certificate.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v openssl >/dev/null || fail "the openssl CLI is missing (scripts/setup.sh installs it)"

expect_rc 0 init "$proofline" tls init "$work/srv-tls" --name first
expect_rc 0 issue_client "$proofline" tls issue --ca-dir "$work/srv-tls" --name client "$work/cli-tls"
expect_rc 0 issue_rotated "$proofline" tls issue --ca-dir "$work/srv-tls" --name rotated \
  "$work/rotated-tls"
expect_rc 0 issue_other "$proofline" tls issue --ca-dir "$work/srv-tls" --name other "$work/other-tls"

serve srv --listen 127.0.0.1:0 --tls-dir "$work/srv-tls" --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
client=(--connect "$ep" --tls-dir "$work/cli-tls" --connect-timeout 10)

alive() {
  kill -0 "$server" 2>/dev/null || fail "the server died after $1 (see srv.err)"
  expect_rc 0 "status_$1" "$proofline" status "${client[@]}"
}
# presented: the subject of the certificate the server presents now.
presented() {
  openssl s_client -connect "$ep" -cert cli-tls/peer.pem -key cli-tls/peer.key \
    -CAfile cli-tls/ca.pem </dev/null 2>/dev/null | openssl x509 -noout -subject
}
# hup: sends SIGHUP and waits for the server to log its answer.
hup() {
  local before
  before=$(grep -c "SIGHUP" srv.err || true)
  kill -HUP "$server"
  hup_logged() { [ "$(grep -c "SIGHUP" srv.err || true)" -gt "$before" ]; }
  wait_until 10 hup_logged || fail "the server logged nothing after SIGHUP"
}
alive start
presented | grep -q "CN *= *first" || fail "the server does not present its certificate: $(presented)"

# 1. peer.pem missing for a while: new connections (raw and a client's)
# are served with the credentials loaded at the start.
mv srv-tls/peer.pem srv-tls/peer.pem.moved
python3 "$net_dir/raw_peer.py" garbage 127.0.0.1 "$serve_port" >raw_gap.log 2>&1 ||
  fail "raw_peer: $(cat raw_gap.log)"
alive gap
presented | grep -q "CN *= *first" || fail "a connection during the gap got: $(presented)"

# 2. SIGHUP while peer.pem is missing: the credentials in use stay.
hup
grep -q "SIGHUP: kept the TLS credentials in use" srv.err || fail "no warning for the failed reload"
grep "SIGHUP: kept" srv.err | grep -q "peer.pem" || fail "the warning does not name peer.pem"
alive hup_missing

# 3. A rotation halfway: the new certificate beside the old key.
cp rotated-tls/peer.pem srv-tls/peer.pem
hup
grep "SIGHUP: kept" srv.err | grep -q "does not match" || fail "a mismatched key was not refused"
alive hup_mismatch
presented | grep -q "CN *= *first" || fail "a half rotation changed the certificate: $(presented)"

# 4. The rotation complete: SIGHUP, and new connections present it.
cp rotated-tls/peer.key srv-tls/peer.key
hup
grep -q "SIGHUP: reloaded the TLS credentials" srv.err || fail "the complete rotation was not loaded"
presented | grep -q "CN *= *rotated" || fail "after the reload the server presents: $(presented)"
alive rotated

# 5. Still proving, through the reloaded credentials.
job_file jobs.json after small 2 out/after
expect_rc 0 after "$proofline" submit "${client[@]}" jobs.json
check result out/after --id after --status done --partitions 2
verify "$small/verification_key.json" out/after
echo "PASS: net credentials"
