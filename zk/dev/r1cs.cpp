#include "zk/dev/r1cs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "zk/dev/rng.hpp"

namespace proofline::zk::dev {

namespace {

/// Variables drawn "recently" come from this many latest ones (locality, as
/// circuits built from gadgets have).
constexpr uint64_t recent_window = 32;
/// Free private inputs and assertion rows: one of each per this many rows.
constexpr uint32_t rows_per_free_input = 16;

/// Defining-row kinds by cumulative share in percent (see r1cs.hpp).
struct kind_share {
  row_kind kind;
  unsigned cumulative_percent;
};
constexpr kind_share defining_kinds[] = {
    {row_kind::boolean, 22}, {row_kind::and_gate, 30}, {row_kind::xor_gate, 36},
    {row_kind::select, 48},  {row_kind::product, 84},  {row_kind::linear, 100},
};

template <class C>
class generator {
  using fr = typename C::fr;

 public:
  /// w0 and the public and free inputs count as full width (w0 is 1, but it
  /// is the constant, not a gadget's bit).
  generator(r1cs<C>& cs, uint64_t seed)
      : cs_(cs),
        g_(stream(seed, purpose::circuit)),
        is_bool_(1 + std::size_t(cs.n_public) + cs.n_free, false) {}

  void run() {
    const uint32_t n = cs_.n_constraints;
    cs_.offsets.reserve(3 * std::size_t(n) + 1);
    cs_.offsets.push_back(0);
    cs_.terms.reserve(std::size_t(n) * 5);
    cs_.kinds.reserve(n);
    cs_.defines.reserve(n);
    next_var_ = 1 + cs_.n_public + cs_.n_free;
    uint32_t asserts_left = cs_.n_free;
    uint32_t defining_left = n - cs_.n_free;
    for (uint32_t row = 0; row < n; ++row) {
      const bool assert_now =
          defining_left == 0 ||
          (!bools_.empty() && below(g_, uint64_t(asserts_left) + defining_left) < asserts_left);
      if (assert_now) {
        assertion();
        --asserts_left;
      } else {
        defining(row == 0);
        --defining_left;
      }
    }
  }

 private:
  // ---- choosing variables and coefficients ---------------------------------

  /// An existing variable: half the time one of the latest, else any.
  uint32_t any_var() {
    const uint64_t have = next_var_;
    if (g_.next() & 1)
      return static_cast<uint32_t>(have - 1 - below(g_, std::min(have, recent_window)));
    return static_cast<uint32_t>(below(g_, have));
  }
  /// An existing boolean variable, with the same locality.
  uint32_t any_bool() {
    const uint64_t have = bools_.size();
    if (g_.next() & 1) return bools_[have - 1 - below(g_, std::min(have, recent_window))];
    return bools_[below(g_, have)];
  }
  fr coefficient() {
    const uint64_t u = below(g_, 100);
    if (u < 55) return fr::one();
    if (u < 70) return -fr::one();
    if (u < 85) return fr::from_u64(2 + below(g_, 65534));
    return uniform_nonzero<fr>(g_);
  }

  // ---- emitting terms --------------------------------------------------------

  void push(uint32_t signal, const fr& coef) { cs_.terms.push_back({signal, coef}); }
  void end_matrix() { cs_.offsets.push_back(cs_.terms.size()); }

  /// A linear combination of `k` distinct earlier variables (fewer when
  /// fewer exist), plus w0 when `with_one`.
  void combination(unsigned k, bool with_one) {
    const std::size_t first = cs_.terms.size();
    if (with_one) push(0, coefficient());
    k = static_cast<unsigned>(std::min<uint64_t>(k, next_var_));
    for (unsigned i = 0; i < k; ++i) {
      uint32_t v = any_var();
      // Distinct signals within a combination; give up after a few tries.
      for (int tries = 0; tries < 8 && contains(first, v); ++tries) v = any_var();
      if (!contains(first, v)) push(v, coefficient());
    }
  }
  bool contains(std::size_t first, uint32_t v) const {
    for (std::size_t i = first; i < cs_.terms.size(); ++i)
      if (cs_.terms[i].signal == v) return true;
    return false;
  }

