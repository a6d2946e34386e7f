#!/usr/bin/env bash
# Regenerates proofline's test fixtures and the bundled example from the
# circom sources in tests/fixtures/circuits/, with the repository's own
# node_modules tools (circom2 = circom 2 as wasm, snarkjs 0.7.6).
#
#   scripts/make-fixtures.sh           # bring everything up to date
#   scripts/make-fixtures.sh --force   # also redo the trusted setups
#
# Makes, for each of bn254/small (4 witnesses), bn254/medium (3) and
# bls12_381/small (4), under tests/fixtures/<curve>/<circuit>/:
#   circuit.circom          copy of tests/fixtures/circuits/<circuit>.circom
#   circuit.zkey            Groth16 proving key: local powers of tau sized to
#                           the circuit, groth16 setup, one zkey contribution
#   verification_key.json   snarkjs zkey export verificationkey
#   input_<i>.json          circuit inputs
#   witness_<i>.wtns        snarkjs wtns calculate, checked with wtns check
#   public_<i>.json         public signals as snarkjs groth16 prove writes them
#   snarkjs_proof_0.json    a snarkjs groth16 proof for witness_0
#   info.json               circuit sizes, domain, r1cs hash (the key stamp)
# plus tests/fixtures/constants/{bn254,bls12_381}.json
# (scripts/dump-snarkjs-constants.js) and examples/ (a copy of bn254/medium's
# key with 4 witnesses of its own and jobs.json).
#
# Determinism: circom output, inputs, witnesses and public signals are
# identical on every run. snarkjs's `contribute` mixes 64 bytes from the OS
# into the given entropy, so keys cannot be reproduced bit for bit; the script
# therefore keeps a circuit's zkey and verification key while info.json's
# r1cs_sha256 still matches the compiled circuit, and redoes the setup only
# when the circuit changed, a key file is missing, or --force is given. A kept
# snarkjs_proof_0.json is replaced only if it no longer verifies. Running the
# script twice in a row therefore changes no file. The .ptau files live in a
# temporary directory that is removed on exit.
#
# Time on a 2-core machine: about 4 minutes from scratch (the three setups
# dominate), under a minute when the keys are kept.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "make-fixtures.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

snarkjs=$root/node_modules/.bin/snarkjs
circom=$root/node_modules/.bin/circom2
for tool in "$snarkjs" "$circom"; do
  if [ ! -x "$tool" ]; then
    echo "make-fixtures.sh: $tool not found; run scripts/setup.sh first" >&2
    exit 1
  fi
done
command -v node >/dev/null || { echo "make-fixtures.sh: node not found" >&2; exit 1; }

fixtures=$root/tests/fixtures
examples=$root/examples
work=$(mktemp -d "${TMPDIR:-/tmp}/proofline-fixtures.XXXXXX")
trap 'rm -rf "$work"' EXIT
made=()

die() { echo "make-fixtures.sh: $*" >&2; exit 1; }
say() { echo "make-fixtures: $*"; }

# Runs a tool quietly; on failure shows its output and stops the script.
run() {
  local log=$work/last.log
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    die "failed: $*"
  fi
  # snarkjs reports some errors on stdout with exit status 0.
  if grep -q "\[ERROR\]" "$log"; then
    cat "$log" >&2
    die "failed: $*"
  fi
}

# Copies SRC to DST only when the bytes differ, so unchanged files keep their
# timestamps; records DST as made.
install_file() {
  local src=$1 dst=$2
  mkdir -p "$(dirname "$dst")"
  if ! cmp -s "$src" "$dst" 2>/dev/null; then
    cp "$src" "$dst.tmp.$$"
    mv "$dst.tmp.$$" "$dst"
  fi
  made+=("$dst")
}

# ---- node helpers: r1cs header, inputs, info.json, jobs.json
cat >"$work/helpers.js" <<'EOF'
"use strict";
const fs = require("fs");
const crypto = require("crypto");

