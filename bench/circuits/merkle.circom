// Membership in a Merkle tree of depth 8 hashed with MiMCSponge (220 rounds):
// 10.6k constraints, a 2^14 domain. The CPU comparison with rapidsnark
// (scripts/bench-cpu-rapidsnark.sh) compiles it against circomlib.
pragma circom 2.0.0;
include "circomlib/circuits/mimcsponge.circom";
include "circomlib/circuits/mux1.circom";

// One level: hash (cur, sib) when bit = 0, (sib, cur) when bit = 1.
template Level() {
  signal input cur;
  signal input sib;
  signal input bit;
  signal output out;
  component order = MultiMux1(2);
  order.c[0][0] <== cur;
  order.c[0][1] <== sib;
  order.c[1][0] <== sib;
  order.c[1][1] <== cur;
  order.s <== bit;
  component h = MiMCSponge(2, 220, 1);
  h.ins[0] <== order.out[0];
  h.ins[1] <== order.out[1];
  h.k <== 0;
  out <== h.outs[0];
}

template Merkle(depth) {
  signal input leaf;
  signal input sib[depth];
  signal input bits[depth];
  signal output root;
  component level[depth];
  for (var i = 0; i < depth; i++) {
    bits[i] * (1 - bits[i]) === 0;
    level[i] = Level();
    level[i].cur <== i == 0 ? leaf : level[i - 1].out;
    level[i].sib <== sib[i];
    level[i].bit <== bits[i];
  }
  root <== level[depth - 1].out;
}

component main = Merkle(8);
