// The curve parameter sets: one struct per pairing-friendly curve, naming its
// fields and groups. Every algorithm in zk/ and gpu/ is a template over one of
// these, so a new curve is a new parameter set (zk/params/), not new code.
//
//   template <class C> ... C::fr, C::fq, C::fq2, C::g1_affine, C::g2_xyzz, ...
#pragma once

#include <type_traits>
#include <cstdint>

#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"
#include "zk/ff/fp2.hpp"
#include "zk/params/bls12_381.hpp"
#include "zk/params/bn254.hpp"

namespace proofline::zk {

/// Identifies a curve at run time (file headers, messages, CLI).
enum class curve_id : uint8_t {
  bn254,      ///< BN254 / alt_bn128, "bn128" in snarkjs
  bls12_381,  ///< BLS12-381, "bls12381" in snarkjs
};

namespace detail {

template <class F, unsigned N>
PL_HD F field_from(const uint64_t (&v)[N]) {
  F r;
  PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = v[i];
  return r;
}

template <class Params>
struct curve_set {
  using fq = ff::fp<typename Params::fq>;
  using fr = ff::fp<typename Params::fr>;
  using fq2 = ff::fp2<fq>;
  using scalar = typename fr::repr;  ///< MSM scalars: standard-form Fr

  struct g1_group {
    using field = fq;
    static fq b() { return field_from<fq>(Params::g1_b); }
  };
  struct g2_group {
    using field = fq2;
    static fq2 b() { return {field_from<fq>(Params::g2_b[0]), field_from<fq>(Params::g2_b[1])}; }
  };

  using g1_affine = ec::affine<g1_group>;
  using g1_jacobian = ec::jacobian<g1_group>;
  using g1_xyzz = ec::xyzz<g1_group>;
  using g2_affine = ec::affine<g2_group>;
  using g2_jacobian = ec::jacobian<g2_group>;
  using g2_xyzz = ec::xyzz<g2_group>;

  static g1_affine g1_generator() {
    return {field_from<fq>(Params::g1_gen_x), field_from<fq>(Params::g1_gen_y)};
  }
  static g2_affine g2_generator() {
    return {{field_from<fq>(Params::g2_gen_x[0]), field_from<fq>(Params::g2_gen_x[1])},
            {field_from<fq>(Params::g2_gen_y[0]), field_from<fq>(Params::g2_gen_y[1])}};
  }
  /// The generator of group G (g1_group or g2_group), for code written once
  /// over both groups.
  template <class G>
  static ec::affine<G> generator() {
    if constexpr (std::is_same_v<G, g1_group>)
      return g1_generator();
    else
      return g2_generator();
  }
  /// Bytes of one field element in snarkjs files (n8q, n8r).
  static constexpr unsigned fq_bytes = fq::N * 8;
  static constexpr unsigned fr_bytes = fr::N * 8;
};

struct bn254_params_ref {
  using fq = params::bn254::fq;
  using fr = params::bn254::fr;
  static constexpr const auto& g1_b = params::bn254::g1_b;
  static constexpr const auto& g1_gen_x = params::bn254::g1_gen_x;
  static constexpr const auto& g1_gen_y = params::bn254::g1_gen_y;
  static constexpr const auto& g2_b = params::bn254::g2_b;
  static constexpr const auto& g2_gen_x = params::bn254::g2_gen_x;
  static constexpr const auto& g2_gen_y = params::bn254::g2_gen_y;
};

struct bls12_381_params_ref {
  using fq = params::bls12_381::fq;
  using fr = params::bls12_381::fr;
  static constexpr const auto& g1_b = params::bls12_381::g1_b;
  static constexpr const auto& g1_gen_x = params::bls12_381::g1_gen_x;
  static constexpr const auto& g1_gen_y = params::bls12_381::g1_gen_y;
  static constexpr const auto& g2_b = params::bls12_381::g2_b;
  static constexpr const auto& g2_gen_x = params::bls12_381::g2_gen_x;
  static constexpr const auto& g2_gen_y = params::bls12_381::g2_gen_y;
};

}  // namespace detail

struct bn254 : detail::curve_set<detail::bn254_params_ref> {
  static constexpr curve_id id = curve_id::bn254;
  static constexpr const char* name = "bn254";
  static constexpr const char* snarkjs_name = params::bn254::snarkjs_name;
};

struct bls12_381 : detail::curve_set<detail::bls12_381_params_ref> {
  static constexpr curve_id id = curve_id::bls12_381;
  static constexpr const char* name = "bls12_381";
  static constexpr const char* snarkjs_name = params::bls12_381::snarkjs_name;
};

/// Calls f(C{}) with the parameter set for a run-time curve id.
template <class F>
decltype(auto) visit_curve(curve_id id, F&& f) {
  switch (id) {
    case curve_id::bls12_381:
      return f(bls12_381{});
    case curve_id::bn254:
    default:
      return f(bn254{});
  }
}

inline const char* to_string(curve_id id) {
  return id == curve_id::bn254 ? bn254::name : bls12_381::name;
}

}  // namespace proofline::zk