// r1cs header (iden3 binfile): "r1cs", u32 version, u32 nSections, then
// sections (u32 type, u64 size); section 1 = n8, prime, nWires, nPubOut,
// nPubIn, nPrvIn, nLabels (u64), nConstraints.
function r1csInfo(file) {
  const b = fs.readFileSync(file);
  if (b.toString("latin1", 0, 4) !== "r1cs") throw new Error(file + ": not an r1cs file");
  let pos = 12;
  const nSections = b.readUInt32LE(8);
  for (let i = 0; i < nSections; i++) {
    const type = b.readUInt32LE(pos);
    const size = Number(b.readBigUInt64LE(pos + 4));
    pos += 12;
    if (type === 1) {
      const n8 = b.readUInt32LE(pos);
      let prime = 0n;
      for (let k = n8 - 1; k >= 0; k--) prime = (prime << 8n) | BigInt(b[pos + 4 + k]);
      let p = pos + 4 + n8;
      const info = {
        prime: prime.toString(),
        wires: b.readUInt32LE(p),
        outputs: b.readUInt32LE(p + 4),
        public_inputs: b.readUInt32LE(p + 8),
        private_inputs: b.readUInt32LE(p + 12),
        constraints: b.readUInt32LE(p + 24),
      };
      info.n_public = info.outputs + info.public_inputs;
      // snarkjs zkey_new: domain covers the constraints, one constraint per
      // public signal and the constant one.
      const total = info.constraints + info.n_public + 1;
      let power = 0;
      while ((1 << power) < total) power++;
      info.power = power;
      info.domain_size = 1 << power;
      info.r1cs_sha256 = crypto.createHash("sha256").update(b).digest("hex");
      return info;
    }
    pos += size;
  }
  throw new Error(file + ": no header section");
}

const two = (k) => 1n << BigInt(k);
const s = (v) => v.toString();

// Inputs for witness i of a circuit over the field with modulus r. Chosen to
// hit zero, values near r, values above 2^128, and max-width range checks.
function inputs(circuit, r, i) {
  if (circuit === "small") {
    const table = [
      { a: 1n, b: 2n, k: 3n, p: 65521n, q: 65537n },
      { a: 0n, b: 12345678901234567890n, k: 987654321n, p: two(32) - 1n, q: 1n },
      { a: r - 1n, b: r - 2n, k: r - 3n, p: 0n, q: 12345n },
      { a: two(200) + 17n, b: two(128), k: 7n, p: two(31), q: two(100) },
    ];
    const t = table[i];
    return { a: s(t.a), b: s(t.b), c: s((t.p * t.q) % r), k: s(t.k), p: s(t.p), q: s(t.q) };
  }
  const mk = (seed, key, data, slack) => {
    const total = data.reduce((x, y) => x + y, 0n) % r;
    return { seed: seed.map(s), limit: s(total + slack), key: s(key), data: data.map(s) };
  };
  if (circuit === "medium") {
    const table = [
      () => mk([1n, 2n], 42n, [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n], 64n),
      () => mk([0n, r - 1n], r - 5n, [r - 1n, 1n, 3n, 0n, 0n, 0n, 0n, 7n], two(64) - 1n),
      () => mk([two(250), 3n ** 100n % r], two(128) + 1n, [5n, 6n, 7n, 8n, 9n, 10n, 11n, 12n], 0n),
    ];
    return table[i]();
  }
  if (circuit === "example") {
    const b = BigInt(i);
    const data = Array.from({ length: 8 }, (_, j) => 1000n * (b + 1n) + BigInt(j));
    return mk([1000n + b, 2000n + b], 7n + b, data, two(32));
  }
  throw new Error("unknown circuit " + circuit);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "r1cs-info") {
  console.log(JSON.stringify(r1csInfo(args[0])));
} else if (cmd === "field") {
  console.log(r1csInfo(args[0]).prime);
} else if (cmd === "power") {
  console.log(r1csInfo(args[0]).power);
} else if (cmd === "input") {
  const [circuit, r1cs, index] = args;
  const r = BigInt(r1csInfo(r1cs).prime);
  console.log(JSON.stringify(inputs(circuit, r, Number(index)), null, 1));
} else if (cmd === "info") {
  const [r1cs, curve, snarkjsCurve, circuit, nwit, circomVersion] = args;
  const info = Object.assign(
    { curve, snarkjs_curve: snarkjsCurve, circuit, witnesses: Number(nwit) },
    r1csInfo(r1cs),
    { circom: circomVersion, snarkjs: "0.7.6" }
  );
  console.log(JSON.stringify(info, null, 1));
} else if (cmd === "stamp") {
  // Prints the r1cs_sha256 recorded in an info.json, or nothing.
  try { console.log(JSON.parse(fs.readFileSync(args[0], "utf8")).r1cs_sha256 || ""); } catch (e) { console.log(""); }
} else {
  throw new Error("unknown helper command " + cmd);
}
EOF
helper() { node "$work/helpers.js" "$@"; }

circom_version=$("$circom" --version | awk '/circom compiler/ {print $3}')
[ -n "$circom_version" ] || die "cannot read the circom2 version"

