#!/usr/bin/env bash
# The benchmark proofline exists for (issue 4, item 7): one backlog of JOBS
# jobs x PARTS partitions on a 2^LOG_N domain, proved on the same machine in
# one invocation by (a) `proofline run` and (b) proofline-baseline, the
# locked baseline under bench/baseline (one mutex-protected job tracker,
# glibc malloc, malloc_trim(0) under the lock after every partition). Prints
# both GPU busy fractions and hand-off gap distributions side by side.
#
#   scripts/bench-utilization.sh pack BUILD_DIR [CARRY_DIR]
#       (here) copy proofline and proofline-baseline from BUILD_DIR (a build
#       with CUDA for the GPU host) with their non-system shared libraries
#       (ldd) and build-info.txt into CARRY_DIR (default
#       .carry/bench-utilization, git-ignored). Refuses a baseline that
#       defines malloc or jemalloc's API.
#   scripts/bench-utilization.sh run [CARRY_DIR]
#       (GPU host, or here at small sizes) generate the inputs with
#       `proofline setup --dev` (nothing large travels), write the job file,
#       run both engines, print the table, and leave in $OUT (default
#       ./bench-utilization-out): summary.txt, the reports and
#       bench-utilization.tar.gz (reports, logs, job file, verification key
#       and the proofs of each engine's first job).
#
# The whole sequence:
#   cmake -S . -B build-gpu && cmake --build build-gpu -j2 --target proofline proofline-baseline
#   scripts/bench-utilization.sh pack build-gpu
#   run(command="scripts/bench-utilization.sh run .carry/bench-utilization", carry=[".carry"])
# Afterwards, here: mkdir -p /tmp/bu && tar xzf <files_at>/bench-utilization.tar.gz -C /tmp/bu &&
#   scripts/verify-proofs.sh /tmp/bu/verification_key.json /tmp/bu/proofs/*/*
#
# Environment (run):
#   LOG_N=20 JOBS=8 PARTS=4   the backlog: JOBS jobs of PARTS partitions, domain 2^LOG_N
#   KEYS=1                    distinct keys (circuits of the same size); job k uses key k mod KEYS
#   BACKEND=cuda              cuda, cpu or auto, for both engines
#   CURVE=bn254               bn254 or bls12_381
#   SYNTHESIZERS              synthesis threads of both engines (default: cores - 2, at least 2)
#   FINALIZERS=2 LANES=2      finalizer threads; GPU-worker lanes per GPU
#   GPUS=all                  CUDA devices of both engines (--gpus: all, or ids like 0,1)
#   VARIANTS="pool"           extra runs: pool (the baseline with --pinned-pool: uploads
#                             from a pinned pool as proofline's), notrim (the baseline
#                             with --no-trim), cpus:LIST (proofline run confined to the
#                             CPUs LIST by taskset, e.g. cpus:0,1, with as many
#                             synthesizers and 1 finalizer: how few cores keep the GPU
#                             busy); "" for none
#   PROOFLINE, BASELINE       binaries to use instead of CARRY_DIR/bin/...
#   WORK                      scratch (default /tmp/proofline-bench-utilization)
#   ENGINE_TIMEOUT=240        seconds each engine may run
# A smoke test here, on the CPU:
#   PROOFLINE=build/proofline BASELINE=build/proofline-baseline BACKEND=cpu LOG_N=10 \
#     JOBS=2 PARTS=2 OUT=/tmp/bu-out scripts/bench-utilization.sh run
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/carry.sh
source "$root/scripts/lib/carry.sh"
# shellcheck source=lib/bench.sh
source "$root/scripts/lib/bench.sh"
mode=${1:-}
shift || true

pack() {
  local build=${1:?usage: bench-utilization.sh pack BUILD_DIR [CARRY_DIR]}
  local dest=${2:-$root/.carry/bench-utilization}
  carry_pack bench-utilization.sh "$build" "$dest" proofline proofline-baseline
  ls -l "$dest/bin" "$dest/lib"
}

# zkey_domain FILE: the domain size in a snarkjs .zkey's Groth16 header.
zkey_domain() {
  python3 - "$1" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"zkey", "not a zkey"
off = 12
for _ in range(struct.unpack_from("<I", data, 8)[0]):
    kind, size = struct.unpack_from("<IQ", data, off)
    off += 12
    if kind == 2:  # n8q, q, n8r, r, nVars, nPublic, domainSize
        p = off + 4 + struct.unpack_from("<I", data, off)[0]
        p += 4 + struct.unpack_from("<I", data, p)[0]
        print(struct.unpack_from("<III", data, p)[2])
        sys.exit(0)
    off += size
sys.exit("no header section")
EOF
}

