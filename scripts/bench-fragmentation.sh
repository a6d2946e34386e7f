#!/usr/bin/env bash
# The backlog benchmark with a synthesis that allocates like a real circuit
# (issue 18): at each domain size in SIZES, one backlog proved with
# `--synthesis-model lc` (and lc-keep at 2^22; zk/groth16/synthesis_model.hpp) by
#   proofline          `proofline run` (actors, per-actor jemalloc arenas)
#   baseline           proofline-baseline (one tracker lock, glibc malloc,
#                      malloc_trim(0) under the lock after every partition)
#   baseline-notrim    the same without the trim
# then the cost of malloc_trim(0) against the size of a fragmented glibc heap
# (proofline-trim-baseline), and from that curve the heap at which the
# baseline's GPU would fall below 90% busy.
#
#   scripts/bench-fragmentation.sh run CARRY_DIR
#       (GPU host) CARRY_DIR holds bin/ (proofline, proofline-baseline,
#       proofline-trim-baseline) and lib/, as scripts/gpu-bundle.sh unpacks
#       them. Inputs are generated here with `proofline setup --dev`. Leaves
#       in $OUT (default ./bench-fragmentation-out): summary.txt (the final
#       table) and bench-fragmentation.tar.gz (reports, traces, logs, the
#       trim curve, the first job's proofs and verification key per size).
#
# The whole sequence (at most TIME_BUDGET, 9 minutes, on one H200 with 16 cores):
#   cmake -S . -B build-gpu && cmake --build build-gpu -j2 --target proofline proofline-baseline proofline-trim-baseline
#   scripts/gpu-bundle.sh pack build-gpu
#   device tool, carry [".carry/gpu"]:
#     d=$(scripts/gpu-bundle.sh unpack .carry/gpu) && scripts/bench-fragmentation.sh run $d
#
# Environment:
#   SIZES="24 22"             domain sizes (log2), each with its own key (the largest
#                             first, so that a short time budget drops lc-keep first)
#   TIME_BUDGET=540           seconds for the whole script: an engine or trim-curve step
#                             that would start past it is skipped (noted in the summary),
#                             and each engine's timeout ends at it
#   MODELS_22="lc lc-keep"    synthesis models run at 2^22 (MODELS_24="lc"; others: lc)
#   BACKLOG_22="2 14 4 14"    JOBS PARTS WITNESSES SYNTHESIZERS at 2^22: JOBS jobs of
#   BACKLOG_24="2 5 2 10"     PARTS partitions, cycling over WITNESSES witnesses
#                             (synthesizers: RAM bounds them at 2^24; each lc
#                             synthesis holds ~2.3 GiB of vectors at 2^24 besides
#                             its partition's 2 GiB)
#   BACKEND=cuda LANES=2 FINALIZERS=2 CURVE=bn254
#   ENGINES="proofline baseline baseline-notrim"
#   TRIM_SIZES="1G 4G 16G"    heaps for the trim curve (64 KiB blocks, 1 in 16 kept)
#   TRIM_LC_SIZES="1G 4G"     176-byte blocks (an lc term vector of 4), 1 in TRIM_LC_KEEP=64
#                             kept (1 in 16 leaves no whole free page to return)
#   ENGINE_TIMEOUT=150        seconds each engine may run
#   WORK                      scratch (default /tmp/proofline-bench-fragmentation)
# Smoke test here (CPU, small):
#   BACKEND=cpu SIZES=12 BACKLOG_12="2 2 2 2" TRIM_SIZES=64M TRIM_LC_SIZES=16M \
#     OUT=/tmp/bf-out scripts/bench-fragmentation.sh run build-dir-with-bin
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"
mode=${1:-}
shift || true

