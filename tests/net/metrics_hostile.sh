#!/usr/bin/env bash
# Hostile HTTP clients at `serve --metrics` (tests/net/http_peer.py): a
# header bomb of 128 MiB leaves the daemon's resident memory where it was and
# is refused; four clients sending a request head a byte every 200 ms keep
# neither /healthz nor /readyz from answering within 1 s, and are closed
# once their 2 s are up; the daemon still scrapes and proves afterwards.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --allow-root "$work" \
  --allow-root "$fixtures" --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port
server=$serve_pid
metrics_logged() { grep -q "metrics: http://127.0.0.1:" srv.err; }
wait_until 10 metrics_logged || fail "serve did not log its metrics address"
mport=$(sed -n 's|.*metrics: http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' srv.err | head -1)
# field OUTPUT NAME: the value of NAME=... in http_peer.py's summary line.
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }
scrape() { python3 -c "
import sys, urllib.request
r = urllib.request.urlopen('http://127.0.0.1:$mport$1', timeout=5)
sys.exit(0 if r.status == 200 else 1)"; }
scrape /healthz || fail "/healthz does not answer"
scrape /readyz || fail "/readyz does not answer"

# 1. A header bomb.
out=$(python3 "$net_dir/http_peer.py" bomb 127.0.0.1 "$mport" 128 "$server")
echo "header bomb: $out"
kill -0 "$server" 2>/dev/null || fail "the server died of a header bomb"
before=$(field "$out" before_rss_mib)
peak=$(field "$out" peak_rss_mib)
[ "$peak" -lt "$((before + 32))" ] || fail "a header bomb grew the server from $before to $peak MiB"
case "$(field "$out" status)" in
  HTTP/1.1_431_* | none) ;;
  *) fail "a header bomb was answered $(field "$out" status)" ;;
esac
scrape /healthz || fail "/healthz does not answer after the bomb"

# 2. Slowloris while probes ask.
out=$(python3 "$net_dir/http_peer.py" slowloris 127.0.0.1 "$mport" 4 4)
echo "slowloris: $out"
[ "$(field "$out" failed)" = 0 ] || fail "probes failed while slow clients sent: $out"
[ "$(field "$out" worst_ms)" -lt 1000 ] || fail "a probe took $(field "$out" worst_ms) ms: $out"
[ "$(field "$out" slow_closed)" = 4 ] || fail "slow clients were not closed after 2 s: $out"

# 3. Still scraping and proving.
scrape /metrics || fail "/metrics does not answer"
job_file jobs.json after small 2 out/after
expect_rc 0 after "$proofline" submit --connect "$ep" jobs.json
check result out/after --id after --status done --partitions 2
verify "$small/verification_key.json" out/after
echo "PASS: net metrics_hostile"
