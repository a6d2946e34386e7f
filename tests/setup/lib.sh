# Shared by the `proofline setup` end-to-end scripts (sourced):
#   SCRIPT PROOFLINE REPO_ROOT WORK_DIR
# Sets proofline, repo, work, snarkjs and circom; defines usage (fail comes
# from tests/support/lib.sh); empties WORK_DIR (which must lie under
# .../setup/) and enters it.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/lib.sh"
expect_args "PROOFLINE REPO_ROOT WORK_DIR" 3 "$@"
proofline=$1
repo=$2
work=$3
snarkjs=$repo/node_modules/.bin/snarkjs
circom=$repo/node_modules/.bin/circom2

need_executable "$proofline"
need_executable "$snarkjs" "not installed (run scripts/setup.sh)"
enter_work_dir "$work" setup

# usage WANT_TEXT ARGS...: proofline setup ARGS exits 2 and prints WANT_TEXT.
usage() {
  local want=$1 rc
  shift
  set +e
  "$proofline" setup "$@" >usage.log 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat usage.log >&2; fail "proofline setup $* exited $rc, expected 2"; }
  grep -qF -- "$want" usage.log || { cat usage.log >&2; fail "proofline setup $*: no '$want' in the message"; }
  echo "ok: proofline setup $* -> exit 2: $(head -n 1 usage.log)"
}