  /// Weighted term counts: 1..4 with weights 4:3:2:1, or 1..3 with 5:3:2.
  unsigned left_size() {
    const uint64_t u = below(g_, 10);
    return u < 4 ? 1 : u < 7 ? 2 : u < 9 ? 3 : 4;
  }
  unsigned right_size() {
    const uint64_t u = below(g_, 10);
    return u < 5 ? 1 : u < 8 ? 2 : 3;
  }

  // ---- rows ------------------------------------------------------------------

  void assertion() {
    const uint32_t b = any_bool();
    push(b, fr::one());  // A: b
    end_matrix();
    push(b, fr::one());  // B: b - 1
    push(0, -fr::one());
    end_matrix();
    end_matrix();  // C: empty
    cs_.kinds.push_back(row_kind::assertion);
    cs_.defines.push_back(r1cs<C>::none);
  }

  void defining(bool first) {
    row_kind kind = row_kind::boolean;
    if (!first) {
      const uint64_t u = below(g_, 100);
      for (const auto& k : defining_kinds)
        if (u < k.cumulative_percent) {
          kind = k.kind;
          break;
        }
    }
    // Gates on two booleans need two distinct ones; fall back to a new bit.
    if ((kind == row_kind::and_gate || kind == row_kind::xor_gate) && bools_.size() < 2)
      kind = row_kind::boolean;
    if (kind == row_kind::select && (bools_.empty() || next_var_ < 2)) kind = row_kind::boolean;

    const uint32_t out = next_var_;
    const fr one = fr::one();
    bool out_is_bool = false;
    switch (kind) {
      case row_kind::boolean:
        push(out, one), end_matrix();
        push(out, one), end_matrix();
        push(out, one), end_matrix();
        out_is_bool = true;
        break;
      case row_kind::and_gate:
      case row_kind::xor_gate: {
        const uint32_t b1 = any_bool();
        uint32_t b2 = any_bool();
        while (b2 == b1) b2 = any_bool();
        const bool is_xor = kind == row_kind::xor_gate;
        push(b1, is_xor ? fr::from_u64(2) : one), end_matrix();
        push(b2, one), end_matrix();
        if (is_xor) {
          push(out, -one);  // C: b1 + b2 - o, o first
          push(b1, one);
          push(b2, one);
        } else {
          push(out, one);
        }
        end_matrix();
        out_is_bool = true;
        break;
      }
      case row_kind::select: {
        const uint32_t b = any_bool();
        const uint32_t x = any_var();
        uint32_t y = any_var();
        while (y == x) y = any_var();
        push(b, one), end_matrix();
        push(x, one), push(y, -one), end_matrix();
        push(out, one), push(y, -one), end_matrix();
        out_is_bool = is_bool_[x] && is_bool_[y];
        break;
      }
      case row_kind::product:
        combination(left_size(), below(g_, 5) == 0), end_matrix();
        combination(right_size(), false), end_matrix();
        push(out, one), end_matrix();
        break;
      case row_kind::linear:
        combination(2 + static_cast<unsigned>(below(g_, 5)), false), end_matrix();
        push(0, one), end_matrix();
        push(out, one), end_matrix();
        break;
      case row_kind::assertion:
        break;  // not a defining kind
    }
    cs_.kinds.push_back(kind);
    cs_.defines.push_back(out);
    ++next_var_;
    is_bool_.push_back(out_is_bool);
    if (out_is_bool) bools_.push_back(out);
  }

