# Shared by the witness generator scripts (sourced):  SCRIPT PROOFLINE REPO_ROOT WORK_DIR
# Sets proofline, repo, work, snarkjs, circom; defines compile_circom,
# same_witness and calc_fails (fail comes from tests/support/lib.sh); empties
# WORK_DIR (under .../witness/) and enters it.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/lib.sh"
expect_args "PROOFLINE REPO_ROOT WORK_DIR" 3 "$@"
proofline=$1
repo=$2
work=$3
snarkjs=$repo/node_modules/.bin/snarkjs
circom=$repo/node_modules/.bin/circom2
need_executable "$proofline"
need_executable "$snarkjs" "not installed (run scripts/setup.sh)"
need_executable "$circom" "not installed (run scripts/setup.sh)"
enter_work_dir "$work" witness

# compile_circom SRC NAME OUTDIR [circom options...]: NAME.circom compiled
# into OUTDIR (circom2 runs under WASI and sees the working directory only).
compile_circom() {
  local src=$1 name=$2 out=$3
  shift 3
  cp "$src" "$name.circom"
  mkdir -p "$out"
  "$circom" "$name.circom" --c --wasm --sym -o "$out" "$@" >"$out/circom.log" 2>&1 ||
    { cat "$out/circom.log" >&2; fail "circom2 failed on $src"; }
}

# same_witness GEN WASM INPUT: proofline's witness of INPUT is snarkjs's, byte for byte.
same_witness() {
  local gen=$1 wasm=$2 input=$3 tag
  tag=$(basename "$gen" .so)-$(basename "$input" .json)
  "$proofline" witness calc "$gen" "$input" "pl-$tag.wtns" 2>"calc-$tag.log" ||
    { cat "calc-$tag.log" >&2; fail "witness calc $gen $input failed"; }
  "$snarkjs" wtns calculate "$wasm" "$input" "sj-$tag.wtns" >/dev/null
  cmp -s "pl-$tag.wtns" "sj-$tag.wtns" || fail "$gen, $input: the witness differs from snarkjs's"
  echo "ok: $gen $input: byte-identical to snarkjs wtns calculate"
}

# calc_fails GEN INPUT TEXT: witness calc exits 1 and its message holds TEXT.
calc_fails() {
  local gen=$1 input=$2 want=$3 rc
  set +e
  "$proofline" witness calc "$gen" "$input" bad.wtns >bad.log 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || { cat bad.log >&2; fail "witness calc $input exited $rc, expected 1"; }
  grep -qF -- "$want" bad.log || { cat bad.log >&2; fail "$input: no '$want' in the message"; }
  [ ! -e bad.wtns ] || fail "a failed calc wrote bad.wtns"
  echo "ok: $input -> $(head -n 1 bad.log)"
}
