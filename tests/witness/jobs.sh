#!/usr/bin/env bash
# Jobs that name inputs: `proofline run` with "witness_generator" and
# "input"/"inputs", `prove --input --witness-generator` and `fullprove`:
#   1. synthesizers compute the witnesses; every proof verifies with snarkjs;
#      --keep-witness writes witnesses identical to snarkjs's, and without it
#      none is written; result.json, --report and --trace show the witness
#      span, and the summary its line;
#   2. an input that breaks the circuit's assert fails its partition with
#      circom's message and the file's name, the job's other partitions and
#      the other jobs go on; a missing signal names it; a generator of
#      another circuit (BLS12-381 against a BN254 key) fails its job naming both;
#   3. schema: "input" without "witness_generator", "witness" beside it;
#   4. prove --input and fullprove give verified proofs; bad input exits 2;
#   5. serve --state killed with SIGKILL after accepting a job of inputs
#      finishes it from its inputs after the restart (the journal keeps its
#      generator), every proof verified by snarkjs;
#   6. inputs everywhere a witness goes: libproofline's proofline_prove_input
#      (through the Python package; PROOFLINE_LIBRARY names the library),
#      POST /v1/prove?witness_generator= with an input.json body, and
#      `submit --inline` of a job of inputs, each proof verified by snarkjs
#      and each refusal naming the signal, the generator or the field.
#
#   jobs.sh PROOFLINE REPO_ROOT WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fx=$repo/tests/fixtures
med=$fx/bn254/medium

compile_circom "$fx/circuits/medium.circom" medium gen --no_asm
compile_circom "$fx/circuits/small.circom" small bls -p bls12381 --no_asm
"$proofline" witness build gen/medium_cpp -o medium.so -j 2 2>build.log || { cat build.log >&2; fail "build"; }
"$proofline" witness build bls/small_cpp -o small.so -j 2 2>build-bls.log || { cat build-bls.log >&2; fail "build bls"; }

python3 - "$med" <<'PY'
import json, sys
med = sys.argv[1]
base = json.load(open(f"{med}/input_0.json"))
bad = dict(base, data=["0"] + base["data"][1:])
json.dump(bad, open("assert.json", "w"))
missing = dict(base); del missing["limit"]
json.dump(missing, open("missing.json", "w"))
json.dump({"jobs": [
  {"id": "many", "zkey": f"{med}/circuit.zkey", "witness_generator": "medium.so",
   "inputs": [f"{med}/input_0.json", f"{med}/input_1.json", "assert.json", f"{med}/input_2.json"],
   "out": "out/many"},
  {"id": "one", "zkey": f"{med}/circuit.zkey", "witness_generator": "medium.so",
   "input": f"{med}/input_1.json", "out": "out/one"},
  {"id": "missing", "zkey": f"{med}/circuit.zkey", "witness_generator": "medium.so",
   "input": "missing.json", "out": "out/missing"},
  {"id": "other", "zkey": f"{med}/circuit.zkey", "witness_generator": "small.so",
   "input": f"{med}/input_0.json", "out": "out/other"},
]}, open("jobs.json", "w"))
json.dump({"jobs": [{"id": "x", "zkey": "k.zkey", "input": "i.json", "out": "o"}]}, open("no_gen.json", "w"))
json.dump({"jobs": [{"id": "x", "zkey": "k.zkey", "witness_generator": "medium.so",
                     "witness": "w.wtns", "out": "o"}]}, open("both.json", "w"))
PY

set +e
"$proofline" run jobs.json --backend cpu --cpu-threads 2 --synthesizers 2 --keep-witness \
  --report report.json --trace trace.json >run.log 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat run.log >&2; fail "run exited $rc, expected 1 (some jobs fail)"; }
for i in 0 1 3; do
  "$snarkjs" groth16 verify "$med/verification_key.json" "out/many/public_$i.json" "out/many/proof_$i.json" >/dev/null ||
    fail "snarkjs rejects out/many/proof_$i.json"
done
"$snarkjs" groth16 verify "$med/verification_key.json" out/one/public.json out/one/proof.json >/dev/null ||
  fail "snarkjs rejects out/one/proof.json"
cmp -s out/many/public_1.json "$med/public_1.json" || fail "public signals of input_1 differ from the fixture's"
for i in 0 1 3; do
  src=$med/input_$((i == 3 ? 2 : i)).json  # partition 2 is assert.json
  "$snarkjs" wtns calculate gen/medium_js/medium.wasm "$src" "sj-$i.wtns" >/dev/null
  cmp -s "out/many/witness_$i.wtns" "sj-$i.wtns" || fail "--keep-witness: witness_$i.wtns differs from snarkjs's"
