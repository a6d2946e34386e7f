#!/usr/bin/env bash
# Builds proofline's libFuzzer targets (tests/fuzz: clang, ASan, UBSan) and
# runs each for SECONDS from seeds made of the fixtures.
#
#   scripts/fuzz.sh [SECONDS] [--build-dir DIR] [--target NAME]...
#
#   SECONDS       per target (default 30)
#   --build-dir   the fuzz build and its corpora (default build-fuzz)
#   --target      run only these (job_file, zkey, wtns, net_message, metrics_http, http_api)
#
# Each target reads its seeds (DIR/seeds/NAME), the committed crash
# reproducers (tests/fuzz/regressions/NAME, run first, every time) and the
# corpus it grew before (DIR/corpus/NAME, kept between runs). A crash, leak,
# timeout (10 s for one input) or out-of-memory (one allocation or the RSS
# over 2 GiB) stops the target and fails the script; the input that did it
# is kept as DIR/artifacts/NAME/crash-* (or leak-*, timeout-*, oom-*).
# Targets run as many at once as there are cores (each single-threaded).
# Figures per target (runs, execs/s, coverage, corpus) are printed at the end
# and kept in DIR/fuzz-summary.txt. Exit 0 when every target ran clean.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=30
build=$root/build-fuzz
targets=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --target) targets+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "${#targets[@]}" -gt 0 ] || targets=(job_file zkey wtns net_message metrics_http http_api)

cxx=$(command -v clang++ || command -v clang++-14 || true)
if [ -z "$cxx" ]; then
  echo "fuzz.sh: clang++ not found; scripts/setup.sh installs clang and libclang-rt-14-dev" >&2
  exit 1
fi

# ---- build (only the parsers and the targets; see tests/fuzz/CMakeLists.txt)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DPROOFLINE_FUZZ=ON -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" -- --no-print-directory >/dev/null ||
  cmake --build "$build" -j1  # again, to show the error alone

# ---- seeds from the fixtures
fx=$root/tests/fixtures
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{job_file,zkey,wtns,net_message,metrics_http,http_api}
# http_api: requests of each route, with and without the token, and a proof
# whose body is a real witness.
tok='Authorization: Bearer 0123456789abcdef-fuzz'
w=$fx/bn254/small/witness_0.wtns
{ printf 'POST /v1/prove?key=%%2Fproc%%2Fself%%2Fexe&priority=high HTTP/1.1\r\n%s\r\nContent-Length: %s\r\n\r\n' \
    "$tok" "$(stat -c %s "$w")"; cat "$w"; } >"$seeds/http_api/prove"
printf 'GET /v1/status HTTP/1.1\r\n%s\r\n\r\n' "$tok" >"$seeds/http_api/status"
printf 'GET /v1/openapi.json HTTP/1.1\r\n%s\r\n\r\n\x01' "$tok" >"$seeds/http_api/openapi"
printf 'POST /v1/prove?key=k0123456789abcdef HTTP/1.1\r\n\r\n' >"$seeds/http_api/anonymous"
printf 'GET /healthz HTTP/1.1\r\n\r\n' >"$seeds/http_api/healthz"
cp "$root/examples/jobs.json" "$seeds/job_file/examples_jobs.json"
cat >"$seeds/job_file/fixtures_jobs.json" <<EOF
{"jobs": [
  {"id": "bn254", "zkey": "$fx/bn254/small/circuit.zkey", "witness": "$fx/bn254/small/witness_0.wtns", "out": "out/bn254"},
  {"id": "bls", "zkey": "$fx/bls12_381/small/circuit.zkey", "witnesses": ["$fx/bls12_381/small/witness_0.wtns", "$fx/bls12_381/small/witness_1.wtns"], "out": "out/bls", "priority": "critical"}
]}
EOF
# JSON bombs (docs/CLUSTER.md, Input files): nesting past the limit, more
# values than the partitions allow, and a job file at the nesting limit.
head -c 100000 /dev/zero | tr '\0' '[' >"$seeds/job_file/bomb_deep"
{ printf '{"jobs": [{"id": "a", "zkey": "k", "out": "o", "witnesses": ['
  for i in $(seq 3000); do printf '"w%d",' "$i"; done
  printf '1]}]}'; } >"$seeds/job_file/bomb_values"
printf '{"jobs": [{"id": "a", "zkey": "k", "out": "o", "witnesses": [[["w"]]]}]}' \
  >"$seeds/job_file/nesting_at_limit"
