#!/usr/bin/env node
// Dumps the field and curve constants that snarkjs's groth16 prover uses, as
// snarkjs itself computes them (through its own ffjavascript), so proofline's
// NTT and coset shift can be checked against the oracle's exact values.
//
//   node scripts/dump-snarkjs-constants.js OUTDIR
//
// writes OUTDIR/bn254.json and OUTDIR/bls12_381.json. Every number is a
// standard-form (not Montgomery) decimal string. Each file opens with an
// "_about" key describing its fields. Before writing, the script recomputes
// every constant with plain BigInt arithmetic and runs ffjavascript's own
// fft / ifft / batchApplyKey on a small vector, and exits 1 if anything
// disagrees with the convention the file documents.
"use strict";

const fs = require("fs");
const path = require("path");
// The ffjavascript that snarkjs itself loads (resolved from snarkjs's folder,
// so a second copy elsewhere in node_modules cannot be picked up instead).
const ffjs = require(require.resolve("ffjavascript", { paths: [path.dirname(require.resolve("snarkjs"))] }));

// groth16_prove.js (snarkjs 0.7.6) chooses the odd-coset multiplier:
//   const inc = power == Fr.s ? curve.Fr.shift : curve.Fr.w[power+1];
// and applies it with Fr.batchApplyKey(buff, Fr.e(1), inc), which multiplies
// element i by inc^i. The example vector below has this many elements.
const EXAMPLE_LOG2 = 3;

function modpow(b, e, m) {
  let r = 1n;
  b %= m;
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
}

function fail(msg) {
  console.error("dump-snarkjs-constants: " + msg);
  process.exit(1);
}

function check(cond, what) {
  if (!cond) fail("check failed: " + what);
}

// Field element (ffjavascript Montgomery buffer) -> standard-form BigInt.
function big(Fr, x) {
  const v = BigInt(Fr.toObject(x));
  const viaString = BigInt(Fr.toString(x, 10));
  check(v === viaString, "Fr.toObject and Fr.toString agree");
  return v;
}

function dec(v) {
  return v.toString(10);
}

function pointG1(curve, p) {
  const [x, y, z] = curve.G1.toObject(curve.G1.toAffine(p));
  check(BigInt(z) === 1n, "G1 generator is affine");
  return { x: dec(BigInt(x)), y: dec(BigInt(y)) };
}

function pointG2(curve, p) {
  const [x, y, z] = curve.G2.toObject(curve.G2.toAffine(p));
  check(BigInt(z[0]) === 1n && BigInt(z[1]) === 0n, "G2 generator is affine");
  return {
    x: [dec(BigInt(x[0])), dec(BigInt(x[1]))],
    y: [dec(BigInt(y[0])), dec(BigInt(y[1]))],
  };
}

// Field elements of a Uint8Array (little-endian Montgomery, n8 bytes each).
function unpack(Fr, buff) {
  const out = [];
  for (let i = 0; i < buff.byteLength / Fr.n8; i++) {
    out.push(big(Fr, buff.slice(i * Fr.n8, (i + 1) * Fr.n8)));
  }
  return out;
}

function pack(Fr, values) {
  const buff = new Uint8Array(values.length * Fr.n8);
  values.forEach((v, i) => buff.set(Fr.e(v), i * Fr.n8));
  return buff;
}

// Runs the exact sequence of groth16_prove.js on a small vector and checks it
// against the naive formulas the _about text states.
async function cosetExample(Fr, r, w) {
  const n = 1 << EXAMPLE_LOG2;
  const evals = [];
  for (let i = 0; i < n; i++) evals.push((BigInt(i + 1) * 0x9e3779b97f4a7c15n + 3n) % r);

  const coeffsBuf = await Fr.ifft(pack(Fr, evals), "", "");
  const coeffs = unpack(Fr, coeffsBuf);
  const inc = w[EXAMPLE_LOG2 + 1];
  const shiftedBuf = await Fr.batchApplyKey(coeffsBuf, Fr.e(1), Fr.e(inc));
  const shifted = unpack(Fr, shiftedBuf);
  const oddBuf = await Fr.fft(shiftedBuf, "", "");
  const odd = unpack(Fr, oddBuf);

  const wn = w[EXAMPLE_LOG2];
  const evalAt = (cs, x) => cs.reduce((acc, c, i) => (acc + c * modpow(x, BigInt(i), r)) % r, 0n);
  for (let j = 0; j < n; j++) {
    check(evalAt(coeffs, modpow(wn, BigInt(j), r)) === evals[j],
      "ifft output c satisfies sum_i c[i] * w[log2 n]^(i*j) = input[j]");
    check(shifted[j] === (coeffs[j] * modpow(inc, BigInt(j), r)) % r,
      "batchApplyKey(first = 1, inc) multiplies element i by inc^i");
    check(evalAt(shifted, modpow(wn, BigInt(j), r)) === odd[j],
      "fft evaluates at w[log2 n]^j");
    check(evalAt(coeffs, modpow(w[EXAMPLE_LOG2 + 1], BigInt(2 * j + 1), r)) === odd[j],
      "odd-coset values are the polynomial at w[log2 n + 1]^(2j+1)");
  }
  return {
    log2_n: EXAMPLE_LOG2,
    evaluations: evals.map(dec),
    ifft: coeffs.map(dec),
    times_inc_pow_i: shifted.map(dec),
    odd_coset_evaluations: odd.map(dec),
  };
}

