#!/usr/bin/env bash
# Mutual TLS through CAF's OpenSSL module, with certificates made here by the
# openssl CLI: a client with a certificate from the server's CA submits and
# its proofs verify; one whose certificate comes from another CA, and one
# without TLS, are refused, and the server logs the refusal once for the
# address; a peer announcing an oversized BASP message gets
# no allocation (TLS stops it first); a node with a good certificate joins a
# TLS coordinator and proves, one without a certificate cannot join, and its
# failed attempts do not disturb the joined node. `proofline tls init` and
# `tls issue` make credentials that a coordinator, a node and a client use.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v openssl >/dev/null || fail "the openssl CLI is missing (scripts/setup.sh installs it)"

# A CA, another CA, and certificates: server and client from the first, an
# intruder from the second.
mkdir -p pki
make_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj "/CN=$1" -keyout "pki/$1.key" -out "pki/$1.pem" 2>/dev/null
}
make_cert() {
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
    -keyout "pki/$1.key" -out "pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "pki/$1.csr" -CA "pki/$2.pem" -CAkey "pki/$2.key" -CAcreateserial \
    -days 1 -out "pki/$1.pem" 2>/dev/null
}
make_ca ca
make_ca other-ca
make_cert server ca
make_cert client ca
make_cert node ca
make_cert intruder other-ca
tls_as() { echo "--tls-cert pki/$1.pem --tls-key pki/$1.key --tls-ca pki/ca.pem"; }

# shellcheck disable=SC2046
serve srv --listen 127.0.0.1:0 $(tls_as server) --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
grep -q "(TLS)" srv.out || fail "the server does not say it listens with TLS"

# 1. A client of the CA works.
job_file jobs.json secret small 2 out/secret
# shellcheck disable=SC2046
expect_rc 0 good "$proofline" submit --connect "$ep" $(tls_as client) jobs.json
check result out/secret --id secret --status done --partitions 2
verify "$small/verification_key.json" out/secret

# 2. Wrong certificate, and no TLS at all: refused.
expect_rc 1 intruder "$proofline" status --connect "$ep" --connect-timeout 2 \
  --tls-cert pki/intruder.pem --tls-key pki/intruder.key --tls-ca pki/ca.pem
log_has intruder "cannot connect"
expect_rc 1 plain "$proofline" status --connect "$ep" --connect-timeout 2 --insecure
log_has plain "cannot connect"
# The server logs the refusals, once for the address within a minute, with
# OpenSSL's reason and what a client needs.
expect_rc 1 intruder2 "$proofline" status --connect "$ep" --connect-timeout 1 \
  --tls-cert pki/intruder.pem --tls-key pki/intruder.key --tls-ca pki/ca.pem
refused=$(grep -c 'refused a TLS handshake from 127.0.0.1' srv.err || true)
[ "$refused" -eq 1 ] || fail "the server logged $refused refused handshakes from 127.0.0.1, expected 1"
grep 'refused a TLS handshake from 127.0.0.1' srv.err | grep -q 'proofline tls issue' ||
  fail "the refused handshake's log line does not say how a client gets credentials"
# A certificate that does not match its key is caught before connecting.
expect_rc 2 mismatch "$proofline" status --connect "$ep" \
  --tls-cert pki/client.pem --tls-key pki/intruder.key --tls-ca pki/ca.pem
log_has mismatch "does not match the certificate"

# 3. The BASP size announcement never reaches BASP.
before=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$server/status")
python3 "$net_dir/raw_peer.py" oversize 127.0.0.1 "$serve_port" 536870912 1 "$server" \
  >oversize.log 2>&1 || true
after=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$server/status")
cat oversize.log
[ "$after" -lt "$((before + 128))" ] || fail "the TLS server grew from $before to $after MiB"
# shellcheck disable=SC2046
expect_rc 0 still "$proofline" status --connect "$ep" $(tls_as client)

# 4. A TLS node joins a TLS coordinator and proves; a node without TLS cannot join.
# shellcheck disable=SC2046
serve coord --listen 127.0.0.1:0 --no-local-proving $(tls_as server) --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G
cep=127.0.0.1:$serve_port
# shellcheck disable=SC2046
serve node --join "$cep" $(tls_as node) --allow-root "$fixtures" --backend cpu --slots 2 \
  --memory-budget 512M
serve stranger --join "$cep" --insecure --allow-root "$fixtures" --backend cpu --memory-budget 512M
joined() { grep -q 'joined: ' coord.err; }
wait_until 15 joined || fail "the TLS node did not join"
job_file remote.json remote medium 3 out/remote
# shellcheck disable=SC2046
expect_rc 0 remote "$proofline" submit --connect "$cep" $(tls_as client) remote.json
verify "$medium/verification_key.json" out/remote
grep -q "cannot join" stranger.err || fail "the node without TLS did not report a refused join"
[ "$(grep -c 'joined: ' coord.err)" = 1 ] || fail "a node without TLS joined"
# The stranger's failed handshakes (one a second) never cost the TLS node its
# link (net/net_tls_fix.cpp: OpenSSL's error queue is cleared before each call).
! grep -q "left;" coord.err || fail "the TLS node lost its link: $(grep 'left;' coord.err)"

# 5. `proofline tls`: a CA made by `tls init`, a certificate for another
# machine made by `tls issue` (without the CA's key), and both ends working.
expect_rc 0 init "$proofline" tls init "$work/site"
log_has init "created a CA"
for f in ca.pem ca.key peer.pem peer.key; do [ -f "site/$f" ] || fail "tls init wrote no $f"; done
[ "$(stat -c %a site/peer.key)" = 600 ] || fail "peer.key is not private: $(stat -c %a site/peer.key)"
expect_rc 0 init_again "$proofline" tls init "$work/site"
log_has init_again "holds credentials already"
expect_rc 0 issue "$proofline" tls issue --ca-dir "$work/site" --name node2 "$work/node2"
[ -f node2/peer.pem ] && [ -f node2/ca.pem ] || fail "tls issue wrote no certificate"
[ ! -e node2/ca.key ] || fail "tls issue copied the CA's key"
expect_rc 1 issue_again "$proofline" tls issue --ca-dir "$work/site" --name node2 "$work/node2"
log_has issue_again "exists already"
serve site --listen 127.0.0.1:0 --tls-dir "$work/site" --no-local-proving --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G
sep=127.0.0.1:$serve_port
serve node2 --join "$sep" --tls-dir "$work/node2" --allow-root "$fixtures" --backend cpu \
  --slots 2 --memory-budget 512M
joined_site() { grep -q 'joined: ' site.err; }
wait_until 15 joined_site || fail "the node certified by tls issue did not join"
job_file site.json site small 2 out/site
expect_rc 0 site_submit "$proofline" submit --connect "$sep" --tls-dir "$work/node2" site.json
verify "$small/verification_key.json" out/site
echo "PASS: net tls"