run() {
  local carry=${1:-$root/.carry/bench-utilization}
  [ -d "$carry" ] && carry=$(cd "$carry" && pwd)
  local out=${OUT:-$PWD/bench-utilization-out}
  local work=${WORK:-/tmp/proofline-bench-utilization}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  [ -d "$carry/lib" ] && export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local proofline=${PROOFLINE:-$carry/bin/proofline}
  local baseline=${BASELINE:-$carry/bin/proofline-baseline}
  for b in "$proofline" "$baseline"; do
    [ -x "$b" ] || { echo "bench-utilization.sh: $b: not an executable (pack first, or set PROOFLINE/BASELINE)" >&2; exit 2; }
  done
  local log_n=${LOG_N:-20} jobs=${JOBS:-8} parts=${PARTS:-4} backend=${BACKEND:-cuda} keys=${KEYS:-1}
  local curve=${CURVE:-bn254} lanes=${LANES:-2} finalizers=${FINALIZERS:-2} gpus=${GPUS:-all}
  local cores
  cores=$(nproc)
  local synth=${SYNTHESIZERS:-$(( cores > 4 ? cores - 2 : 2 ))}
  local variants=${VARIANTS-pool}
  local n_public=1
  local constraints=$(( (1 << log_n) - n_public - 1 ))  # + P + 1 rows = exactly 2^LOG_N

  rm -rf "$work"
  mkdir -p "$work/logs" "$work/reports"
  local summary=$work/summary.txt
  : > "$summary"
  note() { echo "$*" | tee -a "$summary"; }
  local rc=0

  bench_header bench-utilization "$carry" "$summary"
  note "backlog: $jobs jobs x $parts partitions, $curve, domain 2^$log_n ($constraints constraints);" \
       "--backend $backend, $synth synthesizers, $finalizers finalizers, $lanes lanes per GPU, --gpus $gpus"

  # 1. Inputs, generated here: KEYS keys (inputs, inputs2, ...), PARTS
  #    witnesses each, shared by every job of that key.
  local t0=$SECONDS
  local k dir
  for (( k = 0; k < keys; k++ )); do
    dir=$work/inputs; [ "$k" -eq 0 ] || dir=$work/inputs$((k + 1))
    "$proofline" setup --dev --curve "$curve" --constraints "$constraints" --public "$n_public" \
      --witnesses "$parts" --seed $((20 + k)) --out "$dir" --log-level warn > "$work/logs/setup$k.log" 2>&1 ||
      { tail -20 "$work/logs/setup$k.log"; note "setup failed"; exit 1; }
  done
  local domain
  domain=$(zkey_domain "$work/inputs/circuit.zkey") || { note "cannot read the zkey header"; exit 1; }
  note "setup: $((SECONDS - t0)) s, $keys key(s), domain $domain"
  [ "$domain" -eq $(( 1 << log_n )) ] || { note "domain $domain is not 2^$log_n"; exit 1; }
  python3 - "$work/jobs.json" "$jobs" "$parts" "$keys" <<'EOF'
import json, sys
path, jobs, parts, keys = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def inputs(k):
    return "inputs" if k == 0 else f"inputs{k + 1}"
spec = {"jobs": [{"id": f"j{j}", "zkey": f"{inputs(j % keys)}/circuit.zkey",
                  "witnesses": [f"{inputs(j % keys)}/witness_{i}.wtns" for i in range(parts)],
                  "out": f"j{j}"} for j in range(jobs)]}
json.dump(spec, open(path, "w"), indent=1)
EOF

  # 2. The engines, one after the other on the same inputs; outputs under
  #    out/<engine>/j<k>.
  engine() {  # engine NAME BINARY ARGS...
    local name=$1 bin=$2
    shift 2
    local t=$SECONDS
    echo "+ $(basename "$bin") $*" > "$work/logs/$name.log"
    timeout "${ENGINE_TIMEOUT:-240}" "$bin" "$@" --out-root "$work/out/$name" --report "$work/reports/$name.json" \
      >> "$work/logs/$name.log" 2>&1
    local r=$?
    note "$name: exit $r in $((SECONDS - t)) s"
    if [ $r -ne 0 ] || [ ! -s "$work/reports/$name.json" ]; then
      tail -15 "$work/logs/$name.log" | sed 's/^/  | /' | tee -a "$summary"
      rc=1
    fi
  }
  local common=(--backend "$backend" --synthesizers "$synth" --finalizers "$finalizers")
  [ "$backend" = cpu ] || common+=(--gpus "$gpus")
  engine proofline "$proofline" run "$work/jobs.json" "${common[@]}" --gpu-lanes "$lanes"
  engine baseline "$baseline" "$work/jobs.json" "${common[@]}" --lanes "$lanes"
  local names=(proofline baseline)
  for v in $variants; do
    case "$v" in
      pool) engine baseline+pool "$baseline" "$work/jobs.json" "${common[@]}" --lanes "$lanes" --pinned-pool
            names+=(baseline+pool) ;;
      notrim) engine baseline-notrim "$baseline" "$work/jobs.json" "${common[@]}" --lanes "$lanes" --no-trim
              names+=(baseline-notrim) ;;
      cpus:*)
        local list=${v#cpus:} count
        count=$(taskset -c "$list" nproc 2>/dev/null) || { note "variant $v: taskset cannot use CPUs $list"; continue; }
        local few=(--backend "$backend" --synthesizers "$count" --finalizers 1 --gpu-lanes "$lanes")
        [ "$backend" = cpu ] || few+=(--gpus "$gpus")
        engine "proofline@${count}cpus" taskset -c "$list" "$proofline" run "$work/jobs.json" "${few[@]}"
        names+=("proofline@${count}cpus") ;;
      *) note "unknown variant $v (pool, notrim)" ;;
    esac
  done

  # 3. Side by side.
  python3 - "$work/reports" "${names[@]}" <<'EOF' | tee -a "$summary"
