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
# the 32-byte header, an announced 4 GiB payload, two peers announcing 10^9
# bytes each before any handshake, garbage, a truncated header and the
# random bursts reach CAF's BASP broker, must survive them all and allocate
# nothing for the announced payloads.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
grep -q "(TLS)" srv.out || fail "the default server does not listen with TLS"
[ -f "$PROOFLINE_TLS_DIR/peer.pem" ] || fail "serve did not create credentials in $PROOFLINE_TLS_DIR"
seed=${PROOFLINE_NET_FUZZ_SEED:-$RANDOM}
count=${PROOFLINE_NET_FUZZ_COUNT:-40}

# serving LABEL: the server ($server at $ep, status options $status_opts)
# is alive and answers status.
status_opts=()
serving() {
  kill -0 "$server" 2>/dev/null || fail "the server at $ep died after $1"
  expect_rc 0 "status_$1" "$proofline" status --connect "$ep" --connect-timeout 30 "${status_opts[@]}"
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
# unauthenticated_bytes PREFIX: every raw peer at the server on $serve_port;
# after each it still answers, and neither the announced 4 GiB nor two
# announced 10^9 bytes raised its resident memory.
unauthenticated_bytes() {
  local prefix=$1 before after peak
  raw "${prefix}garbage" garbage 127.0.0.1 "$serve_port"
  raw "${prefix}basp32" basp32 127.0.0.1 "$serve_port"
  raw "${prefix}truncated" truncated 127.0.0.1 "$serve_port"
  before=$(rss_mib)
  raw "${prefix}oversize" oversize 127.0.0.1 "$serve_port" 4294967295 2 "$server"
  after=$(rss_mib)
  echo "server RSS: $before MiB before, $after MiB after an announced 4 GiB message"
  [ "$after" -lt "$((before + 64))" ] || fail "the server at $ep grew from $before to $after MiB"
  # Under the payload limit (10^9 bytes < --max-inline 1 GiB + 65 MiB), from
  # peers that never handshook: two at once.
  before=$(rss_mib)
  raw "${prefix}announce" announce 127.0.0.1 "$serve_port" 1000000000 2 2 "$server"
  peak=$(sed -n 's/.*peak_rss_mib=\([0-9-]*\).*/\1/p' "raw_${prefix}announce.log")
  echo "server RSS: $before MiB before, $peak MiB at most while two peers announced 10^9 bytes"
  [ "$peak" -lt "$((before + 64))" ] || fail "the server at $ep grew from $before to $peak MiB"
  echo "random bursts: seed $seed (PROOFLINE_NET_FUZZ_SEED=$seed replays them)"
  raw "${prefix}random" random 127.0.0.1 "$serve_port" "$count" "$seed"
}

# 1. Unauthenticated bytes.
unauthenticated_bytes ""

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
# same bytes reach CAF's BASP broker. The BASP guard (net/basp_guard.cpp)
# closes the connections of the 32-byte header (before CAF dereferences the
# missing payload), of the announced 4 GiB (over the payload limit) and of
# the 10^9 bytes announced before a handshake (over what one needs), before
# CAF allocates anything.
serve plain --listen 127.0.0.1:0 --insecure --allow-root "$work" --backend cpu --memory-budget 512M
grep -q "plain text and unauthenticated" plain.err || fail "--insecure gave no warning"
ep=127.0.0.1:$serve_port
server=$serve_pid
status_opts=(--insecure)
unauthenticated_bytes plain_
grep -q "announces no payload for an operation that needs one" plain.err ||
  fail "the --insecure listener did not log the empty handshake it refused"
grep -q "before its handshake, over the 65536 a handshake may hold" plain.err ||
  fail "the --insecure listener did not log the announcements before a handshake"
# After a handshake, a payload over the server's limit (--max-inline + 65 MiB).
raw plain_handshake_oversize announce 127.0.0.1 "$serve_port" 4294967295 1 1 "$server" handshake
grep -q "closed=1" raw_plain_handshake_oversize.log || fail "the oversized message was not refused"
grep -q "over the limit of" plain.err || fail "the --insecure listener did not log the oversized header"
# After a handshake, a payload under the limit is read as it arrives, in
# steps of 1 MiB, not allocated whole: two peers announcing 10^9 bytes.
before=$(rss_mib)
raw plain_handshake_announce announce 127.0.0.1 "$serve_port" 1000000000 2 2 "$server" handshake
peak=$(sed -n 's/.*peak_rss_mib=\([0-9-]*\).*/\1/p' raw_plain_handshake_announce.log)
echo "server RSS: $before MiB before, $peak MiB at most while two handshaken peers announced 10^9 bytes"
[ "$peak" -lt "$((before + 64))" ] || fail "the --insecure server grew from $before to $peak MiB"
# A message of several steps still arrives whole: a submission of 1.5 MB (a
# job file padded with whitespace, and its two witnesses inline).
mkdir -p big
cp "$small/circuit.zkey" big/
job_file big.json big small 2 out/big
python3 - big.json <<'PY'
import json, os, shutil, sys
doc = json.load(open(sys.argv[1]))
job = doc["jobs"][0]
job["zkey"] = os.path.abspath("big/circuit.zkey")
ws = []
for i, w in enumerate(job["witnesses"]):
    copy = os.path.abspath(f"big/w{i}.wtns")
    shutil.copyfile(w, copy)
    ws.append(copy)
job["witnesses"] = ws
with open(sys.argv[1], "w") as f:
    json.dump(doc, f)
    f.write(" " * (3 << 19))
PY
[ "$(wc -c <big.json)" -gt $((3 << 19)) ] || fail "big.json is not above 1.5 MiB"
expect_rc 0 big "$proofline" submit --connect "$ep" --insecure --inline big.json
check result out/big --id big --status done --partitions 2
verify "$small/verification_key.json" out/big
echo "PASS: net hostile_peers"
