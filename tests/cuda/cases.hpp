// Inputs shared by the CUDA tests (host emulation and GPU): seeded random
// field elements, scalars and curve points, with the edge cases an MSM or NTT
// must survive mixed in (zero scalars, r - 1, points at infinity, repeated and
// negated points, skewed scalar distributions like real witnesses have).
#pragma once

#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::test {

/// A field element from 64N random bits, reduced (Montgomery form).
template <class F>
F random_element(std::mt19937_64& rng) {
  typename F::repr x;
  for (auto& limb : x.l) limb = rng();
  return F::from_standard(x);
}

/// n distinct points e0 G + i d G (one addition each), with special points
/// mixed in when there is room: infinity at 1, a repeat of point 0 at 2, the
/// negation of point 0 at 3, and another repeat every 97th point.
template <class C, class G>
std::vector<zk::ec::affine<G>> make_points(std::size_t n, std::mt19937_64& rng) {
  using jac = zk::ec::jacobian<G>;
  using fr = typename C::fr;
  const jac gen = jac::from_affine(C::template generator<G>());
  jac p = gen.mul(random_element<fr>(rng).to_standard());
  const jac step = gen.mul(random_element<fr>(rng).to_standard());
  std::vector<zk::ec::affine<G>> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = p.to_affine();
    p = p + step;
  }
  if (n > 1) out[1] = zk::ec::affine<G>::infinity();
  if (n > 2) out[2] = out[0];
  if (n > 3) out[3] = -out[0];
  for (std::size_t i = 97; i < n; i += 97) out[i] = out[i - 50];
  return out;
}

/// n points (n >= 24) whose runs in a bucket collide in every way the
/// batched-affine rounds meet when every scalar is the same: A four times
/// then -A four times (A + A, then 2A + 2A and 2A + (-2A) among sums), two
/// points at infinity, B + (-B), A + (-A) at an odd position, the rest
/// make_points' (distinct, with its repeats).
template <class C, class G>
std::vector<zk::ec::affine<G>> make_collision_points(std::size_t n, std::mt19937_64& rng) {
  auto out = make_points<C, G>(n, rng);
  const auto a = out[n - 1], b = out[n - 2];
  const zk::ec::affine<G> pattern[] = {a,  a,  a,  a,  -a, -a, -a, -a, zk::ec::affine<G>::infinity(),
                                       zk::ec::affine<G>::infinity(), b, -b, b, a, -a, b, b, b, -a};
  for (std::size_t i = 0; i < sizeof(pattern) / sizeof(pattern[0]); ++i) out[i] = pattern[i];
  return out;
}

enum class scalar_mix {
  uniform,  ///< uniform below r, with 0, 1 and r - 1 mixed in
  skewed,   ///< like a witness: mostly 0 and 1, some small, a few uniform
  ones,     ///< every scalar 1 (one bucket holds every point of window 0)
};

template <class C>
std::vector<typename C::scalar> make_scalars(std::size_t n, scalar_mix mix, std::mt19937_64& rng) {
  using fr = typename C::fr;
  using scalar = typename C::scalar;
  std::vector<scalar> out(n);
  scalar r_minus_1 = fr::modulus();
  r_minus_1.l[0] -= 1;
  for (std::size_t i = 0; i < n; ++i) {
    switch (mix) {
      case scalar_mix::uniform:
        out[i] = random_element<fr>(rng).to_standard();
        if (i % 13 == 5) out[i] = scalar::zero();
        if (i % 17 == 6) out[i] = scalar::from_u64(1);
        if (i % 19 == 7) out[i] = r_minus_1;
        break;
      case scalar_mix::skewed: {
        uint64_t roll = rng() % 100;
        if (roll < 45)
          out[i] = scalar::zero();
        else if (roll < 85)
          out[i] = scalar::from_u64(1);
        else if (roll < 95)
          out[i] = scalar::from_u64(rng() % 1000);
        else
          out[i] = random_element<fr>(rng).to_standard();
        break;
      }
      case scalar_mix::ones:
        out[i] = scalar::from_u64(1);
        break;
    }
  }
  return out;
}

/// The five scalar inputs the MSM checks run: uniform, skewed, all ones,
/// all one random value, all zero.
template <class C>
std::vector<std::vector<typename C::scalar>> scalar_mixes(std::size_t n, std::mt19937_64& rng) {
  using scalar = typename C::scalar;
  std::vector<std::vector<scalar>> out;
  out.push_back(make_scalars<C>(n, scalar_mix::uniform, rng));
  out.push_back(make_scalars<C>(n, scalar_mix::skewed, rng));
  out.push_back(make_scalars<C>(n, scalar_mix::ones, rng));
  out.push_back(std::vector<scalar>(n, make_scalars<C>(1, scalar_mix::uniform, rng)[0]));
  out.push_back(std::vector<scalar>(n, scalar::zero()));
  return out;
}

/// Random elements of F, Montgomery form.
template <class F>
std::vector<F> make_elements(std::size_t n, std::mt19937_64& rng) {
  std::vector<F> v(n);
  for (auto& x : v) x = random_element<F>(rng);
  return v;
}

}  // namespace proofline::test