done
[ -f out/one/witness.wtns ] || fail "--keep-witness wrote no out/one/witness.wtns"
[ ! -e out/many/witness_2.wtns ] || fail "a failed input left a witness"
echo "ok: run: proofs verified by snarkjs, kept witnesses byte-identical to snarkjs's"

python3 - <<'PY' || fail "result.json / report / trace"
import json, sys
r = json.load(open("out/many/result.json"))
st = [p["status"] for p in r["partitions"]]
assert st == ["done", "done", "failed", "done"], st
err = r["partitions"][2]["error"]
assert err["file"] == "assert.json", err
assert "assert.json: the circuit rejects the input (medium.so): Failed assert in template/function Medium" in err["message"], err
for p in (p for p in r["partitions"] if p["status"] == "done"):
    s = p["spans_ms"]
    assert "witness" in s, s
    assert s["synthesize"][0] <= s["witness"][0] <= s["witness"][1] <= s["synthesize"][1], s
m = json.load(open("out/missing/result.json"))
assert m["status"] == "failed" and 'input signal "limit" not given' in m["error"]["message"], m["error"]
o = json.load(open("out/other/result.json"))
msg = o["error"]["message"]
assert "small.so computes witnesses over BLS12-381" in msg and "a circuit over BN254" in msg, msg
rep = json.load(open("report.json"))
assert rep["stages"]["witness"]["count"] == 4, rep["stages"]  # the witnesses computed
t = json.load(open("trace.json"))
events = t["traceEvents"] if isinstance(t, dict) else t
assert any(e.get("cat") == "witness" or e.get("name", "").startswith("witness") for e in events), "no witness span in the trace"
PY
grep -q "^witness generation: 4 witnesses" run.log || { cat run.log >&2; fail "no witness generation line in the summary"; }
echo "ok: errors name the input; spans in result.json, report and trace; summary line"

