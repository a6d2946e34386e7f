# Shared by the `proofline setup` end-to-end scripts (sourced):
#   SCRIPT PROOFLINE REPO_ROOT WORK_DIR
# Sets proofline, repo, work, snarkjs and circom; defines fail and usage;
# empties WORK_DIR (which must lie under .../setup/) and enters it.
set -euo pipefail

if [ "$#" -ne 3 ]; then
  echo "usage: $0 PROOFLINE REPO_ROOT WORK_DIR" >&2
  exit 2
fi
proofline=$1
repo=$2
work=$3
snarkjs=$repo/node_modules/.bin/snarkjs
circom=$repo/node_modules/.bin/circom2

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ -x "$proofline" ] || fail "$proofline: not an executable"
[ -x "$snarkjs" ] || fail "$snarkjs: not installed (run scripts/setup.sh)"
case "$work" in
  */setup/*) ;;
  *) fail "refusing to empty $work: the work directory must lie under .../setup/" ;;
esac
rm -rf "$work"
mkdir -p "$work"
cd "$work"

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
