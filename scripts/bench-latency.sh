#!/usr/bin/env bash
# The latency of one proof with a warm key, and where it goes (issue 33,
# item 3): through `serve` (a job of one partition submitted by `proofline
# submit`, one at a time) and through the library (one call at a time on one
# handle), for each size of LOGS.
#
#   scripts/bench-latency.sh gpu CARRY_DIR
#       (GPU host) CARRY_DIR from `scripts/gpu-bundle.sh unpack`; backend cuda.
#   scripts/bench-latency.sh cpu
#       (here) the binaries of build/, backend cpu, for checking the script.
#
# Per size: a synthetic BN254 key (`proofline setup --dev`), `serve --preload`
# of it (debug log), WARMUP jobs then RUNS timed ones. For each job the
# figures come from the server's own records of that job: result.json's
# spans (accepted -> proof.json written; memory, synthesize, prove,
# finalize) and verify_ms, and the SYNTH_TIMING / GPU_TIMING debug lines of
# the same partition (witness read, a, b, c, upload, device steps,
# download). The client's wall time (process start and connection
# included) is reported beside them. Medians; every proof checked by the
# server (self-check) and brought back under $OUT for snarkjs.
#
# Environment: LOGS="20 22" RUNS=10 WARMUP=2 WORK=/tmp/pl-bench-latency
#   OUT=<dir for bench-latency.tar.gz and summary.txt, default ./bench-latency-out>
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
shift || true
die() { echo "bench-latency.sh: $*" >&2; exit 1; }

case "$mode" in
  gpu)
    carry=${1:?usage: bench-latency.sh gpu CARRY_DIR}
    pl=$carry/bin/proofline bench=$carry/bin/proofline-library-bench lib=$carry/lib/libproofline.so
    backend=cuda
    export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    ;;
  cpu)
    pl=$root/build/proofline bench=$root/build/proofline-library-bench lib=$root/build/lib/libproofline.so
    backend=cpu
    ;;
  *) sed -n '2,24p' "$0"; exit 2 ;;
esac
for f in "$pl" "$bench" "$lib"; do [ -e "$f" ] || die "$f not found"; done