run() {
  local carry=${1:?usage: bench-fragmentation.sh run CARRY_DIR}
  carry=$(cd "$carry" && pwd)
  local out=${OUT:-$PWD/bench-fragmentation-out}
  local work=${WORK:-/tmp/proofline-bench-fragmentation}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  [ -d "$carry/lib" ] && export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local proofline=${PROOFLINE:-$carry/bin/proofline}
  local baseline=${BASELINE:-$carry/bin/proofline-baseline}
  local trimmer=${TRIM_BASELINE:-$carry/bin/proofline-trim-baseline}
  for b in "$proofline" "$baseline" "$trimmer"; do
    [ -x "$b" ] || { echo "bench-fragmentation.sh: $b: not an executable" >&2; exit 2; }
  done
  local backend=${BACKEND:-cuda} lanes=${LANES:-2} finalizers=${FINALIZERS:-2} curve=${CURVE:-bn254}
  local engines=${ENGINES:-proofline baseline baseline-notrim}
  local sizes=${SIZES:-24 22}
  local deadline=$((SECONDS + ${TIME_BUDGET:-540}))
  local t_start=$SECONDS
  local groups=()

  rm -rf "$work"
  mkdir -p "$work/logs" "$work/reports" "$work/bundle"
  local summary=$work/summary.txt
  : > "$summary"
  note() { echo "$*" | tee -a "$summary"; }
  local rc=0

  bench_header bench-fragmentation "$carry" "$summary" "glibc $(ldd --version 2>&1 | head -1 | awk '{print $NF}')"

  for log_n in $sizes; do
    local var=BACKLOG_$log_n
    local defaults
    case "$log_n" in
      24) defaults="2 5 2 10" ;;
      22) defaults="2 14 4 14" ;;
      *) defaults="2 4 2 4" ;;
    esac
    local jobs parts witnesses synth
    read -r jobs parts witnesses synth <<< "${!var:-$defaults}"
    local dir=$work/n$log_n
    mkdir -p "$dir"
    local constraints=$(( (1 << log_n) - 2 ))  # + 1 public + 1 = exactly 2^log_n rows
    note ""
    note "== 2^$log_n: $jobs jobs x $parts partitions ($witnesses witnesses reused), $curve," \
         "$synth synthesizers, $finalizers finalizers, $lanes lanes, --backend $backend"
    if [ $((deadline - SECONDS)) -lt 90 ]; then note "2^$log_n: skipped (time budget)"; rc=1; continue; fi
    local t0=$SECONDS
    timeout $((deadline - SECONDS)) "$proofline" setup --dev --curve "$curve" --constraints "$constraints" --public 1 \
      --witnesses "$witnesses" --seed 18 --out "$dir/inputs" --log-level warn > "$work/logs/setup-$log_n.log" 2>&1 ||
      { tail -20 "$work/logs/setup-$log_n.log"; note "setup at 2^$log_n failed"; rc=1; continue; }
    note "setup: $((SECONDS - t0)) s ($(du -h "$dir/inputs/circuit.zkey" | cut -f1) zkey)"
    python3 - "$dir/jobs.json" "$jobs" "$parts" "$witnesses" <<'EOF'
import json, sys
path, jobs, parts, witnesses = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
spec = {"jobs": [{"id": f"j{k}", "zkey": "inputs/circuit.zkey",
                  "witnesses": [f"inputs/witness_{(k + i) % witnesses}.wtns" for i in range(parts)],
                  "out": f"j{k}"} for k in range(jobs)]}
