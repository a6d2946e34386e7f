#!/usr/bin/env bash
# Soak test of a proving daemon: submits many small jobs over time to one
# `proofline serve`, samples its resident memory, and at the end checks that
# every job finished, every proof verifies and the RSS stayed flat.
#
#   scripts/soak.sh [--proofline BIN] [--minutes M] [--every S] [--batch N]
#                   [--parts P] [--backend cpu|cuda|auto] [--state]
#                   [--work DIR] [--max-growth MIB] [--snarkjs-sample K]
#                   [--fixture DIR] [--backlog J] [--memory-budget SIZE]
#                   [--max-gpu-growth MIB] [--verify-every K]
#                   [--serve-arg ARG]...
#
#   --proofline   the binary (default build/proofline)
#   --minutes     how long to keep submitting (default 2)
#   --every       seconds between submissions (default 1)
#   --batch       jobs per submission (default 4)
#   --parts       partitions per job (default 1), witnesses of the fixture
#   --fixture     a folder with circuit.zkey, witness_*.wtns and
#                 verification_key.json (default the small BN254 fixture;
#                 `proofline setup --dev` writes such a folder)
#   --backlog     keep the daemon saturated instead of pacing it: every
#                 --every seconds, submit batches until at least J jobs are
#                 unfinished (default 0: one batch per --every seconds)
#   --memory-budget  as for serve (default 2G)
#   --max-gpu-growth device memory growth allowed, median of the first
#                 quarter against the last, in MiB (default 64); sampled
#                 with nvidia-smi when it lists the daemon
#   --serve-arg   one more argument for `proofline serve` (repeatable),
#                 e.g. --serve-arg --keep-finished=100
#   --verify-every  check every K-th proof with `proofline verify` (default
#                 1: all; the daemon has already checked each by pairing
#                 before writing it, which result.json records)
#   --backend     as for serve (default cpu)
#   --state       run the daemon with --state WORK/state (the journal's cost)
#   --work        scratch directory (default a new one under /tmp), kept
#   --max-growth  RSS growth allowed from the first to the last quarter of
#                 the run, median against median, in MiB (default 64)
#   --snarkjs-sample  proofs also checked with snarkjs (default 5; every
#                 proof is checked with `proofline verify`, which the test
#                 suite holds to snarkjs's verdicts)
#
# Writes WORK/rss.csv (seconds, RSS MiB, device MiB or empty, jobs
# submitted, jobs done) and a summary line; exit 0 when all jobs are done,
# all proofs verify and both growths are within bounds, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
proofline=$root/build/proofline
minutes=2
every=1
batch=4
parts=1
backend=cpu
use_state=0
work=""
max_growth=64
max_gpu_growth=64
sample=5
fx=$root/tests/fixtures/bn254/small
backlog=0
budget=2G
verify_every=1
serve_args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --proofline) proofline=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --state) use_state=1; shift ;;
    --work) work=$2; shift 2 ;;
    --max-growth) max_growth=$2; shift 2 ;;
    --snarkjs-sample) sample=$2; shift 2 ;;
    --fixture) fx=$(cd "$2" && pwd); shift 2 ;;
    --backlog) backlog=$2; shift 2 ;;
    --memory-budget) budget=$2; shift 2 ;;
    --max-gpu-growth) max_gpu_growth=$2; shift 2 ;;
    --verify-every) verify_every=$2; shift 2 ;;
    --serve-arg) serve_args+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$proofline" ] || { echo "soak.sh: $proofline is not an executable (build first)" >&2; exit 2; }
[ -n "$work" ] || work=$(mktemp -d /tmp/proofline-soak.XXXXXX)
mkdir -p "$work"
work=$(cd "$work" && pwd)
witnesses=$(find "$fx" -maxdepth 1 -name 'witness_*.wtns' | wc -l)
[ -f "$fx/circuit.zkey" ] && [ "$witnesses" -gt 0 ] && [ -f "$fx/verification_key.json" ] ||
  { echo "soak.sh: $fx needs circuit.zkey, witness_*.wtns and verification_key.json" >&2; exit 2; }
export PROOFLINE_TLS_DIR=$work/tls

extra=("${serve_args[@]}")
[ "$use_state" = 1 ] && extra+=(--state "$work/state")
"$proofline" serve --listen 127.0.0.1:0 --allow-root "$work" --allow-root "$fx" \
  --backend "$backend" --memory-budget "$budget" --spool "$work/spool" "${extra[@]}" \
  >"$work/serve.out" 2>"$work/serve.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$work/serve.out")
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "soak.sh: serve did not listen" >&2; exit 1; }
ep=127.0.0.1:$port

rss_mib() { awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$server/status"; }
done_jobs() { find "$work/out" -name result.json 2>/dev/null | wc -l; }
# The daemon's device memory in MiB; empty without nvidia-smi or while it
# holds none.
gpu_mib() {
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
    awk -F', *' -v p="$server" '$1 == p {print $2}'
}
sample_line() { echo "$((SECONDS - start)),$(rss_mib),$(gpu_mib),$1,$(done_jobs)" >>"$work/rss.csv"; }

# One job file per submission: BATCH jobs of PARTS partitions.
job_file() {
  python3 - "$1" "$2" "$batch" "$parts" "$fx" "$work/out" "$witnesses" <<'PY'
import json, sys
path, n, batch, parts, fx, out, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], int(sys.argv[7])
jobs = []
for b in range(batch):
    jid = f"soak-{n}-{b}"
    jobs.append({"id": jid, "zkey": f"{fx}/circuit.zkey",
                 "witnesses": [f"{fx}/witness_{(n + b + i) % w}.wtns" for i in range(parts)],
                 "out": f"{out}/{jid}"})
json.dump({"jobs": jobs}, open(path, "w"))
PY
}

