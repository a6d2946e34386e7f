// SHA-256 of a 512-bit message (two compression blocks with the padding):
// 62.5k constraints, a 2^16 domain. The CPU comparison with rapidsnark
// (scripts/bench-cpu-rapidsnark.sh) compiles it against circomlib.
pragma circom 2.0.0;
include "circomlib/circuits/sha256/sha256.circom";

component main = Sha256(512);
