#!/usr/bin/env bash
# `proofline setup --dev` end to end, on the real binary:
#   1. usage errors exit 2 with a message naming the problem;
#   2. for each curve, setup + `proofline run DIR/jobs.json` (CPU backend)
#      writes proofs that `snarkjs groth16 verify` accepts with the setup's
#      verification key, which equals the one snarkjs exports from the zkey;
#   3. the same job on a key with one H point replaced fails verification;
#   4. --backend: the log says where the fixed-base products ran and why;
#      `--backend cpu` writes the same zkey as the default (auto: the GPU
#      when one is visible); without a GPU `--backend cuda` is a usage error.
#
#   setup_run.sh PROOFLINE REPO_ROOT WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage "only --dev setups are supported" --curve bn254 --constraints 10 --witnesses 1 --out u1
usage "snarkjs" --curve bn254 --constraints 10 --witnesses 1 --out u1
usage "--constraints must be at least 1" --dev --curve bn254 --constraints 0 --witnesses 1 --out u1
usage "--witnesses must be at least 1" --dev --curve bn254 --constraints 10 --witnesses 0 --out u1
usage "unknown curve 'bn256'" --dev --curve bn256 --constraints 10 --witnesses 1 --out u1
usage "--curve is required" --dev --constraints 10 --witnesses 1 --out u1
usage "--out DIR is required" --dev --curve bn254 --constraints 10 --witnesses 1
echo x >a-file
usage "cannot create the output directory" --dev --curve bn254 --constraints 10 --witnesses 1 --out a-file/sub
usage "exists and is not a directory" --dev --curve bn254 --constraints 10 --witnesses 1 --out a-file
mkdir full && echo x >full/keep
usage "not empty" --dev --curve bn254 --constraints 10 --witnesses 1 --out full
usage "--backend" --dev --curve bn254 --constraints 10 --witnesses 1 --backend tpu --out u1
[ ! -e u1 ] || fail "a refused setup created u1"

for curve in bn254 bls12_381; do
  dir=$curve
  "$proofline" setup --dev --curve "$curve" --constraints 200 --witnesses 3 --public 2 \
    --seed 12 --threads 2 --out "$dir" >"setup-$curve.log" 2>&1 ||
    { cat "setup-$curve.log" >&2; fail "setup --curve $curve failed"; }
  grep -q "INSECURE" "setup-$curve.log" || fail "setup --curve $curve: no INSECURE warning in the log"
  grep -q "INSECURE" "$dir/README.txt" || fail "$dir/README.txt does not say INSECURE"
  grep -q "setup backend: .*--backend auto" "setup-$curve.log" ||
    { cat "setup-$curve.log" >&2; fail "setup --curve $curve: the log does not say which backend and why"; }
  grep -q "key: fixed-base products on " "setup-$curve.log" ||
    fail "setup --curve $curve: the log does not say what computed the products"

  # The same seed on the CPU: the same key, byte for byte.
  "$proofline" setup --dev --curve "$curve" --constraints 200 --witnesses 1 --public 2 \
    --seed 12 --threads 2 --backend cpu --out "$dir-cpu" >"setup-$curve-cpu.log" 2>&1 ||
    { cat "setup-$curve-cpu.log" >&2; fail "setup --curve $curve --backend cpu failed"; }
  grep -q "setup backend: CPU (--backend cpu)" "setup-$curve-cpu.log" ||
    fail "setup --backend cpu: the log does not say CPU"
  cmp "$dir/circuit.zkey" "$dir-cpu/circuit.zkey" ||
    fail "$curve: --backend cpu and $(grep -o 'setup backend: [^;]*' "setup-$curve.log") wrote different keys"
  if grep -q "setup backend: CPU; --backend auto found no usable CUDA device" "setup-$curve.log"; then
    usage "--backend cuda: no usable CUDA device" --dev --curve "$curve" --constraints 10 \
      --witnesses 1 --backend cuda --out "$dir-cuda"
    [ ! -e "$dir-cuda" ] || fail "a refused --backend cuda setup created $dir-cuda"
  fi

  "$snarkjs" zkey export verificationkey "$dir/circuit.zkey" "$dir/exported.json" >/dev/null
  python3 - "$dir/verification_key.json" "$dir/exported.json" <<'EOF' || fail "$curve: verification keys differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF

  "$proofline" run "$dir/jobs.json" --backend cpu --cpu-threads 2 >"run-$curve.log" 2>&1 ||
    { cat "run-$curve.log" >&2; fail "proofline run $dir/jobs.json failed"; }
  "$repo/scripts/verify-proofs.sh" "$dir/verification_key.json" "$dir/out" ||
    fail "snarkjs rejected a proof of $dir"
  [ "$(ls "$dir"/out/proof_*.json | wc -l)" -eq 3 ] || fail "$dir/out: expected 3 proofs"

  # One H point replaced by the next one: still a valid key, wrong proofs.
  bad=$curve-tampered
  mkdir "$bad"
  cp "$dir"/*.wtns "$dir/jobs.json" "$bad/"
  python3 - "$dir/circuit.zkey" "$bad/circuit.zkey" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
n8q = None  # from section 2, which setup writes before section 9
pos = 12
for _ in range(struct.unpack_from("<I", data, 8)[0]):
    sid, size = struct.unpack_from("<IQ", data, pos)
    pos += 12
    if sid == 2:
        n8q = struct.unpack_from("<I", data, pos)[0]
    if sid == 9:
        point = 2 * n8q
        data[pos:pos + point] = data[pos + point:pos + 2 * point]
        break
    pos += size
open(sys.argv[2], "wb").write(data)
EOF
  # The self-check refuses to write them: the job fails, naming the check.
  if "$proofline" run "$bad/jobs.json" --backend cpu --cpu-threads 2 >"run-$bad.log" 2>&1; then
    cat "run-$bad.log" >&2
    fail "proofline run $bad/jobs.json succeeded although its proofs cannot verify"
  fi
  grep -q "failed its pairing check" "run-$bad.log" ||
    { cat "run-$bad.log" >&2; fail "$bad: the failure does not name the pairing check"; }
  ! compgen -G "$bad/out/proof_*.json" >/dev/null || fail "$bad: a proof was written"
  # Unchecked (--no-verify), they are written, and snarkjs rejects every one.
  "$proofline" run "$bad/jobs.json" --backend cpu --cpu-threads 2 --no-verify >"run-$bad.log" 2>&1 ||
    { cat "run-$bad.log" >&2; fail "proofline run --no-verify $bad/jobs.json failed"; }
  if "$repo/scripts/verify-proofs.sh" "$dir/verification_key.json" "$bad/out" >"verify-$bad.log" 2>&1; then
    cat "verify-$bad.log" >&2
    fail "proofs from a key with a tampered H point verified"
  fi
  [ "$(grep -c "Invalid proof" "verify-$bad.log")" -eq 3 ] ||
    { cat "verify-$bad.log" >&2; fail "$bad: expected 3 proofs rejected as invalid"; }
  echo "ok: $curve: proofs verify; a tampered H point makes the self-check refuse them, and snarkjs too"
done
echo "PASS: setup_run"
