# Shared set-up for the end-to-end scripts, sourced by each of them.
#
#   <script> PROOFLINE FIXTURES_DIR REPO_ROOT WORK_DIR
#
# PROOFLINE is the binary under test, FIXTURES_DIR is tests/fixtures,
# REPO_ROOT holds scripts/verify-proofs.sh and node_modules/.bin/snarkjs,
# WORK_DIR is a scratch directory under the build tree, emptied first. The
# script runs inside WORK_DIR; every helper exits 1 with a FAIL line on the
# first broken expectation.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/lib.sh"
expect_args "PROOFLINE FIXTURES_DIR REPO_ROOT WORK_DIR" 4 "$@"
proofline=$1
fixtures=$2
repo=$3
work=$4
e2e_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
snarkjs=$repo/node_modules/.bin/snarkjs

need_executable "$proofline"
need_executable "$snarkjs" "not installed (run scripts/setup.sh)"
[ -d "$fixtures/bn254/small" ] || fail "$fixtures: no fixtures (run scripts/make-fixtures.sh)"
command -v python3 >/dev/null || fail "python3 not found"

enter_work_dir "$work" e2e

# check SUBCOMMAND ARGS...: one of e2e_check.py's contract checks.
check() {
  python3 "$e2e_dir/e2e_check.py" "$@" || fail "check $1 ${2:-} failed (see above)"
}

# stage CURVE CIRCUIT NAME: copies fixture CURVE/CIRCUIT's key and witnesses
# to in/NAME.zkey, in/NAME_<i>.wtns, so job files use paths relative to
# themselves.
stage() {
  local src=$fixtures/$1/$2 name=$3 w i
  [ -f "$src/circuit.zkey" ] || fail "$src/circuit.zkey: missing fixture"
  mkdir -p in
  cp "$src/circuit.zkey" "in/$name.zkey"
  for w in "$src"/witness_*.wtns; do
    i=${w##*_}
    cp "$w" "in/${name}_$i"
  done
}

# prove LABEL EXPECTED_STATUS ARGS...: runs proofline with ARGS, keeping its
# stdout and stderr in LABEL.log; fails unless it exits with EXPECTED_STATUS.
prove() {
  local label=$1 want=$2 rc
  shift 2
  echo "+ proofline $*"
  set +e
  timeout 300 "$proofline" "$@" >"$label.log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    sed 's/^/  | /' "$label.log" >&2
    fail "proofline $* exited $rc, expected $want"
  fi
}

# verify VKEY DIR...: every proof*.json under each DIR verifies with snarkjs.
verify() {
  local vkey=$1
  shift
  "$repo/scripts/verify-proofs.sh" "$vkey" "$@" || fail "snarkjs rejected a proof under $*"
}

# log_names LABEL WORD...: LABEL.log mentions every WORD.
log_names() {
  local label=$1 word
  shift
  for word in "$@"; do
    grep -qF -- "$word" "$label.log" || {
      sed 's/^/  | /' "$label.log" >&2
      fail "$label.log does not mention '$word'"
    }
  done
}
