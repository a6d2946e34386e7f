#!/usr/bin/env bash
# `proofline bench memory` with small sizes: exits 0, prints its three
# tables' rows, and writes JSON whose figures are consistent: both
# allocators measured, the glibc side without jemalloc, purges by message
# never on the GPU worker's thread, inline purges only there.
#   bench_smoke.sh PROOFLINE WORK_DIR
set -euo pipefail
proofline=$1
work=$2
mkdir -p "$work"
out=$("$proofline" bench memory --bytes 16M --partitions 6 --log-domain 14 --prove-ms 5 \
        --json "$work/memory.json")
echo "$out"
grep -q "arena.<i>.purge" <<<"$out"
grep -q "malloc_trim(0)" <<<"$out"  # the baseline names its call
python3 - "$work/memory.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
heaps = j["purge_vs_trim"]
assert {h["allocator"] for h in heaps} == {"jemalloc", "glibc"}, heaps
for h in heaps:
    assert "error" not in h, h
    assert h["returned_by_release"] > 0, h
modes = {m["mode"]: m for m in j["backlog"]["modes"]}
assert set(modes) == {"off", "message", "inline"}, modes
for m in modes.values():
    assert m["ok"] and m["partitions"] == 6, m
assert modes["off"]["purges"] == 0
assert modes["message"]["purges"] > 0 and modes["message"]["purge_on_gpu_thread_ms"] == 0
assert modes["message"]["threads"] == ["pl.memory"], modes["message"]["threads"]
assert modes["inline"]["purge_on_gpu_thread_ms"] > 0
assert modes["inline"]["threads"] == ["pl.gpu0.0"], modes["inline"]["threads"]
print("PASS: bench memory")
PY