import json, os, sys
folder, names = sys.argv[1], sys.argv[2:]
reports = {}
for n in names:
    try:
        reports[n] = json.load(open(os.path.join(folder, n + ".json")))
    except (OSError, ValueError) as e:
        reports[n] = None
def cell(r, f):
    if r is None:
        return "no report"
    try:
        v = f(r)
    except (KeyError, IndexError, TypeError, ZeroDivisionError):
        return "-"
    return v
rows = [
    ("proofs", lambda r: f"{r['proofs']}"),
    ("wall s", lambda r: f"{r['wall_s']:.3f}"),
    ("first GPU work s", lambda r: f"{r['startup']['first_gpu_work_ms'] / 1000:.3f}"),
    ("first proof s", lambda r: f"{r['startup']['first_proof_ms'] / 1000:.3f}"),
    ("proofs/s", lambda r: f"{r['proofs_per_s']:.2f}"),
]
devices = max((len(r.get("gpus", [])) for r in reports.values() if r), default=0)
for d in range(devices):
    rows += [
        (f"gpu{d} busy", lambda r, d=d: f"{100 * r['gpus'][d]['gpu_busy_fraction']:.2f}%"),
        (f"gpu{d} nvml busy", lambda r, d=d: f"{100 * r['gpus'][d]['nvml_busy_fraction']:.1f}%"),
        (f"gpu{d} gap p50 ms", lambda r, d=d: f"{r['gpus'][d]['handoff_gap_ms']['p50']:.3f}"),
        (f"gpu{d} gap p99 ms", lambda r, d=d: f"{r['gpus'][d]['handoff_gap_ms']['p99']:.3f}"),
        (f"gpu{d} gap max ms", lambda r, d=d: f"{r['gpus'][d]['handoff_gap_ms']['max']:.3f}"),
    ]
rows += [
    ("purge/trim count", lambda r: f"{r['purge']['count']}"),
    ("purge/trim total ms", lambda r: f"{r['purge']['total_ms']:.1f}"),
    ("GPU-worker lock wait ms", lambda r: f"{r['tracker_wait_ms']['gpu_workers']['total_ms']:.1f}"),
    ("peak RSS GiB", lambda r: f"{r['memory']['peak_rss_bytes'] / 2**30:.2f}"),
    ("CPU cores while proving", lambda r: f"{r['cpu']['cores']:.2f}"),
    ("CPU ms a partition", lambda r: f"{r['cpu']['per_partition_ms']:.1f}"),
]
width = max(len(n) for n in names) + 2
print()
print(f"{'':<24}" + "".join(f"{n:>{max(width, 14)}}" for n in names))
for label, f in rows:
    print(f"{label:<24}" + "".join(f"{cell(reports[n], f):>{max(width, 14)}}" for n in names))
gpu = lambda r: r["gpus"][0]["name"] if r and r.get("gpus") else "?"
print(f"\ndevice: {gpu(reports.get('proofline')) if reports.get('proofline') else gpu(reports.get('baseline'))}")
EOF

  # 4. Results: reports, logs, job file, verification key, the first job's proofs.
  bench_bundle "$work" "$out" bench-utilization "$work/jobs.json"
  note "== results: $out/bench-utilization.tar.gz, $out/summary.txt (exit $rc)"
  exit $rc
}

case "$mode" in
  pack) pack "$@" ;;
  run) run "$@" ;;
  *)
    sed -n '2,42p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
