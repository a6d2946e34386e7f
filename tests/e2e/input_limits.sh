#!/usr/bin/env bash
# Untrusted input is refused by its size and nesting while it is read, not
# after: JSON bombs (nesting without end, files larger than any real one,
# arrays of millions of values) given to `verify` (key, public, proof), to
# `run` (the job file, --config), a witness on `prove`'s standard input that
# is not one or is longer than the key's witness can be, and `submit
# --inline` with witnesses over 1 GiB. Each exits 2 naming the file, within
# seconds and without the memory the bomb asks for (peak RSS under a bound).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

small=$fixtures/bn254/small
cp "$small/circuit.zkey" k.zkey
cp "$small/witness_0.wtns" w.wtns

# bounded LABEL WANT_RC MAX_MB SHELL_CMD: runs SHELL_CMD under sh with its
# output in LABEL.log; fails unless it exits WANT_RC within 60 s with a peak
# resident set (its largest process) under MAX_MB MiB.
bounded() {
  local label=$1 want=$2 max_mb=$3 cmd=$4
  echo "+ $cmd"
  python3 - "$label" "$want" "$max_mb" "$cmd" <<'PY' || fail "$label: see above"
import os, resource, signal, subprocess, sys, time
label, want, max_mb, cmd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t0 = time.monotonic()
with open(label + ".log", "wb") as log:
    p = subprocess.Popen(["sh", "-c", cmd], stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        rc = "a timeout"
secs = time.monotonic() - t0
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"  {label}: exit {rc}, {secs:.1f} s, peak RSS {peak:.0f} MiB")
problems = []
if rc != want:
    problems.append(f"exited {rc}, expected {want}")
if peak > max_mb:
    problems.append(f"peak RSS {peak:.0f} MiB, more than {max_mb}")
if problems:
    sys.stderr.write("".join("  | " + l for l in open(label + ".log", errors="replace").readlines()[-15:]))
    sys.exit(f"FAIL: {label}: " + "; ".join(problems))
PY
}

# bomb FILE BYTES CHAR: FILE holds BYTES copies of CHAR.
bomb() { head -c "$2" /dev/zero | tr '\0' "$3" >"$1"; }

# ---- verify: the key, the public signals and the proof
bomb deep.json 16000000 '['
bounded vk-deep 2 150 "'$proofline' verify deep.json '$small/public_0.json' '$small/snarkjs_proof_0.json'"
log_names vk-deep "deep.json" "nested deeper than"
bounded public-deep 2 150 "'$proofline' verify '$small/verification_key.json' deep.json '$small/snarkjs_proof_0.json'"
log_names public-deep "deep.json"
bounded proof-deep 2 150 "'$proofline' verify '$small/verification_key.json' '$small/public_0.json' deep.json"
log_names proof-deep "deep.json"
# Larger than any verification key (sparse after its first byte: no disk is used).
printf '{' >huge.json
truncate -s 300M huge.json
bounded vk-huge 2 150 "'$proofline' verify huge.json '$small/public_0.json' '$small/snarkjs_proof_0.json'"
log_names vk-huge "huge.json" "more than"
# An IC array of millions of values, within the size limit.
python3 -c '
import sys
sys.stdout.write("{\"protocol\": \"groth16\", \"curve\": \"bn128\", \"nPublic\": 1, \"IC\": [" + "1," * 12000000 + "1]}")' >values.json
bounded vk-values 2 150 "'$proofline' verify values.json '$small/public_0.json' '$small/snarkjs_proof_0.json'"
log_names vk-values "values.json" "values"

# ---- run: the job file and --config
bounded jobs-deep 2 150 "'$proofline' run deep.json --backend cpu"
log_names jobs-deep "deep.json" "nested deeper than"
python3 -c '
import sys
sys.stdout.write("{\"jobs\": [{\"id\": \"a\", \"zkey\": \"k.zkey\", \"out\": \"out/a\", \"witnesses\": [" + "1," * 12000000 + "1]}]}")' >many.json
bounded jobs-values 2 150 "'$proofline' run many.json --backend cpu"
log_names jobs-values "many.json" "values"
[ ! -e out ] || fail "a refused job file wrote outputs: $(find out | head -3)"
bounded config-huge 2 150 "'$proofline' run --config deep.json --backend cpu"
log_names config-huge "deep.json" "more than"
bomb config-deep.json 500000 '['
bounded config-deep 2 150 "'$proofline' run --config config-deep.json --backend cpu"
log_names config-deep "config-deep.json" "nested deeper than"

# ---- prove: a witness on standard input, checked as it arrives
bounded stdin-zeros 2 150 "head -c 300M /dev/zero | '$proofline' prove k.zkey - p.json q.json --backend cpu"
log_names stdin-zeros "standard input" "not a wtns file"
bounded stdin-long 2 150 "{ cat w.wtns; head -c 300M /dev/zero; } | '$proofline' prove k.zkey - p.json q.json --backend cpu"
log_names stdin-long "standard input" "more than"
[ ! -e p.json ] && [ ! -e q.json ] || fail "prove wrote outputs for a refused witness"
# A witness of the right length still proves from standard input.
mkdir ok
bounded stdin-ok 0 400 "'$proofline' prove k.zkey - ok/proof.json ok/public.json --backend cpu <w.wtns"
verify "$small/verification_key.json" ok

# ---- submit --inline: the witnesses' sizes are checked before any is read
truncate -s 1100M big.wtns
cat >inline.json <<EOF
{"jobs": [{"id": "big", "zkey": "$work/k.zkey", "witness": "$work/big.wtns", "out": "$work/out/big"}]}
EOF
bounded inline-huge 2 150 "'$proofline' submit --inline inline.json --connect 127.0.0.1:1 --connect-timeout 1"
log_names inline-huge "big.wtns" "1 GiB"
truncate -s 600M half_0.wtns
truncate -s 600M half_1.wtns
cat >inline2.json <<EOF
{"jobs": [{"id": "halves", "zkey": "$work/k.zkey", "witnesses": ["$work/half_0.wtns", "$work/half_1.wtns"], "out": "$work/out/halves"}]}
EOF
bounded inline-sum 2 150 "'$proofline' submit --inline inline2.json --connect 127.0.0.1:1 --connect-timeout 1"
log_names inline-sum "half_1.wtns" "1 GiB"
echo "PASS: input limits"
