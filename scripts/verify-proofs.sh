#!/usr/bin/env bash
# Verifies proofline's (or anyone's) Groth16 proofs with snarkjs.
#
#   scripts/verify-proofs.sh VERIFICATION_KEY DIR...
#
# For every proof*.json directly under each DIR it runs
# `snarkjs groth16 verify VERIFICATION_KEY public*.json proof*.json` with the
# public file of the same suffix (proof.json <-> public.json,
# proof_3.json <-> public_3.json) and prints one line per proof:
#   OK      DIR/proof_3.json
#   FAILED  DIR/proof_3.json (snarkjs: Invalid proof)
# An argument that is not a directory gets a line of its own
#   FAILED  DIR (not a directory)
# and is counted apart from the proofs in the summary line.
# Exit status: 0 when at least one proof was found and all verified; 1 when
# any failed, a public file is missing, a DIR is not a directory, or no
# proof was found; 2 on usage errors. snarkjs is the one in the repository's node_modules.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
snarkjs=$root/node_modules/.bin/snarkjs

if [ "$#" -lt 2 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  echo "usage: verify-proofs.sh VERIFICATION_KEY DIR..." >&2
  exit 2
fi
vkey=$1
shift
[ -f "$vkey" ] || { echo "verify-proofs.sh: $vkey: no such file" >&2; exit 2; }
[ -x "$snarkjs" ] || { echo "verify-proofs.sh: $snarkjs not found; run scripts/setup.sh" >&2; exit 1; }

found=0
failed=0      # proofs found that did not verify
not_dirs=0    # arguments that are not directories (no proof counted for them)
for dir in "$@"; do
  if [ ! -d "$dir" ]; then
    echo "FAILED  $dir (not a directory)"
    not_dirs=$((not_dirs + 1))
    continue
  fi
  shopt -s nullglob
  proofs=("${dir%/}"/proof*.json)
  shopt -u nullglob
  for proof in "${proofs[@]}"; do
    base=$(basename "$proof")
    found=$((found + 1))
    public=$(dirname "$proof")/public${base#proof}
    if [ ! -f "$public" ]; then
      echo "FAILED  $proof (no $(basename "$public"))"
      failed=$((failed + 1))
      continue
    fi
    # snarkjs prints "OK!" and exits 0 on success; on failure it prints
    # "Invalid proof" and exits non-zero. Require both signs of success.
    if out=$("$snarkjs" groth16 verify "$vkey" "$public" "$proof" 2>&1) &&
       grep -q "OK" <<<"$out"; then
      echo "OK      $proof"
    else
      reason=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$out" | grep -v '^\s*$' | tail -n 1)
      echo "FAILED  $proof (snarkjs: ${reason:-no output})"
      failed=$((failed + 1))
    fi
  done
done

if [ "$found" -eq 0 ]; then
  echo "verify-proofs.sh: no proof*.json found under $*" >&2
  exit 1
fi
summary="$((found - failed)) of $found proofs verified"
[ "$not_dirs" -eq 0 ] || summary+="; $not_dirs argument(s) not a directory"
echo "verify-proofs.sh: $summary"
[ "$failed" -eq 0 ] && [ "$not_dirs" -eq 0 ]
