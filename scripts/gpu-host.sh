#!/usr/bin/env bash
# The GPU host's part of the CUDA work, in one call. The host has the driver
# and CUDA runtime but no CAF, jemalloc or node, so binaries are built here
# (static cudart and jemalloc), packed with the shared libraries they need,
# carried over, and run there; logs and proofs come back in $OUT.
#
#   scripts/gpu-host.sh pack BUILD_DIR [CARRY_DIR]
#       (here) copy cuda_gpu_test, proofline-bench and, if built, proofline
#       from BUILD_DIR (stripped of host symbols), plus their non-system shared
#       libraries (ldd) and build-info.txt (commit, date, compiler) into
#       CARRY_DIR (default .carry/gpu-host, git-ignored). A bench binary of
#       another build copied in as bin/proofline-bench-TAG is benchmarked too.
#   scripts/gpu-host.sh run [CARRY_DIR]
#       (GPU host) run the gpu tests (proofs written for snarkjs), the
#       benchmarks (MSM G1 2^16..2^24, G2 2^16..2^22, NTT and odd-coset NTT
#       2^20..2^24, a whole 2^20 proof, the CPU G2 MSM for comparison), write
#       everything under $OUT (default ./gpu-host-out) as results.tar.gz plus
#       summary.txt, and print the summary table last.
#
# Through the device tool (one call, carrying .carry):
#   run(command="scripts/gpu-host.sh run .carry/gpu-host", carry=[".carry"])
# Afterwards, here: tar xzf <files_at>/results.tar.gz -C /tmp/gpu-host &&
#   scripts/verify-proofs.sh tests/fixtures/bn254/small/verification_key.json /tmp/gpu-host/proofs/bn254_small
#
# Environment (run): GPU_TEST_LOG_N (largest tested MSM/NTT size, default 18),
# BENCH_RUNS (default 10), SKIP_TESTS=1, SKIP_BENCH=1, QUICK=1 (small sweeps),
# CPU_BENCH=0 (skip the CPU G2 MSM), WINDOWS=0 (skip the window sweeps).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/carry.sh
source "$root/scripts/lib/carry.sh"
mode=${1:-}
shift || true

pack() {
  local build=${1:?usage: gpu-host.sh pack BUILD_DIR [CARRY_DIR]}
  local dest=${2:-$root/.carry/gpu-host}
  mkdir -p "$dest/bin" "$dest/lib"
  local found=0
  for b in cuda_gpu_test proofline-bench proofline; do
    local f
    f=$(find "$build" -maxdepth 3 -type f -name "$b" -perm -u+x 2>/dev/null | head -1)
    [ -n "$f" ] || continue
    carry_binary "$f" "$dest"
    found=$((found + 1))
  done
  [ "$found" -gt 0 ] || { echo "gpu-host.sh: no binaries found under $build" >&2; exit 1; }
  build_info "$root" "$build" > "$dest/build-info.txt"
  du -sh "$dest"
  ls -l "$dest/bin" "$dest/lib"
}

