#!/usr/bin/env bash
# The load test's full form: 1,000 queued jobs on the BN254 `small` fixture,
# a memory budget of four partitions, the CPU backend (tests/load/backlog.py
# says what it checks; CTest's load_backlog runs 200).
#
#   scripts/load.sh [--proofline BIN] [--jobs N] [--work DIR]
#
#   --proofline   default build/proofline (build it first)
#   --jobs        default 1000
#   --work        scratch directory, emptied first (default build/load/work/backlog-N)
# Prints one line of figures; exit 0 when every check held.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$root/build/proofline
jobs=1000
work=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --proofline) bin=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "load.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "load.sh: $bin: not built (cmake --build build --target proofline)" >&2; exit 2; }
[ -n "$work" ] || work=$root/build/load/work/backlog-$jobs
exec python3 "$root/tests/load/backlog.py" --proofline "$bin" --fixtures "$root/tests/fixtures" \
  --repo "$root" --work "$work" --jobs "$jobs"
