#!/usr/bin/env bash
# proofline-baseline end to end on the committed BN254 fixtures, CPU backend:
#   1. two jobs (4 partitions + 1): exit 0, every proof verifies with snarkjs,
#      the report has the run report's keys with values that match the run;
#   2. the same with --pinned-pool: proofs verify, the pool is reported;
#   3. a job with a broken witness fails alone (exit 1, the other job's
#      proofs are written and verify);
#   4. the lc synthesis model with --heap-stats: proofs verify, malloc_info's
#      totals are in the report;
#   5. the binary does not define jemalloc's API (glibc malloc).
#
#   baseline_smoke.sh PROOFLINE_BASELINE FIXTURES_DIR REPO_ROOT WORK_DIR
set -euo pipefail

[ "$#" -eq 4 ] || { echo "usage: $0 PROOFLINE_BASELINE FIXTURES_DIR REPO_ROOT WORK_DIR" >&2; exit 2; }
baseline=$1 fixtures=$2 repo=$3 work=$4
src=$fixtures/bn254/small

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ -x "$baseline" ] || fail "$baseline: not an executable"
[ -f "$src/circuit.zkey" ] || fail "$src: no fixtures (run scripts/make-fixtures.sh)"
case "$work" in */baseline_smoke) ;; *) fail "refusing to empty $work" ;; esac
rm -rf "$work"
mkdir -p "$work/in"
cd "$work"
cp "$src/circuit.zkey" "$src"/witness_*.wtns in/

cat > in/jobs.json <<'JSON'
{"jobs": [
  {"id": "multi", "zkey": "circuit.zkey", "out": "out/multi",
   "witnesses": ["witness_0.wtns", "witness_1.wtns", "witness_2.wtns", "witness_3.wtns"]},
  {"id": "single", "zkey": "circuit.zkey", "witness": "witness_2.wtns", "out": "out/single"}
]}
JSON

# run LABEL EXPECTED_STATUS ARGS...: proofline-baseline, output kept in LABEL.log.
run() {
  local label=$1 want=$2 rc
  shift 2
  echo "+ proofline-baseline $*"
  set +e
  timeout 50 "$baseline" "$@" > "$label.log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    sed 's/^/  | /' "$label.log" >&2
    fail "proofline-baseline $* exited $rc, expected $want"
  fi
}

verify() {
  "$repo/scripts/verify-proofs.sh" "$src/verification_key.json" "$@" || fail "snarkjs rejected a proof under $*"
}