run() {
  local carry=${1:-$root/.carry/gpu-host}
  carry=$(cd "$carry" && pwd)
  local out=${OUT:-$PWD/gpu-host-out}
  local work=${WORK:-/tmp/proofline-gpu-host}  # only the tarball and the summary go to $OUT
  rm -rf "$work"
  mkdir -p "$out" "$work/logs" "$work/proofs"
  export LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PROOFLINE_FIXTURES_DIR=$root/tests/fixtures
  local bin=$carry/bin
  local summary=$work/summary.txt
  : > "$summary"
  note() { echo "$*" | tee -a "$summary"; }

  note "== gpu-host $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  cat "$carry/build-info.txt" | tee -a "$summary"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
  nvidia-smi 2>/dev/null | grep -m1 "CUDA Version" | sed 's/^/smi: /' | tee -a "$summary"

  if [ "${SKIP_TESTS:-0}" != 1 ]; then
    for t in cuda_host_test cuda_gpu_test; do
      [ -x "$bin/$t" ] || { note "test $t: not carried"; continue; }
      local t0=$SECONDS
      PROOFLINE_GPU_PROOF_DIR=$work/proofs PROOFLINE_GPU_TEST_LOG_N=${GPU_TEST_LOG_N:-18} \
        timeout 200 "$bin/$t" > "$work/logs/$t.log" 2>&1
      local rc=$?
      note "test $t: exit $rc in $((SECONDS - t0)) s: $(grep -E '^\[doctest\] (test cases|assertions)' "$work/logs/$t.log" | tr -s ' ' | tr '\n' ' ')"
      [ $rc -eq 0 ] || tail -40 "$work/logs/$t.log"
    done
  fi

  if [ "${SKIP_BENCH:-0}" != 1 ] && [ -x "$bin/proofline-bench" ]; then
    local runs=${BENCH_RUNS:-10}
    local json=$work/bench.jsonl
    : > "$json"
    b() {  # b NAME ARGS...: one sweep, logged and summarised
      local name=$1
      shift
      local t0=$SECONDS
      timeout 120 "$bin/proofline-bench" "$@" --runs "$runs" --json "$json" > "$work/logs/bench-$name.log" 2>&1
      local rc=$?
      note "bench $name: exit $rc in $((SECONDS - t0)) s"
      [ $rc -eq 0 ] || tail -5 "$work/logs/bench-$name.log"
    }
    "$bin/proofline-bench" field > "$work/logs/bench-field.log" 2>&1
    note "bench field: exit $?"
    sed 's/^/  /' "$work/logs/bench-field.log" | tee -a "$summary"
    if command -v cuobjdump > /dev/null; then  # instruction mix of the hot kernels
      cuobjdump -sass "$bin/proofline-bench" 2>/dev/null | awk '
        /Function : / { fn = $3; next }
        /^ +\/\*[0-9a-f]+\*\// {
          if (fn !~ /chainsILi|level1_fnINS_2zk2ec6affineINS5_6detail9curve_setINS8_16bn254_params_refEE8g1|pass_fnINS_2zk2ff2fpINS5_6params5bn2542frEEELj3ELb1/) next
          op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op)
          total[fn]++; count[fn SUBSEP op]++
        }
        END {
          for (f in total) {
            printf "sass %s: %d instructions;", substr(f, 1, 90), total[f]
            n = 0
            for (k in count) { split(k, a, SUBSEP); if (a[1] == f && count[k] * 50 >= total[f]) printf " %s %d", a[2], count[k] }
            printf "\n"
          }
        }' | tee -a "$summary"
    fi
    if [ "${QUICK:-0}" = 1 ]; then
      b msm-g1 msm --log-n 16 --log-n-to 20 --step 2
      b ntt ntt --log-n 20
      b prove prove --log-n 16
    else
      b msm-g1 msm --log-n 16 --log-n-to 24 --step 2
      b msm-g1-odd msm --log-n 17 --log-n-to 23 --step 2
      b msm-g1-plain msm --log-n 16 --log-n-to 24 --step 2 --plain
      b msm-g2 msm_g2 --log-n 16 --log-n-to 22 --step 2
      b msm-g2-plain msm_g2 --log-n 20 --plain
      b ntt ntt --log-n 20 --log-n-to 24 --step 2
      b ntt-coset ntt_coset --log-n 20 --log-n-to 24 --step 2
      b ntt-untiled ntt --log-n 20 --log-n-to 24 --step 4 --untiled
      b prove prove --log-n 20
      b prove-plain prove --log-n 20 --plain
      b msm-bls-g1 msm --curve bls12_381 --log-n 20
      [ "${CPU_BENCH:-1}" = 1 ] && b msm-g2-cpu msm_g2 --backend cpu --log-n 20 --runs 3 --warmup 1
      if [ "${WINDOWS:-1}" = 1 ]; then  # the planner's window choice against its neighbours
        # planned WHAT LOG_N: the window the last JSON line of that MSM reports (the planner's)
        planned() {
          python3 -c 'import json,sys
w = [r.get("window", 0) for r in map(json.loads, open(sys.argv[1])) if r["what"] == sys.argv[2] and r["log_n"] == int(sys.argv[3])]
print(w[-1] if w else 0)' "$json" "$1" "$2"
        }
        local what n c
        for what_n in msm:20 msm:24 msm_g2:20; do
          what=${what_n%:*} n=${what_n#*:}
          c=$(planned "$what" "$n")
          [ "$c" -gt 2 ] || continue
          for d in $((c - 1)) $((c + 1)); do b "$what-$n-c$d" "$what" --log-n "$n" --window "$d" --runs 5; done
        done
      fi
    fi
    for v in "$bin"/proofline-bench-*; do  # variant builds (e.g. another PROOFLINE_FF_DEVICE_MUL)
      [ -x "$v" ] || continue
      local tag=${v##*/proofline-bench-}
      note "variant $tag:"
      "$v" field 2>&1 | sed 's/^/  /' | tee -a "$summary"
      local vjson=$work/bench-$tag.jsonl
      : > "$vjson"
      for args in "msm --log-n 16 --log-n-to 24 --step 2" "msm_g2 --log-n 16 --log-n-to 22 --step 2" \
                  "ntt --log-n 20 --log-n-to 24 --step 2" "ntt_coset --log-n 20 --log-n-to 24 --step 2" "prove --log-n 20"; do
        timeout 120 "$v" $args --runs "$runs" --json "$vjson" >> "$work/logs/bench-$tag.log" 2>&1 || note "variant $tag $args: failed"
      done
      python3 -c "
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f\"$tag {r['what']:<10} {r['curve']:<10} {r['log_n']:5d} {r['median_ms']:11.3f}\")
" "$vjson" | tee -a "$summary"
    done
    {
      echo
      echo "what       curve      log_n backend   median_ms      min_ms      max_ms  window"
      python3 - "$json" <<'EOF' 2>/dev/null || cat "$json"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    fb = {True: 'fixed', False: 'plain'}.get(r.get('fixed_base'), '') + {True: 'tiled', False: 'untiled'}.get(r.get('tiled'), '')
    print(f"{r['what']:<10} {r['curve']:<10} {r['log_n']:5d} {r['backend']:<7} {r['median_ms']:11.3f} {r['min_ms']:11.3f} {r['max_ms']:11.3f}  {r.get('window', '')} {fb}")
    for k, v in sorted(r.get('breakdown_ms', {}).items()):
        print(f"    {k:<10} {v:9.3f} ms")
EOF
    } | tee -a "$summary"
  fi

  (cd "$work" && tar czf "$out/results.tar.gz" .)
  cp "$summary" "$out/summary.txt"
  echo
  echo "== results: $out/results.tar.gz, $out/summary.txt"
  cat "$summary" | tail -60
}

case "$mode" in
  pack) pack "$@" ;;
  run) run "$@" ;;
  *) sed -n '2,28p' "$0"; exit 2 ;;
esac