# ---- powers of tau: one per (curve, power), built on first use; sets
# ptau_file.
ptau() {
  local scurve=$1 power=$2
  local final=$work/pot_${scurve}_${power}_final.ptau
  if [ ! -f "$final" ]; then
    say "powers of tau $scurve 2^$power"
    run "$snarkjs" powersoftau new "$scurve" "$power" "$work/pot_${scurve}_${power}_0.ptau"
    run "$snarkjs" powersoftau contribute "$work/pot_${scurve}_${power}_0.ptau" \
      "$work/pot_${scurve}_${power}_1.ptau" --name="proofline fixtures" -e="proofline fixtures ptau $scurve $power"
    run "$snarkjs" powersoftau prepare phase2 "$work/pot_${scurve}_${power}_1.ptau" "$final"
  fi
  ptau_file=$final
}

# Compiles tests/fixtures/circuits/NAME.circom for a curve into $work; sets
# build to the build directory (circuit.r1cs, circuit_js/circuit.wasm).
compile() {
  local curve=$1 scurve=$2 name=$3
  build=$work/$curve-$name
  mkdir -p "$build"
  cp "$fixtures/circuits/$name.circom" "$build/circuit.circom"
  run "$circom" "$build/circuit.circom" --r1cs --wasm -p "$scurve" -o "$build"
  [ -f "$build/circuit.r1cs" ] && [ -f "$build/circuit_js/circuit.wasm" ] || die "circom2 made no r1cs/wasm for $curve/$name"
}

# Sets up DIR/circuit.zkey and DIR/verification_key.json for BUILD's r1cs
# unless DIR/info.json says they were made for this exact r1cs.
# Sets keys_new=1 when it made new keys.
keys() {
  local curve=$1 scurve=$2 name=$3 build=$4 dir=$5
  local sha stamp
  sha=$(sha256sum "$build/circuit.r1cs" | cut -d' ' -f1)
  stamp=$(helper stamp "$dir/info.json")
  keys_new=0
  if [ "$force" = 0 ] && [ "$sha" = "$stamp" ] && [ -f "$dir/circuit.zkey" ] && [ -f "$dir/verification_key.json" ]; then
    say "$curve/$name: keys match the circuit; kept"
    return
  fi
  local power pt
  power=$(helper power "$build/circuit.r1cs")
  ptau "$scurve" "$power"
  pt=$ptau_file
  say "$curve/$name: groth16 setup (domain 2^$power)"
  run "$snarkjs" groth16 setup "$build/circuit.r1cs" "$pt" "$build/circuit_0.zkey"
  run "$snarkjs" zkey contribute "$build/circuit_0.zkey" "$build/circuit.zkey" \
    --name="proofline fixture" -e="proofline fixture $curve $name"
  run "$snarkjs" zkey verify "$build/circuit.r1cs" "$pt" "$build/circuit.zkey"
  run "$snarkjs" zkey export verificationkey "$build/circuit.zkey" "$build/verification_key.json"
  install_file "$build/circuit.zkey" "$dir/circuit.zkey"
  install_file "$build/verification_key.json" "$dir/verification_key.json"
  keys_new=1
}

# Writes input, witness and public signals I of CIRCUIT (input table name)
# into DIR with file names input_I.json, witness_I.wtns, public_I.json; the
# witness is checked against the r1cs and a snarkjs proof of it verifies.
# Leaves the proof at $build/proof_I.json.
witness() {
  local table=$1 build=$2 dir=$3 i=$4
  helper input "$table" "$build/circuit.r1cs" "$i" >"$build/input_$i.json"
  run "$snarkjs" wtns calculate "$build/circuit_js/circuit.wasm" "$build/input_$i.json" "$build/witness_$i.wtns"
  run "$snarkjs" wtns check "$build/circuit.r1cs" "$build/witness_$i.wtns"
  run "$snarkjs" groth16 prove "$dir/circuit.zkey" "$build/witness_$i.wtns" "$build/proof_$i.json" "$build/public_$i.json"
  run "$snarkjs" groth16 verify "$dir/verification_key.json" "$build/public_$i.json" "$build/proof_$i.json"
  grep -q "OK" "$work/last.log" || die "snarkjs did not accept its own proof of $dir witness $i"
  install_file "$build/input_$i.json" "$dir/input_$i.json"
  install_file "$build/witness_$i.wtns" "$dir/witness_$i.wtns"
  install_file "$build/public_$i.json" "$dir/public_$i.json"
}

