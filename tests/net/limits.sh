#!/usr/bin/env bash
# The server's own limits and a client's refusal of plain text: a submission
# whose inline witnesses exceed serve --max-inline is refused, naming the
# option, and nothing is spooled; one under the cap proves and verifies; a
# client using TLS (the default) refuses a server started with --insecure
# instead of falling back to plain text.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" --backend cpu \
  --memory-budget 1G --max-inline 64K --spool "$work/spool"
ep=127.0.0.1:$serve_port
# Each small witness is about 14 KiB: 40 of them are more than 64 KiB, 2 less.
job_file big.json big small 40 out/big
python3 - big.json <<'PY'
import json, os, shutil, sys
doc = json.load(open(sys.argv[1]))
ws = []
for i, w in enumerate(doc["jobs"][0]["witnesses"]):  # distinct paths: each is sent
    copy = os.path.abspath(f"w{i}.wtns")
    shutil.copyfile(w, copy)
    ws.append(copy)
doc["jobs"][0]["witnesses"] = ws
json.dump(doc, open(sys.argv[1], "w"))
PY
total=$(cat w*.wtns | wc -c)
[ "$total" -gt 65536 ] || fail "the witnesses total $total bytes, not above the 64 KiB cap"
expect_rc 2 over "$proofline" submit --connect "$ep" --inline big.json
log_has over "serve --max-inline"
[ -z "$(ls -A spool 2>/dev/null)" ] || fail "a refused submission left files in the spool: $(ls spool)"
job_file small.json fits small 2 out/fits
expect_rc 0 under "$proofline" submit --connect "$ep" --inline small.json
verify "$fixtures/bn254/small/verification_key.json" out/fits

# A TLS client never talks plain text to an --insecure server.
serve plain --listen 127.0.0.1:0 --insecure --allow-root "$work" --backend cpu --memory-budget 512M
expect_rc 1 tls_to_plain "$proofline" status --connect "127.0.0.1:$serve_port" --connect-timeout 2
log_has tls_to_plain "cannot connect"
expect_rc 0 plain_to_plain "$proofline" status --connect "127.0.0.1:$serve_port" --insecure
echo "PASS: net limits"
