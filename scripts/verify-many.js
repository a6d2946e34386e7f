#!/usr/bin/env node
// Verifies many Groth16 proofs with snarkjs in one process (snarkjs's own
// groth16.verify, the oracle of the tests), for tests that check dozens of
// proofs and would spend a second of start-up on each `snarkjs groth16
// verify`.
//
//   node scripts/verify-many.js VERIFICATION_KEY PROOF PUBLIC [PROOF PUBLIC ...]
//
// Prints "OK      PROOF" or "FAILED  PROOF (reason)" per pair; exit 0 when
// every proof verified, 1 when one did not, 2 on usage errors.
"use strict";
const fs = require("fs");
const path = require("path");
const snarkjs = require(path.join(__dirname, "..", "node_modules", "snarkjs"));

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 3 || args.length % 2 !== 1) {
    console.error("usage: verify-many.js VERIFICATION_KEY PROOF PUBLIC [PROOF PUBLIC ...]");
    process.exit(2);
  }
  const vk = JSON.parse(fs.readFileSync(args[0], "utf8"));
  let failed = 0;
  for (let i = 1; i < args.length; i += 2) {
    const proofFile = args[i], publicFile = args[i + 1];
    try {
      const proof = JSON.parse(fs.readFileSync(proofFile, "utf8"));
      const pub = JSON.parse(fs.readFileSync(publicFile, "utf8"));
      const ok = await snarkjs.groth16.verify(vk, pub, proof);
      console.log((ok ? "OK      " : "FAILED  ") + proofFile + (ok ? "" : " (snarkjs: Invalid proof)"));
      if (!ok) failed++;
    } catch (e) {
      console.log("FAILED  " + proofFile + " (" + e.message + ")");
      failed++;
    }
  }
  // snarkjs keeps worker threads of its curve objects alive; end explicitly.
  process.exit(failed ? 1 : 0);
}
main();
