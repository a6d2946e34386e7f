#!/usr/bin/env bash
# scripts/check-includes.sh: passes on this tree, and fails, naming the file,
# on a tree with an upward include and on one with a cycle.
#   check_includes.sh SCRIPT SOURCE_DIR WORK_DIR
set -euo pipefail
script=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"

echo "== this tree"
bash "$script" "$src"

fail=0
expect_failure() {  # name, text the report must contain
  local out rc=0
  out=$(bash "$script" "$work/$1" 2>&1) || rc=$?
  if [ $rc -eq 0 ] || ! grep -qF "$2" <<<"$out"; then
    echo "FAIL: $1: rc=$rc, expected a report with '$2'; got:"; echo "$out"; fail=1
  else
    echo "ok: $1 rejected ($2)"
  fi
}

# zk/ reaching up into gpu/
mkdir -p "$work/upward/zk/dev" "$work/upward/gpu"
echo '#include "gpu/cpu/thread_pool.hpp"' > "$work/upward/zk/dev/keygen.hpp"
echo '#include "zk/ff/field.hpp"' > "$work/upward/gpu/ntt.hpp"
expect_failure upward "zk/dev/keygen.hpp:1: zk/ includes gpu/"

# bench/ and app/ including each other
mkdir -p "$work/cycle/bench/baseline" "$work/cycle/app"
echo '  #  include "app/job_file.hpp"' > "$work/cycle/bench/baseline/main.cpp"
echo '#include "bench/kernels.hpp"' > "$work/cycle/app/kernel_bench.cpp"
expect_failure cycle "include cycle"

# a clean tree passes
mkdir -p "$work/clean/app" "$work/clean/zk"
echo '#include "zk/curves.hpp"' > "$work/clean/app/main.cpp"
echo '#include <vector>' > "$work/clean/zk/curves.hpp"
bash "$script" "$work/clean" >/dev/null || { echo "FAIL: a clean tree was rejected"; fail=1; }

exit $fail
