// Field elements and curve points as snarkjs writes them in JSON (proofs,
// verification keys): decimal strings of the standard form, points affine
// with z = 1. Shared by the proof writer and `setup --dev`'s key writer.
#pragma once

#include <nlohmann/json.hpp>

#include "zk/ff/fp.hpp"
#include "zk/ff/fp2.hpp"
#include "zk/formats/decimal.hpp"

namespace proofline::zk::formats {

/// snarkjs's key order is insertion order.
using snarkjs_json = nlohmann::ordered_json;

/// snarkjs writes JSON.stringify(value, null, 1): one-space indent.
inline constexpr int snarkjs_indent = 1;

/// "123..." (Fp) or ["c0", "c1"] (Fp2).
template <class P>
snarkjs_json field_json(const ff::fp<P>& x) {
  return to_decimal(x.to_standard());
}
template <class F>
snarkjs_json field_json(const ff::fp2<F>& x) {
  return snarkjs_json::array({field_json(x.c0), field_json(x.c1)});
}

/// [x, y, 1] (G2: [[x0, x1], [y0, y1], [1, 0]]), or snarkjs's [0, 1, 0] for infinity.
template <class A>
snarkjs_json point_json(const A& p) {
  using field = typename A::field;
  if (p.is_infinity())
    return snarkjs_json::array(
        {field_json(field::zero()), field_json(field::one()), field_json(field::zero())});
  return snarkjs_json::array({field_json(p.x), field_json(p.y), field_json(field::one())});
}

}  // namespace proofline::zk::formats