json.dump(spec, open(path, "w"), indent=1)
EOF
    local mvar=MODELS_$log_n model
    local models=${!mvar:-$([ "$log_n" = 22 ] && echo "lc lc-keep" || echo lc)}
    for model in $models; do
      groups+=("$log_n:$model")
      local common=(--backend "$backend" --synthesizers "$synth" --finalizers "$finalizers" --synthesis-model "$model")
      for e in $engines; do
        local name=$e-$log_n-$model args
        case "$e" in
          proofline) args=("$proofline" run "$dir/jobs.json" "${common[@]}" --gpu-lanes "$lanes"
                           --trace "$work/reports/$name.trace.json") ;;
          baseline) args=("$baseline" "$dir/jobs.json" "${common[@]}" --lanes "$lanes" --heap-stats) ;;
          baseline-notrim) args=("$baseline" "$dir/jobs.json" "${common[@]}" --lanes "$lanes" --heap-stats --no-trim) ;;
          *) note "unknown engine $e"; continue ;;
        esac
        local left=$((deadline - SECONDS))
        if [ "$left" -lt 20 ]; then note "$name: skipped (time budget)"; rc=1; continue; fi
        [ "$left" -gt "${ENGINE_TIMEOUT:-150}" ] && left=${ENGINE_TIMEOUT:-150}
        sync
        local t=$SECONDS
        echo "+ ${args[*]}" > "$work/logs/$name.log"
        timeout "$left" "${args[@]}" --out-root "$dir/out/$e" --report "$work/reports/$name.json" \
          >> "$work/logs/$name.log" 2>&1
        local r=$?
        note "$name: exit $r in $((SECONDS - t)) s"
        if [ $r -ne 0 ] || [ ! -s "$work/reports/$name.json" ]; then
          tail -15 "$work/logs/$name.log" | sed 's/^/  | /' | tee -a "$summary"
          rc=1
        fi
        mkdir -p "$work/bundle/proofs/$name"
        cp -r "$dir/out/$e/j0" "$work/bundle/proofs/$name/" 2>/dev/null
        rm -rf "$dir/out/$e"
      done
    done
    cp "$dir/inputs/verification_key.json" "$work/bundle/verification_key-$log_n.json" 2>/dev/null
    rm -rf "$dir/inputs"  # the 2^24 key is 8 GiB; free the page cache's copy
  done

  # The trim curve: malloc_trim(0) on a fragmented heap of growing size.
  note ""
  note "== malloc_trim(0) against heap size (proofline-trim-baseline, one arena)"
  : > "$work/reports/trim-curve.jsonl"
  for b in ${TRIM_SIZES-1G 4G 16G}; do
    [ $((deadline - SECONDS)) -lt 30 ] && { note "trim curve at $b: skipped (time budget)"; continue; }
    "$trimmer" --bytes "$b" --chunk 64K --keep-every 16 >> "$work/reports/trim-curve.jsonl" 2>> "$work/logs/trim.log" ||
      note "trim curve at $b (64K) failed"
  done
  for b in ${TRIM_LC_SIZES-1G 4G}; do
    [ $((deadline - SECONDS)) -lt 30 ] && { note "trim curve at $b: skipped (time budget)"; continue; }
    "$trimmer" --bytes "$b" --chunk 176 --keep-every "${TRIM_LC_KEEP:-64}" >> "$work/reports/trim-curve.jsonl" 2>> "$work/logs/trim.log" ||
      note "trim curve at $b (176 B) failed"
  done

  python3 - "$work/reports" "$work/logs" "${groups[*]}" "$engines" <<'EOF' | tee -a "$summary"
import glob, json, os, re, sys
reports, logs, groups, engines = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()

def union(iv):
    iv = sorted(iv); total = 0.0; cur = None
    for s, e in iv:
        if cur and s <= cur[1]: cur[1] = max(cur[1], e)
        else:
            if cur: total += cur[1] - cur[0]
            cur = [s, e]
    if cur: total += cur[1] - cur[0]
    return total

def is_transfer(name):
    return name.startswith(("upload", "download", "h2d", "d2h"))