submit_batch() {
  job_file "$work/jobs/$n.json" "$n"
  "$proofline" submit --connect "$ep" --no-wait "$work/jobs/$n.json" >>"$work/submit.log" 2>&1 ||
    { echo "soak.sh: submission $n refused:" >&2; tail -3 "$work/submit.log" >&2; exit 1; }
  n=$((n + 1))
}

echo "seconds,rss_mib,gpu_mib,jobs_submitted,jobs_done" >"$work/rss.csv"
mkdir -p "$work/jobs"
start=$SECONDS
end=$((start + minutes * 60))
n=0
while [ "$SECONDS" -lt "$end" ]; do
  if [ "$backlog" -gt 0 ]; then
    while [ "$((n * batch - $(done_jobs)))" -lt "$backlog" ] && [ "$SECONDS" -lt "$end" ]; do
      submit_batch
      sample_line $((n * batch))
    done
  else
    submit_batch
  fi
  sample_line $((n * batch))
  sleep "$every"
done
submitted=$((n * batch))
# Drain: wait until every job wrote its result (as long again as the run, at most).
deadline=$((SECONDS + minutes * 60 + 60))
while [ "$(done_jobs)" -lt "$submitted" ] && [ "$SECONDS" -lt "$deadline" ]; do
  sample_line "$submitted"
  sleep "$every"
done
sample_line "$submitted"
finished=$(done_jobs)

# Every job done, every proof verified natively, a sample with snarkjs.
bad=0
not_done=$(grep -L '"status": *"done"' $(find "$work/out" -name result.json) 2>/dev/null | wc -l || true)
proofs=0
checked=0
while IFS= read -r proof; do
  proofs=$((proofs + 1))
  [ $(((proofs - 1) % verify_every)) = 0 ] || continue
  checked=$((checked + 1))
  pub=${proof/proof/public}
  if ! "$proofline" verify "$fx/verification_key.json" "$pub" "$proof" >/dev/null 2>&1; then
    echo "soak.sh: $proof does not verify" >&2
    bad=$((bad + 1))
  fi
done < <(find "$work/out" -name 'proof*.json' | sort)
sampled=$(find "$work/out" -mindepth 1 -maxdepth 1 -type d | sort | awk -v k="$sample" 'NR <= k')
if [ -n "$sampled" ]; then
  # shellcheck disable=SC2086
  "$root/scripts/verify-proofs.sh" "$fx/verification_key.json" $sampled >"$work/snarkjs.log" 2>&1 ||
    { cat "$work/snarkjs.log" >&2; bad=$((bad + 1)); }
fi

# RSS and device memory: median of the first quarter of the submitting phase
# against the last (device memory over the samples that have it).
read -r first last peak gfirst glast gpeak < <(python3 - "$work/rss.csv" "$minutes" "$work/unfinished.txt" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
span = int(sys.argv[2]) * 60
sub = [r for r in rows if int(r["seconds"]) < span] or rows
def trend(col):
    vals = [float(r[col]) for r in sub if r[col]]
    if not vals:
        return "- - -"
    q = max(1, len(vals) // 4)
    peak = max(float(r[col]) for r in rows if r[col])
    return f"{statistics.median(vals[:q]):.1f} {statistics.median(vals[-q:]):.1f} {peak:.1f}"
print(trend("rss_mib"), trend("gpu_mib"))
waiting = sorted(int(r["jobs_submitted"]) - int(r["jobs_done"]) for r in sub)
print(waiting[0], waiting[len(waiting) // 2], file=open(sys.argv[3], "w"))
PY
)
growth=$(python3 -c "print(f'{$last - $first:.1f}')")
gpu_text="device memory not sampled"
gpu_growth=0
if [ "$gfirst" != "-" ]; then
  gpu_growth=$(python3 -c "print(f'{$glast - $gfirst:.1f}')")
  gpu_text="device memory first quarter $gfirst MiB, last quarter $glast MiB (growth $gpu_growth MiB, allowed $max_gpu_growth), peak $gpeak MiB"
fi
read -r wait_min wait_median <"$work/unfinished.txt"
summary="soak: $submitted jobs x $parts partition(s) in $minutes min ($finished finished, $not_done not done), $proofs proofs, $checked checked with proofline verify, $bad not verified; RSS first quarter $first MiB, last quarter $last MiB (growth $growth MiB, allowed $max_growth), peak $peak MiB; $gpu_text; unfinished jobs while submitting: min $wait_min, median $wait_median; samples in $work/rss.csv"
echo "$summary" | tee "$work/summary.txt"
ok=1
[ "$finished" = "$submitted" ] && [ "$not_done" = 0 ] || ok=0
[ "$bad" = 0 ] || ok=0
python3 -c "import sys; sys.exit(0 if $growth <= $max_growth else 1)" || ok=0
python3 -c "import sys; sys.exit(0 if $gpu_growth <= $max_gpu_growth else 1)" || ok=0
[ "$ok" = 1 ] && echo "soak: PASS" || { echo "soak: FAIL" >&2; exit 1; }