rm -rf out2 && mkdir out2
sed 's#"out/#"out2/#g' jobs.json >jobs2.json
"$proofline" run jobs2.json --backend cpu --cpu-threads 2 --quiet >/dev/null 2>&1 || true
! ls out2/*/witness*.wtns >/dev/null 2>&1 || fail "without --keep-witness a witness was written"
echo "ok: no witness written without --keep-witness"

for f in no_gen both; do
  set +e
  "$proofline" run "$f.json" --backend cpu >"$f.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$f.log" >&2; fail "$f.json: exit $rc, expected 2"; }
done
grep -q 'field "input" needs "witness_generator"' no_gen.log || { cat no_gen.log >&2; fail "no_gen message"; }
grep -q 'field "witness" beside "witness_generator"' both.log || { cat both.log >&2; fail "both message"; }
echo "ok: schema errors"

"$proofline" prove --input "$med/input_2.json" --witness-generator medium.so "$med/circuit.zkey" p.json pub.json \
  --backend cpu --cpu-threads 2 -q || fail "prove --input failed"
"$snarkjs" groth16 verify "$med/verification_key.json" pub.json p.json >/dev/null || fail "snarkjs rejects prove --input's proof"
"$proofline" fullprove "$med/input_0.json" medium.so "$med/circuit.zkey" fp.json fpub.json \
  --backend cpu --cpu-threads 2 -q || fail "fullprove failed"
"$snarkjs" groth16 verify "$med/verification_key.json" fpub.json fp.json >/dev/null || fail "snarkjs rejects fullprove's proof"
set +e
"$proofline" fullprove missing.json medium.so "$med/circuit.zkey" fp2.json fpub2.json --backend cpu >fp2.log 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q 'missing.json: input signal "limit" not given' fp2.log || { cat fp2.log >&2; fail "fullprove missing.json: rc $rc"; }
[ ! -e fp2.json ] || fail "a refused fullprove wrote fp2.json"
echo "ok: prove --input and fullprove verified by snarkjs; bad input exits 2"
# ---- 5. a job of inputs accepted by serve --state survives kill -9
export PROOFLINE_TLS_DIR=$PWD/tls TMPDIR=$PWD/tmp
mkdir -p "$TMPDIR"
python3 - "$med" "$PWD" <<'PY'
import json, sys
med, here = sys.argv[1], sys.argv[2]
json.dump({"jobs": [{"id": "kept", "zkey": f"{med}/circuit.zkey", "witness_generator": f"{here}/medium.so",
                     "inputs": [f"{med}/input_{i % 3}.json" for i in range(6)], "out": f"{here}/out/kept"}]},
          open("kept.json", "w"))
PY
serve_bg() {
  : >"$1.out"
  "$proofline" serve --listen 127.0.0.1:0 --allow-root "$PWD" --allow-root "$med" --state "$PWD/state" \
    --backend cpu --cpu-threads 1 --synthesizers 1 --finalizers 1 >"$1.out" 2>"$1.err" &
  serve_pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$1.out")
    [ -n "$port" ] && return 0
    sleep 0.1
  done
  cat "$1.err" >&2
  fail "serve did not listen within 10 s"
}
trap '[ -n "${serve_pid:-}" ] && kill -9 "$serve_pid" 2>/dev/null; true' EXIT
serve_bg first
"$proofline" submit --connect "127.0.0.1:$port" --no-wait kept.json >submit.log 2>&1 ||
  { cat submit.log first.err >&2; fail "submit of the job of inputs"; }
kill -9 "$serve_pid"  # accepted means journaled: the job is in the state directory
wait "$serve_pid" 2>/dev/null || true
[ ! -f out/kept/result.json ] || fail "the job finished before the kill; nothing to test"
serve_bg second
set +e
timeout 300 "$proofline" await --connect "127.0.0.1:$port" kept >await.log 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat await.log second.err >&2; fail "await kept after the restart: exit $rc"; }
for i in 0 1 2 3 4 5; do
  "$snarkjs" groth16 verify "$med/verification_key.json" "out/kept/public_$i.json" "out/kept/proof_$i.json" >/dev/null ||
    fail "snarkjs rejects out/kept/proof_$i.json after the restart"
done
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true
serve_pid=
echo "ok: a job of inputs accepted before kill -9 finished after the restart, proofs verified"
# ---- 6. inputs through the library, POST /v1/prove and submit --inline
if [ -n "${PROOFLINE_LIBRARY:-}" ]; then
  PROOFLINE_OPTIONS='{"backend": "cpu", "cpu-threads": 2, "memory-budget": "2G"}' \
  PYTHONPATH=$repo/python python3 - "$med" "$PWD" <<'PY' || fail "the library from inputs"
import json, subprocess, sys
from proofline import Prover, InputError
med, here = sys.argv[1], sys.argv[2]
prover = Prover(f"{med}/circuit.zkey")
proof, public = prover.prove_input(f"{here}/medium.so", json.load(open(f"{med}/input_2.json")))
json.dump(proof, open("lib-proof.json", "w")); json.dump(public, open("lib-public.json", "w"))
# input.json text in, relative generator path, as a program would pass them
proof, public = prover.prove_input_json("medium.so", open(f"{med}/input_0.json").read())
open("lib0-proof.json", "w").write(proof); open("lib0-public.json", "w").write(public)
def refused(gen, inputs, text):
    try:
        prover.prove_input(gen, inputs)
    except InputError as e:
        assert text in str(e), (text, str(e))
        print("ok: library refuses:", str(e).splitlines()[0])
        return
    raise AssertionError(f"{gen} {inputs}: proved, expected an InputError with {text!r}")
refused("medium.so", json.load(open("missing.json")), 'input signal "limit" not given')
refused("medium.so", json.load(open("assert.json")), "Failed assert in template/function Medium")
refused("small.so", json.load(open(f"{med}/input_0.json")), "small.so computes witnesses over BLS12-381")
refused("no-such.so", {}, "no-such.so")
prover.close()
PY
  for t in lib lib0; do
    "$snarkjs" groth16 verify "$med/verification_key.json" "$t-public.json" "$t-proof.json" >/dev/null ||
      fail "snarkjs rejects the library's proof from inputs ($t)"
  done
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
    lib-public.json "$med/public_2.json" || fail "the library's public signals of input_2 differ from the fixture's"
  echo "ok: library: proofs from inputs verified by snarkjs; bad inputs and generators refused as input errors"
else
  echo "SKIP: the library part (PROOFLINE_LIBRARY is not set)"
fi

: >http.out
"$proofline" serve --insecure --listen 127.0.0.1:0 --http 127.0.0.1:0 --allow-root "$PWD" --allow-root "$med" \
  --backend cpu --cpu-threads 2 --synthesizers 2 >http.out 2>http.err &
serve_pid=$!
for _ in $(seq 100); do grep -q "http on http://" http.out && break; sleep 0.1; done
url=$(sed -n 's/.*http on //p' http.out)
port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' http.out)
[ -n "$url" ] && [ -n "$port" ] || { cat http.out http.err >&2; fail "serve --http did not start"; }
python3 - "$url" "$med" "$PWD" <<'PY' || { tail -20 http.err >&2; fail "POST /v1/prove with an input.json"; }
import json, sys, urllib.error, urllib.parse, urllib.request
url, med, here = sys.argv[1:4]
def post(gen, body, key=f"{med}/circuit.zkey"):
    q = {"key": key}
    if gen is not None:
        q["witness_generator"] = gen
    req = urllib.request.Request(f"{url}/v1/prove?{urllib.parse.urlencode(q)}", data=body,
                                 method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
st, a = post(f"{here}/medium.so", open(f"{med}/input_1.json", "rb").read())
assert st == 200, (st, a)
json.dump(a["proof"], open("http-proof.json", "w")); json.dump(a["public_signals"], open("http-public.json", "w"))
def refused(status, code, text, gen, body):
    st, a = post(gen, body)
    assert st == status and a["error"]["code"] == code and text in a["error"]["message"], (st, a, text)
    print(f"ok: {status} {code}: {a['error']['message'].splitlines()[0]}")
refused(422, "input_rejected", 'input signal "limit" not given', f"{here}/medium.so", open("missing.json", "rb").read())
refused(422, "input_rejected", "Failed assert", f"{here}/medium.so", open("assert.json", "rb").read())
refused(422, "witness_mismatch", "small.so computes witnesses over BLS12-381", f"{here}/small.so",
        open(f"{med}/input_0.json", "rb").read())
refused(400, "bad_request", "an input.json is a JSON object", f"{here}/medium.so", b"[1, 2]")
refused(400, "bad_request", "witness_generator", None, open(f"{med}/input_0.json", "rb").read())
refused(400, "bad_request", "absolute path", "medium.so", b"{}")
refused(403, "forbidden", "witness_generator", "/usr/lib/x.so", b"{}")
refused(404, "not_found", "no such file", f"{here}/none.so", b"{}")
# A generator rebuilt in place (a new file under the same name, as `witness
# build -o` writes it) is loaded anew: first the BLS12-381 one, then the BN254 one.
import os, shutil
shutil.copy(f"{here}/small.so", f"{here}/swap.tmp"); os.replace(f"{here}/swap.tmp", f"{here}/swap.so")
refused(422, "witness_mismatch", "computes witnesses over BLS12-381", f"{here}/swap.so",
        open(f"{med}/input_0.json", "rb").read())
shutil.copy(f"{here}/medium.so", f"{here}/swap.tmp"); os.replace(f"{here}/swap.tmp", f"{here}/swap.so")
st, a = post(f"{here}/swap.so", open(f"{med}/input_0.json", "rb").read())
assert st == 200, (st, a)
print("ok: a generator replaced under its name is loaded anew")
PY
"$snarkjs" groth16 verify "$med/verification_key.json" http-public.json http-proof.json >/dev/null ||
  fail "snarkjs rejects the proof of POST /v1/prove from an input.json"
echo "ok: POST /v1/prove with an input.json: proof verified by snarkjs; refusals name the field"

# submit --inline: the inputs travel with the submission, the generator is the server's.
mkdir -p client && cp "$med/input_0.json" "$med/input_2.json" missing.json client/
cat >client/jobs.json <<JSON
{"jobs": [
  {"id": "inl", "zkey": "$med/circuit.zkey", "witness_generator": "$PWD/medium.so",
   "inputs": ["input_0.json", "input_2.json"], "out": "$PWD/out/inl"},
  {"id": "inl-missing", "zkey": "$med/circuit.zkey", "witness_generator": "$PWD/medium.so",
   "input": "missing.json", "out": "$PWD/out/inl-missing"}
]}
JSON
set +e
(cd client && "$proofline" submit --insecure --connect "127.0.0.1:$port" --inline jobs.json) >inline.log 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat inline.log >&2; fail "submit --inline of inputs exited $rc, expected 1 (one job fails)"; }
for i in 0 1; do
  "$snarkjs" groth16 verify "$med/verification_key.json" "out/inl/public_$i.json" "out/inl/proof_$i.json" >/dev/null ||
    fail "snarkjs rejects out/inl/proof_$i.json of submit --inline"
done
cmp -s out/inl/public_1.json "$med/public_2.json" || fail "submit --inline: public signals of input_2 differ"
python3 - <<'PY' || { cat inline.log >&2; fail "submit --inline: the failed input is not named"; }
import json
m = json.load(open("out/inl-missing/result.json"))["error"]["message"]
assert 'input signal "limit" not given' in m and "missing.json" in m, m
print("ok: submit --inline: the refused input named:", m.splitlines()[0])
PY
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true
serve_pid=
echo "ok: submit --inline of inputs: proofs verified by snarkjs"
echo "jobs: all checks passed"