logs=${LOGS:-20 22} runs=${RUNS:-10} warmup=${WARMUP:-2}
work=${WORK:-/tmp/pl-bench-latency} out=${OUT:-$PWD/bench-latency-out}
mkdir -p "$work" "$out"
log=$out/bench-latency.log
: > "$log"
serve_pid=
cleanup() { [ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true; }
trap cleanup EXIT

for n in $logs; do
  d=$work/k$n
  if [ ! -f "$d/witness_0.wtns" ]; then
    "$pl" setup --dev --curve bn254 --constraints $(((1 << n) - 2)) --witnesses 1 --seed "$n" \
      --out "$d" --force --backend "$backend" --log-level warn >> "$log" 2>&1
  fi
  rm -rf "$d/jobs" && mkdir -p "$d/jobs"
  total=$((warmup + runs))
  for ((i = 0; i < total; ++i)); do
    printf '{"jobs": [{"id": "lat%s_%d", "zkey": "%s", "witness": "%s", "out": "%s"}]}\n' \
      "$n" "$i" "$d/circuit.zkey" "$d/witness_0.wtns" "$d/jobs/out$i" > "$d/jobs/job$i.json"
  done
  slog=$out/serve$n.log
  (cd "$d" && exec "$pl" serve --insecure --listen 127.0.0.1:0 --backend "$backend" \
     --allow-root "$d" --preload "$d/circuit.zkey" --log-level debug) > "$slog" 2>&1 &
  serve_pid=$!
  port=
  for _ in $(seq 1 600); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$slog" | head -1 | awk '{print $3}' || true)
    # ready once the preloaded key is prepared on the backend
    if [ -n "$port" ] && grep -q "key .*circuit.zkey: bn254" "$slog"; then break; fi
    sleep 0.1
  done
  [ -n "$port" ] || die "serve did not start (see $slog)"
  sleep 1
  : > "$out/client$n.txt"
  for ((i = 0; i < total; ++i)); do
    t0=$(date +%s%N)
    "$pl" submit --insecure --connect "$port" "$d/jobs/job$i.json" >> "$log" 2>&1 || die "job $i failed (see $log)"
    t1=$(date +%s%N)
    echo "$i $(((t1 - t0) / 1000))" >> "$out/client$n.txt"
  done
  kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
  # the library: one call at a time on one handle, same key and witness
  PROOFLINE_OPTIONS="{\"backend\": \"$backend\", \"log\": \"stderr\", \"log-level\": \"debug\"}" \
    "$bench" --library "$lib" --zkey "$d/circuit.zkey" --witness "$d/witness_0.wtns" --threads 1 \
    --proofs "$runs" --warmup "$warmup" --out "$d/jobs" > "$out/lib$n.json" 2> "$out/lib$n.log"
done

LOGS="$logs" WARMUP=$warmup WORK=$work python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, re, statistics, sys
out = sys.argv[1]
work, warm = os.environ["WORK"], int(os.environ["WARMUP"])
def med(v): return statistics.median(v) if v else float("nan")
def fields(line):
    return {k: float(v) for k, v in re.findall(r"(\w+)_us=([-0-9.]+)", line)}
print("one proof with a warm key, medians in ms (server's own spans and debug lines)")
for n in os.environ["LOGS"].split():
    d = os.path.join(work, f"k{n}")
    client = {int(a): int(b) / 1000 for a, b in (l.split() for l in open(os.path.join(out, f"client{n}.txt")))}
    lines = open(os.path.join(out, f"serve{n}.log")).read().splitlines()
    rows = []
    for i in sorted(client):
        if i < warm: continue
        r = json.load(open(os.path.join(d, "jobs", f"out{i}", "result.json")))
        p = r["partitions"][0]; s = p["spans_ms"]; t = r["spans_ms"]["total"]
        job = f"lat{n}_{i}"
        syn = next((fields(l) for l in lines if "SYNTH_TIMING" in l and f"job={job} " in l), {})
        gpu = next((fields(l) for l in lines if "GPU_TIMING" in l and f"job={job} " in l), {})
        dev = {k: v for k, v in gpu.items() if k not in ("prove", "upload", "download")}
        rows.append({
            "client": client[i], "total": t[1] - t[0],
            "wait for memory": s["memory"][1] - t[0],
            "witness read": syn.get("read_witness", -1000) / 1000, "a, b, c": syn.get("abc", -1000) / 1000,
            "synthesize": s["synthesize"][1] - s["synthesize"][0],
            "to a GPU worker": s["prove"][0] - s["synthesize"][1],
            "upload": gpu.get("upload", 0) / 1000, "device (NTTs, MSMs)": sum(dev.values()) / 1000,
            "download": gpu.get("download", 0) / 1000, "prove": s["prove"][1] - s["prove"][0],
            "self-check": p.get("verify_ms") or 0,
            "finalize (check, blinding, write)": s["finalize"][1] - s["finalize"][0],
        })
    total = med([r["total"] for r in rows])
    print(f"\n2^{n} through serve ({len(rows)} jobs): accepted -> proof.json written {total:.1f} ms; "
          f"client wall {med([r['client'] for r in rows]):.1f} ms")
    for k in rows[0]:
        if k in ("client", "total"): continue
        v = med([r[k] for r in rows])
        print(f"  {k:36s} {v:9.2f} ms  {100 * v / total:5.1f}%")
    lib = json.load(open(os.path.join(out, f"lib{n}.json")))
    llines = open(os.path.join(out, f"lib{n}.log")).read().splitlines()
    ls = [fields(l) for l in llines if "SYNTH_TIMING" in l][warm:]
    lg = [fields(l) for l in llines if "GPU_TIMING" in l][warm:]
    print(f"2^{n} through the library ({len(ls)} calls): call {lib['latency_ms']['median']:.1f} ms "
          f"(p90 {lib['latency_ms']['p90']:.1f}); synthesis {med([x.get('total', 0) for x in ls]) / 1000:.1f} "
          f"(witness {med([x.get('read_witness', 0) for x in ls]) / 1000:.1f}, a, b, c {med([x.get('abc', 0) for x in ls]) / 1000:.1f}), "
          f"device {med([x.get('prove', 0) for x in lg]) / 1000:.1f} (upload {med([x.get('upload', 0) for x in lg]) / 1000:.1f})")
PY
tar -C "$work" -czf "$out/bench-latency.tar.gz" $(cd "$work" && for n in $logs; do echo "k$n/verification_key.json k$n/jobs"; done) \
  -C "$out" summary.txt $(cd "$out" && ls serve*.log client*.txt lib*.json lib*.log bench-latency.log)
ls -l "$out/bench-latency.tar.gz"