cp "$fx/bn254/small/circuit.zkey" "$seeds/zkey/bn254_small.zkey"
cp "$fx/bls12_381/small/circuit.zkey" "$seeds/zkey/bls12_381_small.zkey"
cp "$fx/bn254/small/witness_0.wtns" "$seeds/wtns/bn254_small.wtns"
cp "$fx/bls12_381/small/witness_0.wtns" "$seeds/wtns/bls12_381_small.wtns"
"$build/proofline-fuzz-seeds" "$seeds/net_message" "$root/examples/jobs.json" \
  "$fx/bn254/small/witness_0.wtns" "$fx/bn254/small/snarkjs_proof_0.json"
printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9100\r\nAccept: text/plain\r\n\r\n' \
  >"$seeds/metrics_http/get_metrics"
printf 'HEAD /metrics?x=1 HTTP/1.0\r\n\r\n' >"$seeds/metrics_http/head_query"
printf 'GET / HTTP/1.1\n\n' >"$seeds/metrics_http/get_root"
printf 'POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n' >"$seeds/metrics_http/post"
# The shapes of hostile requests (docs/OBSERVABILITY.md, Limits): a header
# bomb (more fields than the limit, and a head longer than it), one header
# line longer than the head may be, a slowloris head that has not ended, a
# target too long, a body, a chunked body, a version not served.
{ printf 'GET /metrics HTTP/1.1\r\n'
  for i in $(seq 200); do printf 'X-Bomb-%d: %s\r\n' "$i" bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb; done
  printf '\r\n'; } >"$seeds/metrics_http/header_bomb"
{ printf 'GET /readyz HTTP/1.1\r\nX-Long: '; head -c 9000 /dev/zero | tr '\0' l
  printf '\r\n\r\n'; } >"$seeds/metrics_http/long_header_line"
printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a' >"$seeds/metrics_http/slowloris"
{ printf 'GET /'; head -c 9000 /dev/zero | tr '\0' a; printf ' HTTP/1.1\r\n\r\n'; } \
  >"$seeds/metrics_http/long_target"
printf 'POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello' >"$seeds/metrics_http/body"
printf 'POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n' \
  >"$seeds/metrics_http/chunked"
printf '\r\nGET /readyz HTTP/2.0\r\n\r\n' >"$seeds/metrics_http/http2"

# ---- run
summary=$build/fuzz-summary.txt
: >"$summary"

# fuzz_one NAME: runs one target for SECONDS (libFuzzer is single-threaded)
# and writes its summary line to $build/fuzz_NAME.line and its exit status to
# $build/fuzz_NAME.rc.
fuzz_one() {
  local t=$1 bin=$build/fuzz_$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1
  local log=$build/fuzz_$1.log rc=0 dirs dict last cov corp
  rm -f "$build/fuzz_$t.line" "$build/fuzz_$t.rc"
  mkdir -p "$corpus" "$artifacts"
  dirs=("$corpus" "$seeds/$t")
  [ -d "$root/tests/fuzz/regressions/$t" ] && dirs+=("$root/tests/fuzz/regressions/$t")
  dict=()
  [ -f "$root/tests/fuzz/$t.dict" ] && dict=(-dict="$root/tests/fuzz/$t.dict")
  echo "fuzz: $t for ${seconds}s"
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "${dict[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
  printf '%-13s rc=%-3s runs=%-10s execs/s=%-7s cov=%-6s corpus=%-12s new=%-5s peak_rss_mb=%s\n' \
    "$t" "$rc" "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" "${cov:-?}" \
    "${corp:-?}" "$(stat new_units_added)" "$(stat peak_rss_mb)" >"$build/fuzz_$t.line"
  echo "$rc" >"$build/fuzz_$t.rc"
}

# As many targets at once as there are cores, each on a core of its own, so
# every target still gets SECONDS of a whole core.
for t in "${targets[@]}"; do
  [ -x "$build/fuzz_$t" ] || { echo "fuzz.sh: no target $t" >&2; exit 2; }
done
export -f fuzz_one
export root build seeds seconds
printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'fuzz_one "$1"' _ {} || true

failed=()
for t in "${targets[@]}"; do
  rc=$(cat "$build/fuzz_$t.rc" 2>/dev/null || echo "?")
  { cat "$build/fuzz_$t.line" 2>/dev/null || echo "$t rc=$rc (no figures)"; } | tee -a "$summary"
  if [ "$rc" != 0 ]; then
    failed+=("$t")
    grep -E 'ERROR: |SUMMARY: |Test unit written|runtime error' "$build/fuzz_$t.log" | head -20 >&2 || true
    echo "fuzz: $t failed; whole log: $build/fuzz_$t.log" >&2
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all targets ran ${seconds}s without a crash, leak, timeout or out-of-memory"