# check_report FILE PROOFS FAILED POOL: the run report's keys and their meaning.
check_report() {
  python3 - "$@" <<'PY' || fail "report $1 (see above)"
import json, sys
path, proofs, failed, pool = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "pool"
r = json.load(open(path))
problems = []
def want(cond, what):
    if not cond:
        problems.append(what)
for key in ("proofs", "wall_s", "proofs_per_s", "gpus", "memory", "purge"):
    want(key in r, f"no key {key!r}")
want(r.get("engine") == "baseline", "engine is not 'baseline'")
want(r.get("allocator") == "glibc malloc", f"allocator {r.get('allocator')!r}, expected glibc malloc")
want(r["proofs"] == proofs, f"proofs {r['proofs']}, expected {proofs}")
want(r["failed"] == failed, f"failed {r['failed']}, expected {failed}")
want(r["wall_s"] > 0, "wall_s is not positive")
want(abs(r["proofs_per_s"] - r["proofs"] / r["wall_s"]) < 1e-9 * r["proofs_per_s"] + 1e-9,
     "proofs_per_s is not proofs / wall_s")
want(len(r["gpus"]) == 1, f"{len(r['gpus'])} device entries, expected 1")
g = r["gpus"][0]
for key in ("device", "name", "gpu_busy_fraction", "handoff_gap_ms"):
    want(key in g, f"gpus[0] has no {key!r}")
want(g["device"] == 0 and g["kind"] == "cpu", "gpus[0] is not device 0 on the CPU")
want(0 < g["gpu_busy_fraction"] <= 1, f"gpu_busy_fraction {g['gpu_busy_fraction']} not in (0, 1]")
want(g["partitions"] == proofs, f"gpus[0].partitions {g['partitions']}, expected {proofs}")
gaps = g["handoff_gap_ms"]
for key in ("p50", "p99", "max"):
    want(key in gaps and gaps[key] >= 0, f"handoff_gap_ms.{key} missing or negative")
want(gaps["p50"] <= gaps["p99"] <= gaps["max"], "gap percentiles out of order")
want(gaps["count"] == g["partitions"] - 1, "not one gap per consecutive pair of partitions")
# Busy time recomputed from the partitions' spans: the union over the span window.
spans = sorted((s[1], s[2]) for p in r["partitions"] for s in p["spans_ms"])
busy, cur = 0.0, None
for s, e in spans:
    if cur and s <= cur[1]:
        cur[1] = max(cur[1], e)
    else:
        if cur: busy += cur[1] - cur[0]
        cur = [s, e]
if cur: busy += cur[1] - cur[0]
window = max(e for _, e in spans) - min(s for s, _ in spans)
want(abs(busy / window - g["gpu_busy_fraction"]) < 0.01,
     f"gpu_busy_fraction {g['gpu_busy_fraction']} but the spans give {busy / window:.4f}")
want(r["purge"]["count"] == proofs, f"{r['purge']['count']} trims, expected one per proof ({proofs})")
want(r["memory"]["peak_rss_bytes"] > 0, "no peak RSS")
want((r["memory"]["pool_bytes"] > 0) == pool, f"pool_bytes {r['memory']['pool_bytes']} with pool={pool}")
want(len(r["errors"]) == failed, f"{len(r['errors'])} errors, expected {failed}")
for p in problems:
    print(f"{path}: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
}

# 1. Heap (glibc) buffers.
run heap 0 in/jobs.json --backend cpu --cpu-threads 2 --report heap.json
grep -q "baseline: 5 proof(s), 0 failed" heap.log || { cat heap.log >&2; fail "heap.log: no summary line"; }
verify in/out/multi in/out/single
for f in in/out/multi/proof_{0,1,2,3}.json in/out/multi/public_{0,1,2,3}.json \
         in/out/single/proof.json in/out/single/public.json; do
  [ -f "$f" ] || fail "$f: not written"
done
cmp -s in/out/multi/public_2.json in/out/single/public.json || fail "public signals of witness_2 differ between jobs"
check_report heap.json 5 0 heap

# 2. Witness and a, b, c in the pool (ordinary pages on the CPU), outputs elsewhere.
run pool 0 in/jobs.json --backend cpu --cpu-threads 2 --pinned-pool --out-root pool-out --report pool.json
verify pool-out/out/multi pool-out/out/single
check_report pool.json 5 0 pool

# 3. A broken witness fails its own job only.
printf 'not a witness' > in/broken.wtns
cat > in/broken.json <<'JSON'
{"jobs": [
  {"id": "good", "zkey": "circuit.zkey", "witnesses": ["witness_0.wtns", "witness_3.wtns"], "out": "b/good"},
  {"id": "bad", "zkey": "circuit.zkey", "witness": "broken.wtns", "out": "b/bad"}
]}
JSON
run broken 1 in/broken.json --backend cpu --cpu-threads 2 --synthesizers 1 --finalizers 1 --report broken.json
verify in/b/good
[ ! -e in/b/bad/proof.json ] || fail "the broken job wrote a proof"
grep -q "broken.wtns" broken.log || { cat broken.log >&2; fail "broken.log does not name broken.wtns"; }
check_report broken.json 2 1 heap

# 4. The lc synthesis model with heap statistics: proofs verify, the report
#    names the model and carries malloc_info's totals.
run lc 0 in/jobs.json --backend cpu --cpu-threads 2 --synthesis-model lc --heap-stats \
  --out-root lc-out --report lc.json
verify lc-out/out/multi lc-out/out/single
check_report lc.json 5 0 heap
python3 - lc.json <<'PY' || fail "lc.json: heap statistics (see above)"
import json, sys
r = json.load(open(sys.argv[1]))
m, problems = r["memory"], []
if r["config"]["synthesis_model"] != "lc": problems.append("config.synthesis_model is not lc")
if m["glibc_heap_samples"] != 5: problems.append(f"{m['glibc_heap_samples']} heap samples, expected 5")
for key in ("glibc_heap_peak", "glibc_heap_end"):
    h = m[key]
    if not h or not h["ok"]: problems.append(f"{key}: malloc_info not read"); continue
    if h["arenas"] < 1 or h["arena_bytes"] <= 0: problems.append(f"{key}: no arena memory")
    if not 0 <= h["free_bytes"] <= h["arena_bytes"]: problems.append(f"{key}: free bytes outside the arenas")
if r["purge"]["returned_bytes"] < 0: problems.append("negative trim returns")
for p in problems: print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
grep -q "glibc heap (peak of the samples)" lc.log || { cat lc.log >&2; fail "lc.log: no heap line"; }

# 5. glibc malloc: jemalloc's API is at most a weak reference, never defined.
if nm -D --defined-only "$baseline" 2>/dev/null | grep -qE " (malloc|free|mallctl|mallocx)$"; then
  fail "$baseline defines jemalloc symbols; it must run on glibc malloc"
fi
echo "baseline smoke: OK"
