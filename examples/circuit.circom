pragma circom 2.1.0;

// proofline test fixture "medium": a few thousand constraints with public
// inputs and public outputs (BN254).
//
//   public inputs : seed[2], limit
//   private inputs: key, data[8]
//   public outputs: digest[2] = a keyed Feistel sponge over data: each block
//                   adds data[j] to the left half, then runs 80 rounds
//                   (L, R) -> (R + (L + key + rc(i))^7, L)
//                   total = data[0] + ... + data[7]
//   checks        : limit - total < 2^64 (bit decomposition), data[0] != 0
//
// Constraints (circom --O1): 2625 non-linear (640 rounds * 4, 64 bit checks,
// the inverse) and 1291 linear (two per round, one per absorbed block, total,
// slack, bit sum): 3916. With 6 public signals the Groth16 domain is 2^12
// (3916 + 6 + 1 <= 4096).

function rc(i) {
    return (i + 1) * (i + 1) * (i + 1) * 1000003 + i * 7919 + 13;
}

// out = in^7 in 4 multiplications.
template Pow7() {
    signal input in;
    signal output out;
    signal x2;
    signal x3;
    signal x4;
    x2 <== in * in;
    x3 <== x2 * in;
    x4 <== x2 * x2;
    out <== x4 * x3;
}

template Medium(nBlocks, nRounds, nBits) {
    signal input seed[2];
    signal input limit;
    signal input key;
    signal input data[nBlocks];
    signal output digest[2];
    signal output total;

    var n = nBlocks * nRounds;
    signal L[n + 1];
    signal R[n + 1];
    component f[n];
    L[0] <== seed[0];
    R[0] <== seed[1];
    for (var j = 0; j < nBlocks; j++) {
        for (var i = 0; i < nRounds; i++) {
            var idx = j * nRounds + i;
            var left = L[idx];
            if (i == 0) {
                left += data[j];
            }
            f[idx] = Pow7();
            f[idx].in <== left + key + rc(idx);
            L[idx + 1] <== R[idx] + f[idx].out;
            R[idx + 1] <== left;
        }
    }
    digest[0] <== L[n];
    digest[1] <== R[n];

    var sum = 0;
    for (var j = 0; j < nBlocks; j++) {
        sum += data[j];
    }
    total <== sum;

    // total <= limit, as limit - total fits in nBits bits.
    signal slack <== limit - total;
    signal sbits[nBits];
    var acc = 0;
    var weight = 1;
    for (var i = 0; i < nBits; i++) {
        sbits[i] <-- (slack >> i) & 1;
        sbits[i] * (sbits[i] - 1) === 0;
        acc += sbits[i] * weight;
        weight += weight;
    }
    acc === slack;

    // data[0] is not zero: it has an inverse.
    signal inv0;
    inv0 <-- 1 / data[0];
    data[0] * inv0 === 1;
}

component main {public [seed, limit]} = Medium(8, 80, 64);