def figures(parts, ready=None):
    """parts: list of lists of (name, start_ms, end_ms); ready: per part, when
    its synthesis ended (ms) or None. Busy (all spans, kernels only) over the
    window of all spans, the hand-off gaps, and the GPU's idle time while a
    synthesized partition was waiting for it (the engine's own doing, not
    synthesis falling behind)."""
    spans = [s for p in parts for s in p]
    if not spans: return None
    lo = min(s[1] for s in spans); hi = max(s[2] for s in spans)
    w = hi - lo
    allb = union([(s[1], s[2]) for s in spans]) / w if w > 0 else 0
    comp = union([(s[1], s[2]) for s in spans if not is_transfer(s[0])]) / w if w > 0 else 0
    kern = [(min(s[1] for s in p if not is_transfer(s[0])), max(s[2] for s in p if not is_transfer(s[0])))
            for p in parts if any(not is_transfer(s[0]) for s in p)]
    kern.sort()
    gaps = sorted(max(0.0, kern[i + 1][0] - kern[i][1]) for i in range(len(kern) - 1))
    pct = lambda q: gaps[min(len(gaps) - 1, max(0, -(-len(gaps) * q // 100) - 1))] if gaps else 0.0
    hist = [0] * 5  # <1 ms, 1-10, 10-100, 100-1000, >=1000
    for g in gaps:
        hist[0 if g < 1 else 1 if g < 10 else 2 if g < 100 else 3 if g < 1000 else 4] += 1
    per_part = sum(union([(s[1], s[2]) for s in p if not is_transfer(s[0])]) for p in parts) / len(parts)
    # Idle intervals of the device (no span of any partition), and the part
    # of each after the earliest not-yet-started partition was ready.
    iv = sorted((s[1], s[2]) for s in spans); idle = []; end = iv[0][1]
    for a, b in iv[1:]:
        if a > end: idle.append((end, a))
        end = max(end, b)
    starts = [min(s[1] for s in p) for p in parts]
    waiting = 0.0; waits = []
    if ready and all(r is not None for r in ready):
        for a, b in idle:
            cand = [r for st, r in zip(starts, ready) if st >= b and r < b]
            if cand:
                t = b - max(a, min(cand)); waiting += t; waits.append(t)
    busy_ms = allb * w
    ready_busy = busy_ms / (busy_ms + waiting) if ready else None
    return dict(window=w, all=allb, compute=comp, p50=pct(50), p99=pct(99), max=gaps[-1] if gaps else 0,
                hist=hist, per_part_ms=per_part, idle_ready_ms=waiting if ready else None,
                idle_ready_max=max(waits) if waits else 0.0, ready_busy=ready_busy)

def trace_parts(path):
    """Device spans and synthesis end per partition from a proofline trace."""
    try: t = json.load(open(path))
    except (OSError, ValueError): return [], []
    ev = t["traceEvents"] if isinstance(t, dict) else t
    parts, ready = {}, {}
    for e in ev:
        if e.get("ph") != "X" or "args" not in e: continue
        k = (e["args"].get("job"), e["args"].get("partition"))
        if e.get("cat") in ("device", "transfer"):
            parts.setdefault(k, []).append((e["name"], e["ts"] / 1000, (e["ts"] + e["dur"]) / 1000))
        elif e.get("cat") == "synthesize":
            ready[k] = max(ready.get(k, 0.0), (e["ts"] + e["dur"]) / 1000)
    keys = list(parts)
    return [parts[k] for k in keys], [ready.get(k) for k in keys]

def log_line(name, prefix):
    try:
        for line in open(os.path.join(logs, name + ".log")):
            if line.startswith(prefix): return line.strip()
    except OSError: pass
    return None

G = 2 ** 30
rows = {}
per_part_ms = {}
for grp in groups:
    n, model = grp.split(":")
    for e in engines:
        name = f"{e}-{n}-{model}"
        try: r = json.load(open(os.path.join(reports, name + ".json")))
        except (OSError, ValueError): rows[name] = None; continue
        if e == "proofline":
            f = figures(*trace_parts(os.path.join(reports, name + ".trace.json")))
        else:
            ps = [p for p in r.get("partitions", []) if p.get("spans_ms")]
            f = figures([[tuple(s) for s in p["spans_ms"]] for p in ps],
                        [p["ready_ms"] if p.get("ready_ms", -1) >= 0 else None for p in ps])
        g = r["gpus"][0] if r.get("gpus") else {}
        pu = r.get("purge") or {}
        m = r.get("memory") or {}
        row = {"proofs": f"{r.get('proofs', '-')}", "wall s": f"{r['wall_s']:.2f}",
               "busy (report)": f"{100 * g.get('gpu_busy_fraction', 0):.2f}%"}
        if f:
            row.update({"busy, all spans": f"{100 * f['all']:.2f}%", "busy, kernels only": f"{100 * f['compute']:.2f}%",
                        "gap p50 ms": f"{f['p50']:.3f}", "gap p99 ms": f"{f['p99']:.3f}", "gap max ms": f"{f['max']:.1f}",
                        "gaps <1/<10/<100/<1000/>=1000 ms": "/".join(map(str, f["hist"])),
                        "GPU ms per partition": f"{f['per_part_ms']:.0f}"})
            if f["ready_busy"] is not None:
                row["busy while work was ready"] = f"{100 * f['ready_busy']:.2f}%"
                row["idle with work ready ms (max)"] = f"{f['idle_ready_ms']:.0f} ({f['idle_ready_max']:.0f})"
            if e == "proofline": per_part_ms[n] = f["per_part_ms"]
        threads = pu.get("threads") or []
        row["trims/purges"] = f"{pu.get('count', 0)} in {pu.get('total_ms', 0):.0f} ms (max {pu.get('max_ms', 0):.0f})"
        row["ran on"] = ", ".join(sorted(set(threads if isinstance(threads, list) else [str(threads)]))) or "-"
        if e != "proofline":
            row["trim returned GiB"] = f"{pu.get('returned_bytes', 0) / G:.2f}"
            row["GPU-worker lock wait ms"] = f"{r['tracker_wait_ms']['gpu_workers']['total_ms']:.0f}"
        row["peak RSS GiB"] = f"{m.get('peak_rss_bytes', 0) / G:.1f}"
        h = m.get("glibc_heap_peak")
        if h:
            row["glibc arenas: n, GiB, free GiB (%)"] = f"{h['arenas']}, {h['arena_bytes'] / G:.2f}, {h['free_bytes'] / G:.2f} ({100 * h['fragmentation']:.0f}%)"
            row["glibc mapped whole GiB"] = f"{h['mmap_bytes'] / G:.2f}"
            row["malloc_info ms (all samples)"] = f"{m.get('glibc_heap_read_ms', 0):.0f}"
        if e == "proofline":
            row["purged GiB"] = f"{pu.get('bytes', 0) / G:.2f}"
            jl = log_line(name, "jemalloc at the end:")
            if jl:
                mm = re.search(r"active ([\d.]+) GiB, dirty ([\d.]+) GiB", jl)
                if mm: row["jemalloc end active/dirty GiB"] = f"{mm.group(1)}/{mm.group(2)}"
        rows[name] = row

for grp in groups:
    n, model = grp.split(":")
    names = [f"{e}-{n}-{model}" for e in engines]
    labels = []
    for nm in names:
        for k in (rows.get(nm) or {}): 
            if k not in labels: labels.append(k)
    print(f"\n2^{n}, --synthesis-model {model}")
    width = 24
    print(f"{'':<34}" + "".join(f"{e:>{width}}" for e in engines))
    for k in labels:
        print(f"{k:<34}" + "".join(f"{(rows.get(nm) or {}).get(k, 'no report' if rows.get(nm) is None else '-'):>{width}}" for nm in names))
    b, p = rows.get(f"baseline-{n}-{model}"), rows.get(f"proofline-{n}-{model}")
    if b and p:
        try:
            ratio_busy = float(p["busy, all spans"][:-1]) / float(b["busy, all spans"][:-1])
            ratio_wall = float(p["wall s"]) / float(b["wall s"])
            print(f"busy(proofline)/busy(baseline) = {ratio_busy:.2f} (target >= 1.8 if the failure reproduces); "
                  f"wall(proofline)/wall(baseline) = {ratio_wall:.2f} (target <= 0.6)")
        except (KeyError, ValueError, ZeroDivisionError): pass

# Trim curve and the heap at which the baseline's GPU would fall below 90%.
pts = []
try:
    for line in open(os.path.join(reports, "trim-curve.jsonl")):
        j = json.loads(line); pts.append(j)
except OSError: pass
if pts:
    print("\nmalloc_trim(0) on a fragmented heap (1 block in `keep` kept; ms per GiB returned)")
    print(f"{'heap GiB':>9} {'block':>7} {'keep':>5} {'trim ms':>9} {'returned GiB':>13} {'ms per GiB':>11}")
    for j in pts:
        ret = max(0, j["rss_freed"] - j["rss_trimmed"]) / G
        per = f"{j['trim_ms'] / ret:.1f}" if ret >= 1 / 1024 else "-"
        print(f"{j['bytes'] / G:>9.2f} {j['chunk']:>7} {j['keep_every']:>5} {j['trim_ms']:>9.1f} {ret:>13.2f} {per:>11}")
    big = [j for j in pts if j["chunk"] >= 65536] or pts
    num = sum(j["trim_ms"] * (j["bytes"] / G) for j in big); den = sum((j["bytes"] / G) ** 2 for j in big)
    k = num / den if den else 0
    print(f"least-squares slope through 0 (64 KiB blocks): {k:.1f} ms of malloc_trim(0) per GiB of fragmented heap")
    for n, t in per_part_ms.items():
        if k > 0:
            # busy = t / (t + trim) < 0.9  <=>  trim > t / 9, trim = k * heap
            print(f"2^{n}: {t:.0f} ms of kernels a partition -> a trim under the lock after every partition "
                  f"drops the GPU below 90% busy from a heap of {t / 9 / k:.1f} GiB (below 50% from {t / k:.1f} GiB)")
EOF

  mkdir -p "$work/bundle"
  cp -r "$work/reports" "$work/logs" "$work/bundle/"
  for d in "$work"/n*; do cp "$d/jobs.json" "$work/bundle/jobs-$(basename "$d").json" 2>/dev/null; done
  note ""
  note "== total $((SECONDS - t_start)) s; results: $out/bench-fragmentation.tar.gz, $out/summary.txt (exit $rc)"
  cp "$summary" "$work/bundle/"
  (cd "$work/bundle" && tar czf "$out/bench-fragmentation.tar.gz" .)
  cp "$summary" "$out/summary.txt"
  exit $rc
}

case "$mode" in
  run) run "$@" ;;
  *)
    sed -n '2,44p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
