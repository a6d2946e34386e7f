// The optimal ate pairing e: G1 x G2 -> GT on BN254 and BLS12-381, one
// implementation over the curve parameter sets (zk/pairing/params.hpp).
//
// A product of pairings shares one Miller loop (the Fq12 squarings are done
// once for all pairs) and one final exponentiation, so checking
// e(P1, Q1) ... e(Pn, Qn) == 1 costs far less than n pairings.
//
// The final exponentiation raises to a fixed multiple k (p^12 - 1) / r, the
// one snarkjs (ffjavascript) uses, so GT values agree with snarkjs's (e.g.
// vk_alphabeta_12 of a verification key); k is prime to r, so the result is
// still a non-degenerate bilinear pairing:
//   easy part (p^6 - 1)(p^2 + 1) by a conjugate, an inversion and a Frobenius;
//   hard part k (p^4 - p^2 + 1) / r through its expansion in x and p:
//     BN:    k = 2x (6x^2 + 3x + 1) (Fuentes-Castaneda, Knapp, Rodriguez-
//            Henriquez, "Faster hashing to G2", SAC 2011): three powers by x;
//     BLS12: k = 3, 3 (p^4 - p^2 + 1) / r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3
//            (Hayashida, Hayasaka, Teruya, ePrint 2020/875): five powers by x.
//
// Inputs are affine points that the caller has checked (on the curve, in the
// prime-order subgroup: in_subgroup below); a pair with a point at infinity
// contributes 1.
#pragma once

#include <cstddef>

#include "zk/curves.hpp"
#include "zk/pairing/tower.hpp"

namespace proofline::zk::pairing {

template <class C>
using gt = fq12<C>;

/// One pair of a pairing product.
template <class C>
struct pair {
  typename C::g1_affine p;
  typename C::g2_affine q;
};

/// The product of the Miller loops f_{loop, Q_i}(P_i), before the final
/// exponentiation (defined only up to factors that it removes).
template <class C>
gt<C> miller_loop(const pair<C>* pairs, std::size_t count);

/// f^(k (p^12 - 1) / r), k as above.
template <class C>
gt<C> final_exponentiation(const gt<C>& f);

/// e(P1, Q1) * ... * e(Pn, Qn).
template <class C>
gt<C> pairing_product(const pair<C>* pairs, std::size_t count);

/// e(P, Q).
template <class C>
gt<C> pairing(const typename C::g1_affine& p, const typename C::g2_affine& q);

/// True when the point is on its curve and r * P is the point at infinity
/// (for G1 of BN254, whose cofactor is 1, being on the curve suffices).
/// A double-and-add over r's bits: a G2 check costs about a quarter of a
/// pairing.
template <class C>
bool in_subgroup(const typename C::g1_affine& p);
template <class C>
bool in_subgroup(const typename C::g2_affine& q);

}  // namespace proofline::zk::pairing
