#!/usr/bin/env bash
# Connections that never finish their handshake cannot stop or fill a
# `serve` running with few file descriptors (ulimit -n 128):
#  1. 200 idle connections at the TLS port with the default limits: those
#     over --max-unauthenticated-per-address (32) are refused at once, the
#     rest closed after --handshake-timeout; the server logs the refusals,
#     and a client submits and proves meanwhile and afterwards;
#  2. the same with the limits raised above the descriptors left: accepts
#     fail with EMFILE, the waiting connections are refused, the server
#     warns and lives, and proves once the flood is gone;
#  3. slowloris: connections sending the start of a TLS handshake, or of a
#     BASP header at an --insecure listener, a byte a second, are closed
#     after --handshake-timeout.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# `proofline` with at most 128 open file descriptors, for serve only.
lowfd=$work/proofline-128fds
cat >"$lowfd" <<EOF
#!/usr/bin/env bash
ulimit -n 128
exec "$proofline" "\$@"
EOF
chmod +x "$lowfd"
serve_lowfd() {
  local real=$proofline
  proofline=$lowfd
  serve "$@"
  proofline=$real
}
# field OUTPUT NAME: the value of NAME=... in raw_peer.py's summary line.
field() { sed -n "s/.*\\b$2=\\([0-9.]*\\).*/\\1/p" <<<"$1"; }
# logged FILE TEXT: FILE says TEXT within 10 s (refusals are logged at most
# every 5 s, counted together).
logged() { wait_until 10 grep -qF -- "$2" "$1"; }
alive() {
  kill -0 "$server" 2>/dev/null || fail "the server died after $1 (exit in $2.err)"
  expect_rc 0 "status_$1" "$proofline" status --connect "$ep" --connect-timeout 30 "${status_opts[@]}"
}
status_opts=()

# 1. Default limits.
serve_lowfd srv --listen 127.0.0.1:0 --handshake-timeout 3 --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
python3 "$net_dir/raw_peer.py" flood 127.0.0.1 "$serve_port" 200 8 >flood1.log 2>&1 &
flood=$!
sleep 2
kill -0 "$server" 2>/dev/null || fail "the server died under 200 idle connections"
# Submitted while the flood's connections are open: admitted once the
# handshake timeout has closed those that fill the per-address limit.
job_file during.json during small 2 out/during
expect_rc 0 during "$proofline" submit --connect "$ep" --connect-timeout 30 during.json
wait "$flood" || fail "raw_peer flood: $(cat flood1.log)"
out=$(cat flood1.log)
echo "flood at the defaults: $out"
[ "$(field "$out" opened)" -ge 150 ] || fail "the flood could not open its connections: $out"
[ "$(field "$out" open)" = 0 ] || fail "connections stayed open past --handshake-timeout: $out"
[ "$(field "$out" refused)" -ge 100 ] || fail "the per-address limit refused too few: $out"
logged srv.err "over the limit of 32 unauthenticated connections from one address" ||
  fail "the server did not log the refusals"
logged srv.err "without a finished handshake within 3 s (--handshake-timeout)" ||
  fail "the server did not log the connections it closed for their handshake timeout"
alive flood srv
check result out/during --id during --status done --partitions 2
verify "$small/verification_key.json" out/during

# 2. Limits above what the descriptors allow: EMFILE on accept.
serve_lowfd emfile --listen 127.0.0.1:0 --handshake-timeout 3 --max-unauthenticated 1000 \
  --max-unauthenticated-per-address 1000 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
python3 "$net_dir/raw_peer.py" flood 127.0.0.1 "$serve_port" 200 2 >flood2.log 2>&1 ||
  fail "raw_peer flood: $(cat flood2.log)"
echo "flood past the descriptors: $(cat flood2.log)"
kill -0 "$server" 2>/dev/null || fail "the server died out of file descriptors"
logged emfile.err "for want of file descriptors" || fail "the server did not warn of EMFILE"
alive emfile emfile
job_file after.json after small 2 out/after
expect_rc 0 after "$proofline" submit --connect "$ep" after.json
check result out/after --id after --status done --partitions 2
verify "$small/verification_key.json" out/after

# 3. Slowloris, at the TLS listener and at an --insecure one.
python3 "$net_dir/raw_peer.py" slowloris 127.0.0.1 "$serve_port" 20 8 tls >slow_tls.log 2>&1 ||
  fail "raw_peer slowloris: $(cat slow_tls.log)"
out=$(cat slow_tls.log)
echo "slowloris (TLS): $out"
[ "$(field "$out" closed)" = 20 ] || fail "not every slow TLS handshake was closed: $out"
awk -v s="$(field "$out" last_close_s)" 'BEGIN { exit !(s >= 2.5 && s <= 6) }' ||
  fail "slow TLS handshakes were closed after $(field "$out" last_close_s) s, not about 3 s"
serve plain --listen 127.0.0.1:0 --insecure --handshake-timeout 3 --allow-root "$work" \
  --backend cpu --memory-budget 512M
ep=127.0.0.1:$serve_port
server=$serve_pid
status_opts=(--insecure)
python3 "$net_dir/raw_peer.py" slowloris 127.0.0.1 "$serve_port" 20 8 basp >slow_basp.log 2>&1 ||
  fail "raw_peer slowloris: $(cat slow_basp.log)"
out=$(cat slow_basp.log)
echo "slowloris (--insecure, BASP): $out"
[ "$(field "$out" closed)" = 20 ] || fail "not every slow BASP handshake was closed: $out"
awk -v s="$(field "$out" last_close_s)" 'BEGIN { exit !(s >= 2.5 && s <= 6) }' ||
  fail "slow BASP handshakes were closed after $(field "$out" last_close_s) s, not about 3 s"
alive plain plain
echo "PASS: net flood"