async function dumpCurve(curve, fileCurve, snarkjsName) {
  const Fr = curve.Fr;
  const r = BigInt(Fr.p);
  const q = BigInt(curve.F1.p);

  // Independent recomputation of ffjavascript's WasmField1 constructor.
  let nqr = 2n;
  while (modpow(nqr, (r - 1n) / 2n, r) !== r - 1n) nqr += 1n;
  let s = 0;
  let t = r - 1n;
  while ((t & 1n) === 0n) {
    s += 1;
    t >>= 1n;
  }
  check(big(Fr, Fr.nqr) === nqr, "nqr is the smallest quadratic non-residue");
  check(Fr.s === s, "s is the 2-adicity of r - 1");

  const w = [];
  const wi = [];
  for (let i = 0; i <= s; i++) {
    const wv = big(Fr, Fr.w[i]);
    check(wv === modpow(nqr, t << BigInt(s - i), r), `w[${i}] = nqr^(t * 2^(s-${i}))`);
    check(modpow(wv, 1n << BigInt(i), r) === 1n, `w[${i}]^(2^${i}) = 1`);
    if (i > 0) check(modpow(wv, 1n << BigInt(i - 1), r) === r - 1n, `w[${i}] is a primitive 2^${i}-th root`);
    w.push(wv);
    const inv = big(Fr, Fr.inv(Fr.w[i]));
    check((inv * wv) % r === 1n, `wi[${i}] * w[${i}] = 1`);
    wi.push(inv);
  }
  check(Fr.wi === undefined, "curve.Fr has no wi array (so wi is computed here)");

  const shift = big(Fr, Fr.shift);
  const shiftInv = big(Fr, Fr.shiftInv);
  check(shift === (nqr * nqr) % r, "shift = nqr^2");
  check((shift * shiftInv) % r === 1n, "shiftInv = 1 / shift");

  const example = await cosetExample(Fr, r, w);

  return {
    _about: [
      `Constants of snarkjs 0.7.6 for curve "${snarkjsName}" (${fileCurve}), read from its own ffjavascript ` +
        "(curve.Fr is a WasmField1) by scripts/dump-snarkjs-constants.js and re-derived there with BigInt arithmetic.",
      "All numbers are standard-form (not Montgomery) decimal strings.",
      "Fr.modulus: r. Fr.nqr: the smallest quadratic non-residue mod r (ffjavascript counts up from 2). " +
        "Fr.s: the 2-adicity of r - 1; Fr.t = (r - 1) / 2^s.",
      "Fr.w[i] (i = 0..s): ffjavascript's primitive 2^i-th root of unity, w[s] = nqr^t, w[i] = w[i+1]^2. " +
        "Fr.wi[i] = 1 / w[i] (curve.Fr keeps no wi array; computed here with Fr.inv).",
      "FFT convention (checked in coset_fft_example): Fr.fft of a size-n vector c (n = 2^k, k <= s) returns " +
        "e[j] = sum_i c[i] * w[k]^(i*j); Fr.ifft is its inverse (uses w[k]^-1 and 1/n).",
      "groth16_prove odd coset: after ifft over the n = 2^power domain, coefficient i is multiplied by inc^i " +
        "(Fr.batchApplyKey(buff, 1, inc)), then fft. inc = Fr.w[power + 1] when power < s, giving the values at " +
        "w[power+1]^(2j+1) (the odd points of the 2n domain); inc = Fr.shift when power == s.",
      "Fr.shift = nqr^2, Fr.shiftInv = 1 / shift (both ffjavascript values). odd_coset_inc lists inc for every power.",
      "coset_fft_example: the exact groth16_prove sequence on a size-8 vector: evaluations -> ifft -> " +
        "times_inc_pow_i (inc = w[4]) -> odd_coset_evaluations (fft).",
      "Fq.modulus: the base field prime q. G1.generator / G2.generator: ffjavascript's generators (curve.G1.g, " +
        "curve.G2.g) in affine form; G2 coordinates are [c0, c1] with x = c0 + c1*u.",
    ],
    curve: fileCurve,
    snarkjs_name: snarkjsName,
    Fr: {
      modulus: dec(r),
      n8: Fr.n8,
      nqr: dec(nqr),
      s: s,
      t: dec(t),
      w: w.map(dec),
      wi: wi.map(dec),
      shift: dec(shift),
      shiftInv: dec(shiftInv),
      odd_coset_inc: Object.fromEntries(
        Array.from({ length: s + 1 }, (_, p) => [String(p), dec(p === s ? shift : w[p + 1])])
      ),
    },
    Fq: { modulus: dec(q), n8: curve.F1.n8 },
    G1: { generator: pointG1(curve, curve.G1.g) },
    G2: { generator: pointG2(curve, curve.G2.g) },
    coset_fft_example: example,
  };
}

async function main() {
  const outDir = process.argv[2];
  if (!outDir || process.argv.length !== 3) {
    console.error("usage: node scripts/dump-snarkjs-constants.js OUTDIR");
    process.exit(2);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const curves = [
    ["bn254", "bn128", ffjs.buildBn128],
    ["bls12_381", "bls12381", ffjs.buildBls12381],
  ];
  for (const [fileCurve, snarkjsName, build] of curves) {
    const curve = await build(true);
    const doc = await dumpCurve(curve, fileCurve, snarkjsName);
    const file = path.join(outDir, fileCurve + ".json");
    fs.writeFileSync(file + ".tmp", JSON.stringify(doc, null, 1) + "\n");
    fs.renameSync(file + ".tmp", file);
    console.log(`dump-snarkjs-constants: wrote ${file} (nqr ${doc.Fr.nqr}, s ${doc.Fr.s})`);
    if (curve.terminate) await curve.terminate();
  }
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
