#!/usr/bin/env bash
# Peers that are not proofline clients leave a default `serve` (mutual TLS
# on loopback) serving. Unauthenticated bytes: garbage; the 32-byte BASP
# handshake header with an empty payload on which CAF 0.17.6 alone
# dereferences a null pointer; a truncated header; a header announcing
# 2^32 - 1 bytes, held open (no allocation may follow: TLS stops it before
# BASP); bursts of random bytes (seed from PROOFLINE_NET_FUZZ_SEED, count
# from PROOFLINE_NET_FUZZ_COUNT). Then authenticated peers that misbehave: a
# CAF peer with the installation's certificate sending messages the control
# actor does not understand, messages claiming strings and byte vectors of
# 2^40 and 2^62 bytes, and values whose variant type tags CAF's decoder
# throws on (each closes only that peer's connection). After each, status
# answers; at the end a job proves. Finally an --insecure listener, where
# the 32-byte header, an announced 4 GiB payload, garbage, a truncated
# header and the random bursts reach CAF's BASP broker, must survive them
# all and allocate nothing for the announced payload.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
grep -q "(TLS)" srv.out || fail "the default server does not listen with TLS"
[ -f "$PROOFLINE_TLS_DIR/peer.pem" ] || fail "serve did not create credentials in $PROOFLINE_TLS_DIR"
seed=${PROOFLINE_NET_FUZZ_SEED:-$RANDOM}
count=${PROOFLINE_NET_FUZZ_COUNT:-40}

serving() {
  kill -0 "$server" 2>/dev/null || fail "the server died after $1"
  expect_rc 0 "status_$1" "$proofline" status --connect "$ep" --connect-timeout 30
}
rss_mib() { echo $(($(awk '/^VmRSS:/ {print $2}' "/proc/$server/status") / 1024)); }
raw() {
  local label=$1
  shift
  python3 "$net_dir/raw_peer.py" "$@" >"raw_$label.log" 2>&1 ||
    fail "raw_peer $*: $(cat "raw_$label.log")"
  cat "raw_$label.log"
  serving "$label"
}

# 1. Unauthenticated bytes.
raw garbage garbage 127.0.0.1 "$serve_port"
raw basp32 basp32 127.0.0.1 "$serve_port"
raw truncated truncated 127.0.0.1 "$serve_port"
before=$(rss_mib)
raw oversize oversize 127.0.0.1 "$serve_port" 4294967295 2 "$server"
after=$(rss_mib)
echo "server RSS: $before MiB before, $after MiB after an announced 4 GiB message"
[ "$after" -lt "$((before + 64))" ] || fail "the server grew from $before to $after MiB"
echo "random bursts: seed $seed (PROOFLINE_NET_FUZZ_SEED=$seed replays them)"
raw random random 127.0.0.1 "$serve_port" "$count" "$seed"

# 2. A client without credentials, or in plain text, is refused.
expect_rc 1 plain "$proofline" status --connect "$ep" --connect-timeout 2 --insecure
log_has plain "cannot connect"
expect_rc 2 nocreds env PROOFLINE_TLS_DIR="$work/none" "$proofline" status --connect "$ep" --connect-timeout 1
log_has nocreds "no TLS credentials in $work/none"

# 3. Authenticated peers that misbehave.
expect_rc 0 unexpected "$net_probe" unexpected 127.0.0.1 "$serve_port"
log_has unexpected "error system_error(unexpected_message)"
serving unexpected
grep -q "control: dropped an unexpected message" srv.err || fail "the server did not log the drop"
expect_rc 0 bomb "$net_probe" bomb 127.0.0.1 "$serve_port"
serving bomb
expect_rc 0 variant "$net_probe" variant 127.0.0.1 "$serve_port"
serving variant
n=$(grep -c "its message could not be decoded" srv.err || true)
[ "$n" -ge 2 ] || fail "the server logged $n undecodable messages of the 2 sent"

# 4. Still proving.
job_file jobs.json after small 2 out/after
expect_rc 0 after "$proofline" submit --connect "$ep" jobs.json
check result out/after --id after --status done --partitions 2
verify "$small/verification_key.json" out/after

# 5. A plain-text (--insecure) listener: no TLS in front of BASP, so the
# 32-byte header and an announced 4 GiB payload reach CAF's BASP broker; the
# BASP guard (net/basp_guard.cpp) closes both connections before CAF
# dereferences the missing payload or allocates the announced one.
serve plain --listen 127.0.0.1:0 --insecure --allow-root "$work" --backend cpu --memory-budget 512M
grep -q "plain text and unauthenticated" plain.err || fail "--insecure gave no warning"
server=$serve_pid
plain_serving() {
  kill -0 "$server" 2>/dev/null || fail "the --insecure listener died after $1"
  expect_rc 0 "plain_status_$1" "$proofline" status --connect "127.0.0.1:$serve_port" \
    --connect-timeout 30 --insecure
}
python3 "$net_dir/raw_peer.py" basp32 127.0.0.1 "$serve_port" >raw_plain_basp32.log 2>&1 ||
  fail "raw_peer basp32: $(cat raw_plain_basp32.log)"
plain_serving basp32
grep -q "announces no payload for an operation that needs one" plain.err ||
  fail "the --insecure listener did not log the empty handshake it refused"
before=$(rss_mib)
python3 "$net_dir/raw_peer.py" oversize 127.0.0.1 "$serve_port" 4294967295 2 "$server" \
  >raw_plain_oversize.log 2>&1 || fail "raw_peer oversize: $(cat raw_plain_oversize.log)"
cat raw_plain_oversize.log
after=$(rss_mib)
echo "--insecure server RSS: $before MiB before, $after MiB after an announced 4 GiB message"
[ "$after" -lt "$((before + 64))" ] || fail "the --insecure listener grew from $before to $after MiB"
grep -q "over the limit of" plain.err || fail "the --insecure listener did not log the oversized header"
plain_serving oversize
for mode in garbage truncated; do
  python3 "$net_dir/raw_peer.py" "$mode" 127.0.0.1 "$serve_port" >"raw_plain_$mode.log" 2>&1 ||
    fail "raw_peer $mode: $(cat "raw_plain_$mode.log")"
  plain_serving "$mode"
done
python3 "$net_dir/raw_peer.py" random 127.0.0.1 "$serve_port" "$count" "$seed" \
  >raw_plain_random.log 2>&1 || fail "raw_peer random: $(cat raw_plain_random.log)"
plain_serving random
echo "PASS: net hostile_peers"
