#!/usr/bin/env bash
# `proofline run` with no job file proves the bundled example into
# ./proofline-out/, prints a summary, and every proof verifies with the
# example's verification key.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Snapshot of examples/ to show the run writes nothing there.
snapshot() { (cd "$repo/examples" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
snapshot >examples-before.txt

prove example 0 run
[ -s example.log ] || fail "proofline run printed no summary"
[ -d proofline-out ] || fail "no ./proofline-out/ after proofline run"

# Find the two jobs' result.json wherever the out paths landed under
# proofline-out/, then check each job.
mapfile -t results < <(find proofline-out -name result.json | sort)
[ "${#results[@]}" -eq 2 ] || fail "expected 2 result.json under proofline-out, found ${#results[@]}: ${results[*]}"
single=$(dirname "$(grep -l '"single"' "${results[@]}")")
batch=$(dirname "$(grep -l '"batch"' "${results[@]}")")
check result "$single" --id single --status done --partitions 1 --single
check result "$batch" --id batch --status done --partitions 4
check files "$batch" proof_0.json proof_1.json proof_2.json proof_3.json \
  public_0.json public_1.json public_2.json public_3.json result.json
verify "$repo/examples/verification_key.json" "$single" "$batch"
snapshot >examples-after.txt
diff examples-before.txt examples-after.txt >&2 || fail "proofline run changed files under examples/"
echo "PASS: example"
