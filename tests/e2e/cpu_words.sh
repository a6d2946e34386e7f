#!/usr/bin/env bash
# A machine without a GPU hears about it once, in plain words: the log says
# "backend: cpu (no GPU found)" a single time and repeats none of CUDA's own
# errors; the summary, the trace and the HTML page speak of the CPU backend
# and of partitions waiting to start, not of a GPU. Skipped (77) where an
# NVIDIA device exists, since `--backend auto` then proves on it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "SKIP: an NVIDIA device is present; --backend auto would use it"
  exit 77
fi

stage bn254 small small
cat >jobs.json <<'JSON'
{"jobs": [{"id": "one", "zkey": "in/small.zkey", "witness": "in/small_0.wtns", "out": "out/one"}]}
JSON
prove auto 0 run jobs.json --html page.html --trace trace.json
# A build without CUDA says so instead of looking for a GPU.
why="no GPU found"
"$proofline" --version 2>/dev/null | grep -q "built without CUDA" && why="built without CUDA"
n=$(grep -c "backend: cpu ($why)" auto.log || true)
[ "$n" = 1 ] || { sed 's/^/  | /' auto.log >&2; fail "the log says 'backend: cpu ($why)' $n times, expected once"; }
! grep -qi "driver version\|cudaGetDeviceCount\|GPU work\|GPU busy" auto.log ||
  { sed 's/^/  | /' auto.log >&2; fail "the log of a CPU-only run speaks of a GPU"; }
log_names auto "start-up: first proving work" "CPU backend"
! grep -q "ready for a GPU\|waiting for memory" page.html trace.json ||
  fail "the HTML page or trace speaks of a GPU or of memory on a CPU-only run"
grep -q "backend: cpu (no GPU in this run)" page.html || fail "page.html does not say there was no GPU"
echo "PASS: cpu_words"
