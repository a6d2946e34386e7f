#!/usr/bin/env bash
# Every proof is checked by pairing before it is written; `proofline verify`
# agrees with snarkjs.
#  * verify: every fixture's snarkjs proof is valid (exit 0, --json too);
#    tampered proofs, public signals and keys exit 1, as snarkjs rejects them;
#    unreadable input exits 2, and so do arguments out of order, each
#    misplaced one named by what it looks like.
#  * a backlog on the CPU backend with injected faults (a corrupted proof, a
#    backend error) ends with every proof written, verified and accepted by
#    snarkjs, the retries counted in result.json;
#  * a backend that corrupts every proof fails the job, naming the partition,
#    and writes no proof;
#  * --no-verify writes proofs unchecked (verified: false).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- proofline verify against snarkjs
snarkjs_ok() { "$snarkjs" groth16 verify "$1" "$2" "$3" >/dev/null 2>&1; }
expect_verify() {  # WANT KEY PUBLIC PROOF
  local want=$1 rc
  shift
  set +e
  "$proofline" verify "$@" >verify.out 2>&1
  rc=$?
  set -e
  [ "$rc" -eq "$want" ] || { cat verify.out >&2; fail "proofline verify $* exited $rc, expected $want"; }
}
for dir in "$fixtures"/bn254/* "$fixtures"/bls12_381/*; do
  [ -f "$dir/snarkjs_proof_0.json" ] || continue
  expect_verify 0 "$dir/verification_key.json" "$dir/public_0.json" "$dir/snarkjs_proof_0.json"
  grep -q "valid" verify.out || fail "no 'valid' in: $(cat verify.out)"
  expect_verify 0 "$dir/circuit.zkey" "$dir/public_0.json" "$dir/snarkjs_proof_0.json"
done

bn=$fixtures/bn254/small
"$proofline" verify --json "$bn/verification_key.json" "$bn/public_0.json" "$bn/snarkjs_proof_0.json" >v.json
python3 - v.json <<'PY' || fail "verify --json output"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["valid"] is True and j["curve"] == "bn254" and j["public_signals"] == 5, j
assert isinstance(j["verify_ms"], float) and j["verify_ms"] > 0, j
# The fields the README lists, every one present, reason null when valid.
assert set(j) == {"proof", "public", "key", "valid", "curve", "public_signals", "verify_ms", "reason"}, j
assert j["reason"] is None, j
PY

# Tampered files: proofline says invalid (exit 1) and so does snarkjs.
python3 - "$bn" <<'PY'
import json, sys
d = sys.argv[1]
proof = json.load(open(f"{d}/snarkjs_proof_0.json"))
pub = json.load(open(f"{d}/public_0.json"))
vk = json.load(open(f"{d}/verification_key.json"))
def dump(name, obj):
    json.dump(obj, open(name, "w"))
p = dict(proof); p["pi_a"], p["pi_c"] = proof["pi_c"], proof["pi_a"]; dump("swapped.json", p)
q = 21888242871839275222246405745257275088696311157297823662689037894645226208583
p = dict(proof); p["pi_a"] = [proof["pi_a"][0], str(q - int(proof["pi_a"][1])), "1"]; dump("negated.json", p)
p = dict(proof); p["pi_c"] = [proof["pi_c"][0], str(int(proof["pi_c"][1]) + 1), "1"]; dump("offcurve.json", p)
dump("public_bad.json", [str(int(pub[0]) + 1)] + pub[1:])
k = dict(vk); k["vk_gamma_2"], k["vk_delta_2"] = vk["vk_delta_2"], vk["vk_gamma_2"]; dump("vk_bad.json", k)
PY
for bad in "$bn/verification_key.json $bn/public_0.json swapped.json" \
           "$bn/verification_key.json $bn/public_0.json negated.json" \
           "$bn/verification_key.json $bn/public_0.json offcurve.json" \
           "$bn/verification_key.json public_bad.json $bn/snarkjs_proof_0.json" \
           "vk_bad.json $bn/public_0.json $bn/snarkjs_proof_0.json"; do
  # shellcheck disable=SC2086
  expect_verify 1 $bad
  grep -q "INVALID" verify.out || fail "no reason printed for $bad: $(cat verify.out)"
  # shellcheck disable=SC2086
  if snarkjs_ok $bad; then fail "snarkjs accepts what proofline rejects: $bad"; fi
done
expect_verify 2 "$bn/verification_key.json" "$bn/public_0.json" missing.json
grep -q "missing.json" verify.out || fail "the missing file is not named: $(cat verify.out)"
echo '{"pi_a": 1}' >garbage.json
expect_verify 2 "$bn/verification_key.json" "$bn/public_0.json" garbage.json
# Arguments in the wrong order: each misplaced one is named by what it looks like.
expect_verify 2 "$bn/snarkjs_proof_0.json" "$bn/public_0.json" "$bn/verification_key.json"
grep -qF "argument 1 ($bn/snarkjs_proof_0.json) looks like a proof (has pi_a), argument 3 ($bn/verification_key.json) looks like a verification key (has vk_alpha_1); the order is KEY PUBLIC PROOF" verify.out ||
  fail "swapped key and proof not named: $(cat verify.out)"
expect_verify 2 "$bn/verification_key.json" "$bn/snarkjs_proof_0.json" "$bn/public_0.json"
grep -qF "argument 2 ($bn/snarkjs_proof_0.json) looks like a proof (has pi_a), argument 3 ($bn/public_0.json) looks like public signals (a JSON array)" verify.out ||
  fail "swapped public and proof not named: $(cat verify.out)"
expect_verify 2 "$bn/public_0.json" "$bn/circuit.zkey" "$bn/snarkjs_proof_0.json"
grep -qF "argument 1 ($bn/public_0.json) looks like public signals (a JSON array), argument 2 ($bn/circuit.zkey) looks like a verification key (a .zkey's header)" verify.out ||
  fail "swapped key and public not named: $(cat verify.out)"
"$proofline" verify --json "$bn/snarkjs_proof_0.json" "$bn/public_0.json" "$bn/verification_key.json" >swapped.out || true
[ "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["valid"], "out of order" in j["error"])' swapped.out)" = "False True" ] ||
  fail "verify --json with swapped arguments: $(cat swapped.out)"

# ---- self-check and retries on the CPU backend
stage bn254 small bn
cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "backlog", "zkey": "in/bn.zkey",
   "witnesses": ["in/bn_0.wtns", "in/bn_1.wtns", "in/bn_2.wtns", "in/bn_3.wtns",
                 "in/bn_0.wtns", "in/bn_1.wtns"],
   "out": "out/backlog"}
]}
JSON
# Calls 2 and 3 fail; the scheduler hands partitions out in grant order, so
# call 3 is partition 2 and the retries come later, where no fault is set.
PROOFLINE_FAULT_INJECT=corrupt:2,throw:3 prove faults 0 run jobs.json --backend cpu
grep -q "pairing check" faults.log || fail "no failed pairing check logged (faults.log)"
grep -q "proving it again" faults.log || fail "no retry logged (faults.log)"
python3 - out/backlog/result.json <<'PY' || fail "result.json of the faulty backlog"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "done", r
parts = r["partitions"]
assert len(parts) == 6
assert all(p["status"] == "done" and p["verified"] is True and p["verify_ms"] > 0 for p in parts), parts
retries = sum(p["retries"] for p in parts)
assert retries == 2, f"{retries} retries counted, expected 2: {parts}"
PY
verify "$bn/verification_key.json" out/backlog

cat >broken.json <<'JSON'
{"jobs": [{"id": "broken", "zkey": "in/bn.zkey", "witness": "in/bn_0.wtns", "out": "out/broken"}]}
JSON
PROOFLINE_FAULT_INJECT=corrupt:all prove broken 1 run broken.json --backend cpu
[ ! -e out/broken/proof.json ] || fail "a proof that failed its check was written"
python3 - out/broken/result.json <<'PY' || fail "result.json of the broken job"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed", r
p = r["partitions"][0]
assert p["status"] == "failed" and p["retries"] == 1 and p["verified"] is False, p
msg = p["error"]["message"]
assert "partition 0" in msg and "pairing check" in msg and "backend" in msg, msg
PY

prove unchecked 0 run broken.json --backend cpu --no-verify
python3 - out/broken/result.json <<'PY' || fail "result.json with --no-verify"
import json, sys
p = json.load(open(sys.argv[1]))["partitions"][0]
assert p["status"] == "done" and p["verified"] is False and p["retries"] == 0, p
PY
verify "$bn/verification_key.json" out/broken
echo "PASS: self_check"
