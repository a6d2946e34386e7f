#!/usr/bin/env bash
# A cancelled run's records agree: SIGINT (once, or twice 0.3 s apart) at
# many points of a backlog of several jobs, with two finalizers writing
# proofs while the cancel arrives. Each time, the summary's rows, the
# report's job table and every job's result.json give the same status and
# the same done partitions, and the files on disk are exactly the proofs
# result.json lists as done (no partly written or unlisted file). A second
# signal still ends the run, with exit 130, and the summary, the report and
# every result.json written first.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 small small
python3 - <<'PY'
import json
jobs = [{"id": f"j{j}", "zkey": "in/small.zkey",
         "witnesses": [f"in/small_{(j + i) % 3}.wtns" for i in range(3)], "out": f"out/j{j}"}
        for j in range(5)]
json.dump({"jobs": jobs}, open("multi.json", "w"))
PY

# cancel_run LABEL AFTER TWICE: runs the backlog, sends SIGINT once AFTER
# proofs are on disk (and again 0.3 s later when TWICE is 1), and checks
# that the records agree.
cancel_run() {
  local label=$1 after=$2 twice=$3 pid rc waited=0
  rm -rf out r.json
  "$proofline" run multi.json --backend cpu --synthesizers 2 --finalizers 2 --cpu-threads 1 \
    --report r.json >"$label.log" 2>"$label-err.log" &
  pid=$!
  until [ "$(find out -name 'proof_*.json' 2>/dev/null | wc -l)" -ge "$after" ]; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
    waited=$((waited + 1))
    [ "$waited" -lt 6000 ] || { kill -KILL "$pid"; fail "$label: not $after proofs after 60 s"; }
  done
  kill -INT "$pid" 2>/dev/null || true
  if [ "$twice" = 1 ]; then
    sleep 0.3
    kill -INT "$pid" 2>/dev/null || true
  fi
  waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do  # at most 30 s
    sleep 0.05
    waited=$((waited + 1))
  done
  kill -KILL "$pid" 2>/dev/null || true
  set +e
  wait "$pid"
  rc=$?
  set -e
  case "$rc" in
    0 | 130) ;;
    *) sed "s/^/  | /" "$label.log" "$label-err.log" >&2; fail "$label: exited $rc after SIGINT" ;;
  esac
  python3 - "$label" "$rc" <<'PY' || { sed "s/^/  | /" "$label.log" >&2; fail "$label: the records disagree"; }
import json, os, sys
label, rc = sys.argv[1], int(sys.argv[2])
ids = [f"j{j}" for j in range(5)]
# The summary table: "job status partitions time output error".
lines = open(label + ".log").read().splitlines()
head = next(i for i, l in enumerate(lines) if l.split()[:3] == ["job", "status", "partitions"])
summary = {}
for l in lines[head + 1:]:
    if not l.strip():
        break
    f = l.split()
    done, total = map(int, f[2].split("/"))
    summary[f[0]] = (f[1], done, total)
report = {row["id"]: (row["status"], row["partitions"]["done"], row["partitions"]["total"])
          for row in json.load(open("r.json"))["job_table"]}
assert sorted(summary) == ids, ("summary rows", sorted(summary))
assert sorted(report) == ids, ("report rows", sorted(report))
counts = {}
for jid in ids:
    out = os.path.join("out", jid)
    r = json.load(open(os.path.join(out, "result.json")))
    parts = r["partitions"]
    done = [p for p in parts if p["status"] == "done"]
    result = (r["status"], len(done), len(parts))
    assert summary[jid] == result, (jid, "summary", summary[jid], "result.json", result)
    assert report[jid] == result, (jid, "report", report[jid], "result.json", result)
    if rc == 0:
        assert r["status"] == "done", (jid, r["status"])
    assert r["status"] in ("done", "cancelled"), (jid, r["status"])
    listed = {"result.json"}
    for p in parts:
        if p["status"] == "done":
            listed |= {p["proof"], p["public"]}
        else:
            assert p["status"] == "cancelled" and p["proof"] is None, (jid, p)
    left = set(os.listdir(out))
    assert left == listed, (jid, "files on disk but not listed, or listed but missing",
                            sorted(left ^ listed))
    counts[r["status"]] = counts.get(r["status"], 0) + 1
print(f"{label}: exit {rc}; the summary, the report and result.json agree: {counts}")
PY
}

runs=0
for after in 1 2 3 4 5 6 7 8 9 10 11 12; do
  cancel_run "once_$after" "$after" 0
  cancel_run "twice_$after" "$after" 1
  runs=$((runs + 2))
done
verify "$fixtures/bn254/small/verification_key.json" out/j*
echo "ok: $runs cancelled runs, their records agree with each other and the disk"
