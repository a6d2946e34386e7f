#!/usr/bin/env bash
# Peers that are not proofline clients leave the server serving: garbage
# bytes; a BASP header announcing an oversized message (CAF 0.17 allocates
# the announced payload before any handshake: the server's memory grows by
# that much until the peer goes, then shrinks; size from
# PROOFLINE_NET_OVERSIZE_BYTES, default 512 MiB, at most 4 GiB - 1); a CAF
# peer sending messages the control actor does not understand; one whose
# messages claim strings and byte vectors of 2^40 and 2^62 bytes. After
# each, status answers, and at the end a job proves.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
oversize=${PROOFLINE_NET_OVERSIZE_BYTES:-536870912}

serving() {
  kill -0 "$server" 2>/dev/null || fail "the server died after $1"
  expect_rc 0 "status_$1" "$proofline" status --connect "$ep" --connect-timeout 30
}
rss_mib() { echo $(($(awk '/^VmRSS:/ {print $2}' "/proc/$server/status") / 1024)); }

# 1. Garbage: an HTTP request, then bytes that are no BASP header.
python3 "$net_dir/raw_peer.py" garbage 127.0.0.1 "$serve_port" >garbage.log 2>&1 ||
  fail "raw_peer garbage: $(cat garbage.log)"
serving garbage

# 2. An oversized announcement, held open for 2 s, then closed.
before=$(rss_mib)
python3 "$net_dir/raw_peer.py" oversize 127.0.0.1 "$serve_port" "$oversize" 2 "$server" \
  >oversize.log 2>&1 || fail "raw_peer oversize: $(cat oversize.log)"
cat oversize.log
serving oversize
sleep 1
after=$(rss_mib)
echo "server RSS: $before MiB before, $after MiB after the peer left"
[ "$after" -lt "$((before + oversize / 1048576 / 2))" ] ||
  fail "the server kept the announced $((oversize / 1048576)) MiB after the peer left"

# 3. A CAF peer with messages the control actor does not take.
expect_rc 0 unexpected "$net_probe" unexpected 127.0.0.1 "$serve_port"
log_has unexpected "error system_error(unexpected_message)"
serving unexpected
grep -q "control: dropped an unexpected message" srv.err || fail "the server did not log the drop"

# 4. Length bombs inside well-formed BASP messages.
expect_rc 0 bomb "$net_probe" bomb 127.0.0.1 "$serve_port"
serving bomb

# 5. Still proving.
job_file jobs.json after small 2 out/after
expect_rc 0 after "$proofline" submit --connect "$ep" jobs.json
check result out/after --id after --status done --partitions 2
verify "$small/verification_key.json" out/after
echo "PASS: net hostile_peers"
