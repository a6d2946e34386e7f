#!/usr/bin/env python3
"""Derive the curve constants in zk/params/*.hpp from their defining numbers.

Every constant in those headers is produced here from the moduli, the curve
equations and the generators, so a reader can check them without trusting the
header: `python3 scripts/gen-curve-params.py` rewrites the headers and asserts
that every generator lies on its curve and has order r.

Usage: scripts/gen-curve-params.py [--check]   (--check: fail if a header differs)
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def limbs(x, n):
    return [(x >> (64 * i)) & (2**64 - 1) for i in range(n)]


def arr(x, n):
    return "{" + ", ".join("0x%016xull" % v for v in limbs(x, n)) + "}"


class Field:
    def __init__(self, name, p, n, nqr=None):
        self.name, self.p, self.n = name, p, n
        self.R = pow(2, 64 * n, p)
        self.R2 = pow(2, 128 * n, p)
        self.inv = (-pow(p, -1, 2**64)) % 2**64
        s, t = 0, p - 1
        while t % 2 == 0:
            s, t = s + 1, t // 2
        self.s, self.t = s, t
        self.nqr = nqr

    def mont(self, x):
        return x * self.R % self.p


def fq2_mul(p, a, b):  # u^2 = -1
    return ((a[0] * b[0] - a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p)


def fq2_inv(p, a):
    norm = pow((a[0] * a[0] + a[1] * a[1]) % p, -1, p)
    return (a[0] * norm % p, (-a[1]) * norm % p)


def fq2_add(p, a, b):
    return ((a[0] + b[0]) % p, (a[1] + b[1]) % p)


def fq2_sub(p, a, b):
    return ((a[0] - b[0]) % p, (a[1] - b[1]) % p)


# Affine arithmetic for the order check, generic over Fq (ints) and Fq2 (tuples).
def make_ops(p, ext):
    if not ext:
        return (lambda a, b: (a + b) % p, lambda a, b: (a - b) % p,
                lambda a, b: a * b % p, lambda a: pow(a, -1, p), 0)
    return (lambda a, b: fq2_add(p, a, b), lambda a, b: fq2_sub(p, a, b),
            lambda a, b: fq2_mul(p, a, b), lambda a: fq2_inv(p, a), (0, 0))


def on_curve(p, ext, b, P):
    add, sub, mul, inv, zero = make_ops(p, ext)
    x, y = P
    return mul(y, y) == add(mul(mul(x, x), x), b)


def scalar_mul(p, ext, P, k):
    add, sub, mul, inv, zero = make_ops(p, ext)

    def padd(A, B):
        if A is None:
            return B
        if B is None:
            return A
        if A[0] == B[0]:
            if A[1] != B[1] or A[1] == zero:
                return None
            three = 3 if not ext else (3, 0)
            two = 2 if not ext else (2, 0)
            lam = mul(mul(three, mul(A[0], A[0])), inv(mul(two, A[1])))
        else:
            lam = mul(sub(B[1], A[1]), inv(sub(B[0], A[0])))
        x3 = sub(sub(mul(lam, lam), A[0]), B[0])
        return (x3, sub(mul(lam, sub(A[0], x3)), A[1]))

    R, Q = None, P
    while k:
        if k & 1:
            R = padd(R, Q)
        Q = padd(Q, Q)
        k >>= 1
    return R


CURVES = {
    "bn254": dict(
        title="BN254 (alt_bn128; snarkjs calls it bn128)",
        snarkjs="bn128",
        q=21888242871839275222246405745257275088696311157297823662689037894645226208583,
        r=21888242871839275222246405745257275088548364400416034343698204186575808495617,
        nq=4, nr=4,
        g1_b=3,
        # b' = 3 / (9 + u): the D-type sextic twist used by Ethereum and snarkjs.
        g2_b=None,
        g1=(1, 2),
        g2=((10857046999023057135944570762232829481370756359578518086990519993285655852781,
             11559732032986387107991004021392285783925812861821192530917403151452391805634),
            (8495653923123431417604973247489272438418190587263600148770280649306958101930,
             4082367875863433681332203403145435568316851327593401208105741076214120093531)),
    ),
    "bls12_381": dict(
        title="BLS12-381 (snarkjs calls it bls12381)",
        snarkjs="bls12381",
        q=0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab,
        r=0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001,
        nq=6, nr=4,
        g1_b=4,
        g2_b=(4, 4),  # 4 (1 + u): the M-type twist
        g1=(0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb,
            0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1),
        g2=((0x024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8,
             0x13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e),
            (0x0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801,
             0x0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be)),
    ),
}


def field_block(F, cls, comment):
    out = [f"/// {comment}", f"struct {cls} {{",
           f"  static constexpr unsigned limbs = {F.n};",
           f"  static constexpr unsigned bits = {F.p.bit_length()};",
           f"  static constexpr uint64_t inv = 0x{F.inv:016x}ull;  // -p^-1 mod 2^64",
           f"  PL_HD static constexpr uint64_t modulus(unsigned i) {{",
           f"    constexpr uint64_t v[{F.n}] = {arr(F.p, F.n)};",
           "    return v[i];", "  }",
           f"  /// R mod p, R = 2^{64 * F.n}: the Montgomery form of 1.",
           f"  PL_HD static constexpr uint64_t one(unsigned i) {{",
           f"    constexpr uint64_t v[{F.n}] = {arr(F.R, F.n)};",
           "    return v[i];", "  }",
           "  /// R^2 mod p: multiplying a standard-form value by it gives its Montgomery form.",
           f"  PL_HD static constexpr uint64_t r2(unsigned i) {{",
           f"    constexpr uint64_t v[{F.n}] = {arr(F.R2, F.n)};",
           "    return v[i];", "  }"]
    if F.nqr is not None:
        out += [f"  static constexpr unsigned two_adicity = {F.s};  // p - 1 = 2^s * t, t odd",
                f"  static constexpr uint64_t nqr = {F.nqr};  // smallest quadratic non-residue (snarkjs's)"]
    out.append("};")
    return "\n".join(out)


def mont_arr(F, x):
    return arr(F.mont(x), F.n)


def render(key, c):
    Fq = Field("fq", c["q"], c["nq"])
    Fr = Field("fr", c["r"], c["nr"])
    g = 2
    while pow(g, (Fr.p - 1) // 2, Fr.p) != Fr.p - 1:
        g += 1
    Fr.nqr = g
    q = Fq.p
    g2_b = c["g2_b"]
    if g2_b is None:
        g2_b = fq2_mul(q, (3, 0), fq2_inv(q, (9, 1)))
    assert on_curve(q, False, c["g1_b"], c["g1"]), key + " G1 generator not on curve"
    assert on_curve(q, True, g2_b, c["g2"]), key + " G2 generator not on curve"
    assert scalar_mul(q, False, c["g1"], Fr.p) is None, key + " G1 generator order != r"
    assert scalar_mul(q, True, c["g2"], Fr.p) is None, key + " G2 generator order != r"

    ns = key
    lines = [
        "// Generated by scripts/gen-curve-params.py; do not edit by hand.",
        f"// {c['title']}: field moduli, Montgomery constants, curve coefficients",
        "// and generators, all multi-precision values as little-endian 64-bit limbs,",
        "// curve constants in Montgomery form.",
        "#pragma once",
        "",
        "#include <cstdint>",
        "",
        '#include "zk/common/hd.hpp"',
        "",
        f"namespace proofline::zk::params::{ns} {{",
        "",
        field_block(Fq, "fq", f"Base field Fq, {Fq.p.bit_length()} bits."),
        "",
        field_block(Fr, "fr", f"Scalar field Fr (the group order r), {Fr.p.bit_length()} bits."),
        "",
        f'inline constexpr const char* snarkjs_name = "{c["snarkjs"]}";',
        "",
        "/// G1: y^2 = x^3 + b over Fq.",
        f"inline constexpr uint64_t g1_b[{Fq.n}] = {mont_arr(Fq, c['g1_b'])};",
        f"inline constexpr uint64_t g1_gen_x[{Fq.n}] = {mont_arr(Fq, c['g1'][0])};",
        f"inline constexpr uint64_t g1_gen_y[{Fq.n}] = {mont_arr(Fq, c['g1'][1])};",
        "",
        "/// G2: y^2 = x^3 + b' over Fq2 = Fq[u]/(u^2 + 1); values are (c0, c1).",
        f"inline constexpr uint64_t g2_b[2][{Fq.n}] = {{{mont_arr(Fq, g2_b[0])}, {mont_arr(Fq, g2_b[1])}}};",
        f"inline constexpr uint64_t g2_gen_x[2][{Fq.n}] = {{{mont_arr(Fq, c['g2'][0][0])}, {mont_arr(Fq, c['g2'][0][1])}}};",
        f"inline constexpr uint64_t g2_gen_y[2][{Fq.n}] = {{{mont_arr(Fq, c['g2'][1][0])}, {mont_arr(Fq, c['g2'][1][1])}}};",
        "",
        f"}}  // namespace proofline::zk::params::{ns}",
        "",
    ]
    return "\n".join(lines)


def main():
    check = "--check" in sys.argv
    bad = False
    for key, c in CURVES.items():
        text = render(key, c)
        path = os.path.join(ROOT, "zk", "params", key + ".hpp")
        if check:
            with open(path) as f:
                if f.read() != text:
                    print(f"{path}: differs from what scripts/gen-curve-params.py derives")
                    bad = True
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("wrote", os.path.relpath(path, ROOT))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
