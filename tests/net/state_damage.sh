#!/usr/bin/env bash
# serve --state and a damaged journal. After a SIGKILL the latest writes sit
# in journal.sqlite-wal; each damage below (the log deleted, its header
# corrupted, the log truncated, journal.sqlite truncated to 0 bytes) makes
# serve either refuse to start (exit 2, naming the file and how to recover)
# or start with every acknowledged job. After a clean stop journal.sqlite
# alone holds the whole journal. A state directory moved between runs
# resumes its inline jobs, whose spooled witnesses are removed once they
# finish.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

common=(--allow-root "$work" --allow-root "$fixtures" --backend cpu --memory-budget 1G
  --synthesizers 1 --finalizers 1 --cpu-threads 1)
# A coordinator that proves nothing and has no nodes: accepted jobs stay queued.
queue_only=("${common[@]}" --no-local-proving)

# Three jobs, a clean stop (SIGTERM), then two more and SIGKILL: journal.sqlite
# holds what the first run wrote, the log what the second wrote.
serve first --listen 127.0.0.1:0 "${queue_only[@]}" --state "$work/state"
for i in 1 2 3; do
  job_file "j$i.json" "j$i" small 2 "out/j$i"
  expect_rc 0 "submit_$i" "$proofline" submit --connect "127.0.0.1:$serve_port" --no-wait "j$i.json"
done
stop_serve
[ ! -s state/journal.sqlite-wal ] || fail "a clean stop left writes in journal.sqlite-wal"
# The documented backup after a clean stop: journal.sqlite alone.
mkdir copy
cp state/journal.sqlite copy/
serve second --listen 127.0.0.1:0 "${queue_only[@]}" --state "$work/state"
for i in 4 5; do
  job_file "j$i.json" "j$i" small 2 "out/j$i"
  expect_rc 0 "submit_$i" "$proofline" submit --connect "127.0.0.1:$serve_port" --no-wait "j$i.json"
done
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
[ -s state/journal.sqlite-wal ] || fail "no write-ahead log after SIGKILL: nothing to damage"
cp -a state pristine

# resumed_or_refused NAME STATE FILE IDS [must-resume]: serve on STATE either
# exits 2 naming FILE and how to recover, or starts with exactly the jobs IDS;
# sets $outcome to refused or resumed.
resumed_or_refused() {
  local name=$1 state=$2 file=$3 ids=$4 must=${5:-} pid port="" i rc got
  # Made here, as serve() in lib.sh does: the loop below may read them
  # before the background process has opened them.
  : >"$name.out"
  : >"$name.err"
  "$proofline" serve --listen 127.0.0.1:0 "${queue_only[@]}" --state "$state" \
    >"$name.out" 2>"$name.err" &
  pid=$!
  started+=("$pid")
  for i in $(seq 150); do
    port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$name.out")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    set +e
    wait "$pid"
    rc=$?
    set -e
    [ -z "$must" ] || fail "$name: serve refused a sound journal: $(cat "$name.err")"
    [ "$rc" = 2 ] || fail "$name: serve exited $rc, expected 2 or a start: $(cat "$name.err")"
    grep -qF -- "$file" "$name.err" || fail "$name: the refusal does not name $file: $(cat "$name.err")"
    grep -qF "move journal.sqlite, journal.sqlite-wal and journal.sqlite-shm away" "$name.err" ||
      fail "$name: the refusal does not say how to recover: $(cat "$name.err")"
    echo "$name: refused: $(cat "$name.err")"
    outcome=refused
    return
  fi
  expect_rc 0 "${name}_status" "$proofline" status --connect "127.0.0.1:$port" --json
  got=$(json "${name}_status.log" '" ".join(sorted(s["id"] for s in j))')
  [ "$got" = "$ids" ] || fail "$name: serve started with jobs '$got', expected '$ids'"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$name: resumed $ids"
  outcome=resumed
}

restore() {
  rm -rf state
  cp -a pristine state
}
all="j1 j2 j3 j4 j5"
restore
resumed_or_refused undamaged "$work/state" - "$all" must-resume
resumed_or_refused clean_copy "$work/copy" - "j1 j2 j3" must-resume

restore
rm state/journal.sqlite-wal
resumed_or_refused wal_deleted "$work/state" "$work/state/journal.sqlite-wal" "$all"
# A refusal leaves the state as it was: the next start refuses too.
if [ "$outcome" = refused ]; then
  resumed_or_refused wal_deleted_again "$work/state" "$work/state/journal.sqlite-wal" "$all"
  [ "$outcome" = refused ] || fail "a second start accepted the journal the first refused"
  # The way on that the refusal names: mark the session closed; every
  # accepted job was checkpointed into journal.sqlite when it was accepted.
  grep -qF "UPDATE meta SET value = 'closed' WHERE key = 'session'" wal_deleted.err ||
    fail "the refusal does not say how to go on from journal.sqlite"
  python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(\"UPDATE meta SET value = 'closed' WHERE key = 'session'\")
db.commit()
db.close()" state/journal.sqlite
  resumed_or_refused wal_deleted_accepted "$work/state" - "$all" must-resume
fi

restore
python3 -c "
import sys
with open(sys.argv[1], 'r+b') as f:
    f.write(bytes(range(7, 7 + 32)))" state/journal.sqlite-wal
resumed_or_refused wal_header "$work/state" "$work/state/journal.sqlite-wal" "$all"

restore
python3 -c "
import os, sys
os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) * 15 // 100)" state/journal.sqlite-wal
resumed_or_refused wal_truncated "$work/state" "$work/state/journal.sqlite-wal" "$all"

restore
: >state/journal.sqlite
resumed_or_refused main_emptied "$work/state" "$work/state/journal.sqlite" "$all"

# A state directory moved between runs: an inline job queued, SIGKILL, the
# directory moved, a restart that proves: the spooled witnesses are found
# under the new place and removed once the job is done.
inline_src=$(dirname "$work")/state_damage-inline
rm -rf "$inline_src"
mkdir -p "$inline_src"
cp "$small"/witness_0.wtns "$small"/witness_1.wtns "$inline_src/"
cat >"$inline_src/jobs.json" <<JSON
{"jobs": [{"id": "carried", "zkey": "$small/circuit.zkey",
  "witnesses": ["witness_0.wtns", "witness_1.wtns"], "out": "$work/out/carried"}]}
JSON
serve before_move --listen 127.0.0.1:0 "${queue_only[@]}" --state "$work/movable"
expect_rc 0 submit_inline "$proofline" submit --connect "127.0.0.1:$serve_port" --no-wait \
  --inline "$inline_src/jobs.json"
rm -rf "$inline_src"
kill -9 "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
[ "$(find movable/spool -name '*.wtns' | wc -l)" -ge 2 ] || fail "no spooled witnesses"
mv movable moved
serve after_move --listen 127.0.0.1:0 "${common[@]}" --state "$work/moved"
expect_rc 0 await_carried "$proofline" await --connect "127.0.0.1:$serve_port" carried
check_done out/carried carried 2
verify "$small/verification_key.json" out/carried
left=$(find moved/spool -name '*.wtns')
[ -z "$left" ] || fail "the recovered job's spooled witnesses were not removed: $left"
kill "$serve_pid"
wait "$serve_pid" 2>/dev/null || true
echo "PASS: net state_damage"