 private:
  r1cs<C>& cs_;
  rng g_;
  std::vector<bool> is_bool_;    ///< by variable
  std::vector<uint32_t> bools_;  ///< boolean variables defined so far
  uint32_t next_var_ = 0;
};

}  // namespace

template <class C>
r1cs<C> random_r1cs(uint32_t constraints, uint32_t n_public, uint64_t seed) {
  if (constraints == 0) throw std::invalid_argument("a circuit needs at least one constraint");
  const uint64_t vars = 1ull + n_public + constraints;
  if (vars > std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument(std::to_string(constraints) + " constraints and " +
                                std::to_string(n_public) +
                                " public inputs need more than 2^32 - 1 variables");
  r1cs<C> cs;
  cs.n_public = n_public;
  cs.n_constraints = constraints;
  cs.n_free = constraints / rows_per_free_input;
  cs.n_vars = static_cast<uint32_t>(vars);
  generator<C>(cs, seed).run();
  return cs;
}

template <class C>
typename C::fr evaluate_row(const r1cs<C>& cs, uint32_t row, unsigned matrix,
                            const typename C::scalar* witness) {
  using fr = typename C::fr;
  fr acc = fr::zero();
  for (const term<C>* t = cs.begin(row, matrix); t != cs.end(row, matrix); ++t)
    acc += t->coef * fr::from_standard(witness[t->signal]);
  return acc;
}

template <class C>
std::vector<typename C::scalar> random_witness(const r1cs<C>& cs, uint64_t seed, uint32_t index) {
  using fr = typename C::fr;
  rng g = stream(seed, purpose::witness, index);
  std::vector<fr> w(cs.n_vars);
  w[0] = fr::one();
  const uint32_t inputs = 1 + cs.n_public + cs.n_free;
  for (uint32_t v = 1; v < inputs; ++v) w[v] = uniform<fr>(g);
  auto sum = [&](const term<C>* t, const term<C>* e) {
    fr acc = fr::zero();
    for (; t != e; ++t) acc += t->coef * w[t->signal];
    return acc;
  };
  for (uint32_t row = 0; row < cs.n_constraints; ++row) {
    const uint32_t out = cs.defines[row];
    if (out == r1cs<C>::none) continue;
    if (cs.kinds[row] == row_kind::boolean) {
      w[out] = (g.next() >> 63) ? fr::one() : fr::zero();
      continue;
    }
    // c_out * o + rest = a * b with c_out = +-1 (its own inverse), so
    // o = c_out * (a * b - rest).
    const term<C>* c = cs.begin(row, 2);
    const fr ab = sum(cs.begin(row, 0), cs.end(row, 0)) * sum(cs.begin(row, 1), cs.end(row, 1));
    w[out] = c->coef * (ab - sum(c + 1, cs.end(row, 2)));
  }
  std::vector<typename C::scalar> out(cs.n_vars);
  for (uint32_t v = 0; v < cs.n_vars; ++v) out[v] = w[v].to_standard();
  return out;
}

template <class C>
uint32_t first_unsatisfied(const r1cs<C>& cs, const typename C::scalar* witness) {
  for (uint32_t row = 0; row < cs.n_constraints; ++row)
    if (evaluate_row(cs, row, 0, witness) * evaluate_row(cs, row, 1, witness) !=
        evaluate_row(cs, row, 2, witness))
      return row;
  return cs.n_constraints;
}

#define PL_INSTANTIATE(C)                                                                \
  template r1cs<C> random_r1cs<C>(uint32_t, uint32_t, uint64_t);                         \
  template std::vector<C::scalar> random_witness<C>(const r1cs<C>&, uint64_t, uint32_t); \
  template uint32_t first_unsatisfied<C>(const r1cs<C>&, const C::scalar*);              \
  template C::fr evaluate_row<C>(const r1cs<C>&, uint32_t, unsigned, const C::scalar*);
PL_INSTANTIATE(bn254)
PL_INSTANTIATE(bls12_381)
#undef PL_INSTANTIATE

}  // namespace proofline::zk::dev
