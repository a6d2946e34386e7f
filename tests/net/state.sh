#!/usr/bin/env bash
# serve --state: a daemon killed with SIGKILL in the middle of a backlog
# (files and inline witnesses) loses no accepted job. Restarted with the same
# --state, it finishes every job; partitions the journal recorded as done
# keep their proofs byte for byte (not proved again); no partly written file
# is left under out/; every proof verifies with snarkjs. SIGTERM drains: the
# partitions in flight are written whole within --drain-timeout, serve exits
# 143, and a restart proves the queued rest. A journal that is not SQLite, or
# cannot be opened, stops serve with exit 2 naming the file.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

state=$work/state
common=(--allow-root "$work" --allow-root "$fixtures" --backend cpu --memory-budget 1G
  --synthesizers 1 --finalizers 1 --cpu-threads 1 --state "$state")

serve first --listen 127.0.0.1:0 "${common[@]}"
ep=127.0.0.1:$serve_port
job_file jobs.json big medium 5 out/big
job_file jobs.json small small 2 out/small
job_file jobs.json late small 3 out/late
job_file inline.json carried small 2 out/carried
expect_rc 0 submit "$proofline" submit --connect "$ep" --no-wait jobs.json
expect_rc 0 submit_inline "$proofline" submit --connect "$ep" --no-wait --inline inline.json
[ -f "$state/journal.sqlite" ] || fail "no journal in $state"

# Kill once a few partitions are written, with most of the backlog queued.
wait_until 120 test -f out/big/proof_1.json || fail "no partition finished: $(tail -3 first.err)"
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
[ ! -f out/late/result.json ] || fail "the whole backlog finished before the kill; nothing to test"

# What the journal holds now: jobs and the partitions it recorded as done,
# with a digest of each such proof. Read from a copy: an SQLite program that
# opens the journal itself folds the log into journal.sqlite and removes it,
# which serve cannot tell from a lost log.
mkdir -p inspect
cp "$state"/journal.sqlite* inspect/
python3 - inspect/journal.sqlite >journal-before.txt <<'PY'
import hashlib, json, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
jobs = {jid: (id_, out, single) for jid, id_, out, single in db.execute("SELECT jid, id, out, single FROM jobs")}
for jid, idx in db.execute("SELECT jid, idx FROM parts ORDER BY jid, idx"):
    id_, out, single = jobs[jid]
    name = "proof.json" if single else f"proof_{idx}.json"
    digest = hashlib.sha256(open(os.path.join(out, name), "rb").read()).hexdigest()
    print(f"{id_} {os.path.join(out, name)} {digest}")
print("jobs", " ".join(sorted(j[0] for j in jobs.values())))
PY
cat journal-before.txt
grep -q "^big " journal-before.txt || fail "the journal recorded no finished partition of job big"
grep -q "^jobs .*late" journal-before.txt || fail "the journal does not hold the queued job late"

# Restart with the same state: every job completes.
serve second --listen 127.0.0.1:0 "${common[@]}"
ep=127.0.0.1:$serve_port
# The jobs the journal held are the restarted server's (the others finished
# before the kill and are checked on disk below).
for id in $(sed -n 's/^jobs //p' journal-before.txt); do
  expect_rc 0 "await_$id" "$proofline" await --connect "$ep" "$id"
done
grep -q "re-queued [0-9]* job(s)" second.err || fail "the restarted server does not say it re-queued jobs"
check_done out/big big 5
check_done out/small small 2
check_done out/late late 3
check_done out/carried carried 2
verify "$fixtures/bn254/medium/verification_key.json" out/big
verify "$fixtures/bn254/small/verification_key.json" out/small out/late out/carried

# Partitions journaled as done were not proved again.
kept=0
while read -r id file digest; do
  [ "$id" = jobs ] && continue
  now=$(sha256sum "$file" | cut -d' ' -f1)
  [ "$now" = "$digest" ] || fail "$file was proved again although the journal had it done"
  kept=$((kept + 1))
done <journal-before.txt
echo "$kept journaled partition(s) kept their proofs"
if find out -name '*.tmp-*' | grep -q .; then fail "partly written files left: $(find out -name '*.tmp-*')"; fi
# Finished jobs leave the journal.
left=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM jobs').fetchone()[0])" "$state/journal.sqlite")
[ "$left" = 0 ] || fail "$left finished job(s) still in the journal"
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true

# SIGTERM drains: the partitions in flight finish and are written within
# --drain-timeout, the queued rest stays in the journal, and serve exits 143.
drain_s=60
serve third --listen 127.0.0.1:0 "${common[@]}" --drain-timeout "$drain_s"
ep=127.0.0.1:$serve_port
job_file drain.json queue medium 8 out/queue
expect_rc 0 submit_queue "$proofline" submit --connect "$ep" --no-wait drain.json
wait_until 120 test -f out/queue/proof_0.json || fail "no partition finished: $(tail -3 third.err)"
start=$(date +%s)
stop_serve
took=$(($(date +%s) - start))
[ "$took" -le "$drain_s" ] || fail "the drain took $took s, more than --drain-timeout $drain_s"
grep -q "SIGTERM received: draining" third.err || fail "serve does not say it drains"
grep -q "drained in .* 1 job(s) with [0-9]* partition(s) to prove stay in the journal" third.err ||
  fail "serve does not say what stays in the journal"
[ ! -f out/queue/result.json ] || fail "the whole backlog finished before the drain; nothing to test"
# What the drain wrote is whole and verifies; nothing is half-written.
written=0
for proof in out/queue/proof_*.json; do
  i=${proof##*/proof_}
  i=${i%.json}
  expect_rc 0 "verify_$i" "$proofline" verify "$fixtures/bn254/medium/verification_key.json" \
    "out/queue/public_$i.json" "$proof"
  written=$((written + 1))
done
[ "$written" -lt 8 ] || fail "every partition was proved during the drain: queued ones started"
if find out -name '*.tmp-*' | grep -q .; then fail "partly written files left: $(find out -name '*.tmp-*')"; fi
echo "the drain left $written of 8 partition(s) written in $took s"
# The restart proves the rest.
serve fourth --listen 127.0.0.1:0 "${common[@]}"
ep=127.0.0.1:$serve_port
expect_rc 0 await_queue "$proofline" await --connect "$ep" queue
check_done out/queue queue 8
verify "$fixtures/bn254/medium/verification_key.json" out/queue
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true

# A journal that is not SQLite, and one that cannot be opened: exit 2, naming it.
mkdir -p bad
head -c 4096 /dev/urandom >bad/journal.sqlite
expect_rc 2 corrupt "$proofline" serve --listen 127.0.0.1:0 --allow-root "$work" --state "$work/bad"
log_has corrupt "$work/bad/journal.sqlite"
log_has corrupt "move journal.sqlite, journal.sqlite-wal and journal.sqlite-shm away"
mkdir -p unopenable/journal.sqlite
expect_rc 2 unopenable "$proofline" serve --listen 127.0.0.1:0 --allow-root "$work" \
  --state "$work/unopenable"
log_has unopenable "$work/unopenable/journal.sqlite"
echo "PASS: net state"