# Removes numbered files of DIR with index >= N (left from a larger set).
prune() {
  local dir=$1 n=$2 f idx
  for f in "$dir"/input_*.json "$dir"/witness_*.wtns "$dir"/public_*.json; do
    [ -e "$f" ] || continue
    idx=${f##*_}; idx=${idx%%.*}
    if [ "$idx" -ge "$n" ]; then rm -f "$f"; say "removed stale $f"; fi
  done
}

fixture() {
  local curve=$1 scurve=$2 name=$3 nwit=$4
  local dir=$fixtures/$curve/$name i
  mkdir -p "$dir"
  say "$curve/$name: compiling"
  compile "$curve" "$scurve" "$name"
  install_file "$fixtures/circuits/$name.circom" "$dir/circuit.circom"
  keys "$curve" "$scurve" "$name" "$build" "$dir"
  say "$curve/$name: $nwit witnesses"
  for ((i = 0; i < nwit; i++)); do
    witness "$name" "$build" "$dir" "$i"
  done
  prune "$dir" "$nwit"
  # Keep a valid snarkjs proof; replace it only when it no longer verifies.
  if [ "$keys_new" = 1 ] || [ ! -f "$dir/snarkjs_proof_0.json" ] ||
     ! "$snarkjs" groth16 verify "$dir/verification_key.json" "$dir/public_0.json" \
         "$dir/snarkjs_proof_0.json" 2>&1 | grep -q "OK"; then
    install_file "$build/proof_0.json" "$dir/snarkjs_proof_0.json"
  else
    made+=("$dir/snarkjs_proof_0.json")
  fi
  helper info "$build/circuit.r1cs" "$curve" "$scurve" "$name" "$nwit" "$circom_version" >"$build/info.json"
  install_file "$build/info.json" "$dir/info.json"
  last_build=$build
}

start=$SECONDS

fixture bn254 bn128 small 4
fixture bn254 bn128 medium 3
medium_build=$last_build
fixture bls12_381 bls12381 small 4

# ---- constants dumped from snarkjs's ffjavascript
say "constants"
run node "$root/scripts/dump-snarkjs-constants.js" "$work/constants"
install_file "$work/constants/bn254.json" "$fixtures/constants/bn254.json"
install_file "$work/constants/bls12_381.json" "$fixtures/constants/bls12_381.json"

# ---- examples/: bn254/medium's key with witnesses of its own
say "examples"
mkdir -p "$examples"
install_file "$fixtures/bn254/medium/circuit.circom" "$examples/circuit.circom"
install_file "$fixtures/bn254/medium/circuit.zkey" "$examples/circuit.zkey"
install_file "$medium_build/circuit.r1cs" "$examples/circuit.r1cs"
install_file "$fixtures/bn254/medium/verification_key.json" "$examples/verification_key.json"
mkdir -p "$work/examples"
for i in 0 1 2 3; do
  helper input example "$medium_build/circuit.r1cs" "$i" >"$work/examples/input_$i.json"
  run "$snarkjs" wtns calculate "$medium_build/circuit_js/circuit.wasm" "$work/examples/input_$i.json" "$work/examples/witness_$i.wtns"
  run "$snarkjs" wtns check "$medium_build/circuit.r1cs" "$work/examples/witness_$i.wtns"
  install_file "$work/examples/input_$i.json" "$examples/input_$i.json"
  install_file "$work/examples/witness_$i.wtns" "$examples/witness_$i.wtns"
done
# One proof of the example through snarkjs, so a broken copy fails here.
run "$snarkjs" groth16 prove "$examples/circuit.zkey" "$examples/witness_3.wtns" "$work/examples/proof.json" "$work/examples/public.json"
run "$snarkjs" groth16 verify "$examples/verification_key.json" "$work/examples/public.json" "$work/examples/proof.json"
grep -q "OK" "$work/last.log" || die "snarkjs did not accept its own proof of the example"
cat >"$work/examples/jobs.json" <<'EOF'
{"jobs": [
  {"id": "single", "zkey": "circuit.zkey", "witness": "witness_0.wtns", "out": "out/single"},
  {"id": "batch", "zkey": "circuit.zkey",
   "witnesses": ["witness_0.wtns", "witness_1.wtns", "witness_2.wtns", "witness_3.wtns"],
   "out": "out/batch", "priority": "high"}
]}
EOF
install_file "$work/examples/jobs.json" "$examples/jobs.json"

# ---- report
echo
say "made in $((SECONDS - start)) s:"
for f in "${made[@]}"; do
  printf '  %8s  %s\n' "$(stat -c %s "$f")" "${f#"$root"/}"
done
total=$(du -cb "$fixtures" "$examples" | tail -n 1 | cut -f1)
say "tests/fixtures + examples: $total bytes"
[ "$total" -lt $((10 * 1024 * 1024)) ] || die "fixtures and examples exceed 10 MiB ($total bytes)"
