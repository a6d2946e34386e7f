#!/usr/bin/env bash
# Two live jobs cannot share an out directory through an alias: a job whose
# out path reaches a live job's out directory through a symlink (the
# directory existing already, or not yet created below a symlinked parent)
# is refused, naming the live job; the live job's proofs stay its own.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve srv --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fixtures" \
  --backend cpu --memory-budget 1G
ep=127.0.0.1:$serve_port

mkdir -p out/existing
ln -s out alias
# The first two hold the server busy for a while (40 partitions each).
job_file a.json a medium 40 out/existing
job_file b.json b medium 40 out/later
expect_rc 0 a "$proofline" submit --connect "$ep" --no-wait a.json
expect_rc 0 b "$proofline" submit --connect "$ep" --no-wait b.json

job_file c.json c small 1 alias/existing
expect_rc 2 c "$proofline" submit --connect "$ep" --no-wait c.json
log_has c 'is the out directory of live job "a"'
job_file d.json d small 1 alias/later
expect_rc 2 d "$proofline" submit --connect "$ep" --no-wait d.json
log_has d 'is the out directory of live job "b"'
# Within one submission too.
job_file e.json e1 small 1 out/both
job_file e.json e2 small 1 alias/both
expect_rc 2 e "$proofline" submit --connect "$ep" --no-wait e.json
log_has e 'is also the out directory of job "e1"'

expect_rc 0 cancel_a "$proofline" cancel a --connect "$ep"
expect_rc 0 cancel_b "$proofline" cancel b --connect "$ep"
python3 - <<'PY' || fail "a refused job wrote into a live job's out directory"
import json
for out, jid in (("out/existing", "a"), ("out/later", "b")):
    try:
        r = json.load(open(out + "/result.json"))
    except FileNotFoundError:
        continue
    assert r["id"] == jid, (out, r["id"])
PY
# Once the live jobs are over, the alias may be used.
expect_rc 0 c_again "$proofline" submit --connect "$ep" c.json
check_done out/existing c 1
echo "ok: out directories are compared by device and inode"
