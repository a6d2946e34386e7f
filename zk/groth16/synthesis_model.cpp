#include "zk/groth16/synthesis_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace proofline::zk::groth16 {

const char* to_string(synthesis_model m) {
  switch (m) {
    case synthesis_model::lc:
      return "lc";
    case synthesis_model::lc_keep:
      return "lc-keep";
    case synthesis_model::plain:
      break;
  }
  return "plain";
}

std::optional<synthesis_model> parse_synthesis_model(std::string_view text) {
  if (text == "plain") return synthesis_model::plain;
  if (text == "lc") return synthesis_model::lc;
  if (text == "lc-keep") return synthesis_model::lc_keep;
  return std::nullopt;
}

uint64_t lc_growth_steps(uint64_t k) {
  uint64_t steps = 0;
  for (uint64_t cap = 0; cap < k; cap = cap ? 2 * cap : 4) ++steps;
  return steps;
}

uint64_t lc_growth_elements(uint64_t k) {
  const uint64_t steps = lc_growth_steps(k);
  return steps ? 4 * ((uint64_t(1) << steps) - 1) : 0;
}

namespace {

/// What an allocation is for, so counts land in the right field.
enum class block_kind : uint8_t { lc, vector, index };

/// std::allocator's interface over malloc/free that counts every block into
/// an lc_allocations. The pointer escapes through an empty asm statement so
/// that the compiler cannot elide a block that is built and dropped unread.
template <class T>
struct counting_allocator {
  using value_type = T;
  lc_allocations* counts;
  block_kind kind;

  counting_allocator(lc_allocations* c, block_kind k) : counts(c), kind(k) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) : counts(o.counts), kind(o.kind) {}

  // Out of line: one call per block costs nothing next to malloc, and it
  // keeps g++ 12 from a false -Wuse-after-free on the inlined vector code.
  __attribute__((noinline)) T* allocate(std::size_t n) {
    const uint64_t bytes = uint64_t(n) * sizeof(T);
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    asm volatile("" : : "r"(p) : "memory");
    switch (kind) {
      case block_kind::lc:
        ++counts->lc_blocks;
        counts->lc_bytes += bytes;
        break;
      case block_kind::vector:
        ++counts->vector_blocks;
        counts->vector_bytes += bytes;
        break;
      case block_kind::index:
        ++counts->index_blocks;
        counts->index_bytes += bytes;
        break;
    }
    counts->largest = std::max(counts->largest, bytes);
    counts->live += bytes;
    counts->peak_live = std::max(counts->peak_live, counts->live);
    return static_cast<T*>(p);
  }
  __attribute__((noinline)) void deallocate(T* p, std::size_t n) {
    asm volatile("" : : "r"(p) : "memory");
    std::free(p);
    ++counts->frees;
    counts->live -= uint64_t(n) * sizeof(T);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const {
    return counts == o.counts;
  }
  template <class U>
  bool operator!=(const counting_allocator<U>& o) const {
    return counts != o.counts;
  }

};

template <class T>
using counted_vector = std::vector<T, counting_allocator<T>>;

/// push_back with the model's growth: room for 4 first, then twice the
/// capacity (reserve(n) allocates exactly n elements).
template <class T>
void push(counted_vector<T>& v, T x) {
  if (v.size() == v.capacity()) v.reserve(v.capacity() ? 2 * v.capacity() : 4);
  v.push_back(std::move(x));
}

/// One linear combination: terms on public inputs and on aux variables.
template <class C>
struct linear_combination {
  counted_vector<lc_term<C>> inputs, aux;
  explicit linear_combination(lc_allocations* counts)
      : inputs(counting_allocator<lc_term<C>>(counts, block_kind::lc)),
        aux(counting_allocator<lc_term<C>>(counts, block_kind::lc)) {}
};

/// A row whose combinations outlive it (lc-keep).
template <class C>
struct kept_row {
  linear_combination<C> a, b, c;
};

/// The coefficients of one matrix, row by row: directly when they are sorted
/// by constraint (a cursor), through a counting-sort permutation otherwise.
template <class C>
class row_walker {
 public:
  row_walker(const key_vector<coef<C>>& coefs, std::size_t n, lc_allocations* counts,
             const char* matrix)
      : coefs_(coefs),
        matrix_(matrix),
        order_(counting_allocator<uint32_t>(counts, block_kind::index)) {
    for (std::size_t i = 0; i < coefs.size(); ++i) {
      if (coefs[i].constraint >= n) out_of_domain(coefs[i], n);
      if (i > 0 && coefs[i].constraint < coefs[i - 1].constraint) sorted_ = false;
    }
    if (sorted_) return;
    counted_vector<uint32_t> start(n + 1, 0, counting_allocator<uint32_t>(counts, block_kind::index));
    for (const auto& k : coefs) ++start[k.constraint + 1];
    for (std::size_t r = 0; r < n; ++r) start[r + 1] += start[r];
    order_.resize(coefs.size());
    for (std::size_t i = 0; i < coefs.size(); ++i)
      order_[start[coefs[i].constraint]++] = static_cast<uint32_t>(i);
  }

  /// Calls f(coef) for every coefficient of row r; rows must be asked for in
  /// increasing order.
  template <class F>
  void row(uint32_t r, F&& f) {
    if (sorted_) {
      while (next_ < coefs_.size() && coefs_[next_].constraint == r) f(coefs_[next_++]);
    } else {
      while (next_ < order_.size() && coefs_[order_[next_]].constraint == r) f(coefs_[order_[next_++]]);
    }
  }

  [[noreturn]] void out_of_domain(const coef<C>& k, std::size_t n) const {
    throw std::out_of_range(std::string("coefficient of ") + matrix_ + " at constraint " +
                            std::to_string(k.constraint) + ", signal " + std::to_string(k.signal) +
                            " lies outside the key's domain (" + std::to_string(n) + ")");
  }

 private:
  const key_vector<coef<C>>& coefs_;
  const char* matrix_;
  bool sorted_ = true;
  counted_vector<uint32_t> order_;
  std::size_t next_ = 0;
};

/// Appends the coefficient `k` to `lc` as bellperson files it: on a public
/// input (signal <= n_public) or on aux variable signal - n_public - 1.
template <class C>
void add_term(linear_combination<C>& lc, const coef<C>& k, const key_info& info,
              const char* matrix) {
  if (k.signal >= info.n_vars)
    throw std::out_of_range(std::string("coefficient of ") + matrix + " at constraint " +
                            std::to_string(k.constraint) + ", signal " + std::to_string(k.signal) +
                            " lies outside the key's witness (" + std::to_string(info.n_vars) + ")");
  if (k.signal <= info.n_public)
    push(lc.inputs, lc_term<C>{k.signal, k.value});
  else
    push(lc.aux, lc_term<C>{k.signal - info.n_public - 1u, k.value});
}

/// sum coeff * assignment[index] over both halves. The coefficients are the
/// zkey's c * R^2 and the assignment holds standard-form values read as
/// Montgomery limbs, so each product is Montgomery(c * w), as in
/// synthesize_abc.
template <class C>
typename C::fr evaluate(const linear_combination<C>& lc, const counted_vector<typename C::fr>& inputs,
                        const counted_vector<typename C::fr>& aux) {
  auto acc = C::fr::zero();
  for (const auto& t : lc.inputs) acc += t.coeff * inputs[t.index];
  for (const auto& t : lc.aux) acc += t.coeff * aux[t.index];
  return acc;
}

}  // namespace

template <class C>
std::size_t kept_combination_bytes() {
  return sizeof(kept_row<C>);
}

template <class C>
lc_allocations lc_predict(const proving_key<C>& key, uint32_t keep_every) {
  const key_info& info = key.info;
  const std::size_t n = info.domain_size;
  // Per row: terms of A and B on inputs and on aux variables.
  std::vector<uint8_t> seen(n, 0);  // bit 0: A has terms, bit 1: B has terms
  lc_allocations out;
  auto add_vector = [&](uint64_t k, uint64_t elem, uint64_t& blocks, uint64_t& bytes) {
    const uint64_t steps = lc_growth_steps(k);
    blocks += steps;
    bytes += lc_growth_elements(k) * elem;
    if (steps) out.largest = std::max(out.largest, (uint64_t(4) << (steps - 1)) * elem);
  };
  auto matrix = [&](const key_vector<coef<C>>& coefs, uint8_t bit) {
    std::vector<uint32_t> in(n, 0), ax(n, 0);
    bool sorted = true;
    for (std::size_t i = 0; i < coefs.size(); ++i) {
      const auto& k = coefs[i];
      if (k.constraint >= n) continue;
      (k.signal <= info.n_public ? in : ax)[k.constraint]++;
      seen[k.constraint] |= bit;
      if (i > 0 && k.constraint < coefs[i - 1].constraint) sorted = false;
    }
    for (std::size_t r = 0; r < n; ++r) {
      add_vector(in[r], sizeof(lc_term<C>), out.lc_blocks, out.lc_bytes);
      add_vector(ax[r], sizeof(lc_term<C>), out.lc_blocks, out.lc_bytes);
    }
    if (!sorted) {
      out.index_blocks += 2;
      const uint64_t start = (uint64_t(n) + 1) * sizeof(uint32_t);
      const uint64_t order = uint64_t(coefs.size()) * sizeof(uint32_t);
      out.index_bytes += start + order;
      out.largest = std::max({out.largest, start, order});
    }
  };
  matrix(key.coefs_a, 1);
  matrix(key.coefs_b, 2);
  // C: one aux term on rows with both A and B terms.
  for (std::size_t r = 0; r < n; ++r)
    if (seen[r] == 3 && info.n_private() > 0) add_vector(1, sizeof(lc_term<C>), out.lc_blocks, out.lc_bytes);
  // Assignment (inputs, aux) and the three outputs.
  const uint64_t fr_bytes = sizeof(typename C::fr);
  add_vector(uint64_t(info.n_public) + 1, fr_bytes, out.vector_blocks, out.vector_bytes);
  add_vector(info.n_private(), fr_bytes, out.vector_blocks, out.vector_bytes);
  for (int v = 0; v < 3; ++v) add_vector(n, fr_bytes, out.vector_blocks, out.vector_bytes);
  if (keep_every > 0)
    add_vector((uint64_t(n) + keep_every - 1) / keep_every, sizeof(kept_row<C>), out.vector_blocks,
               out.vector_bytes);
  out.frees = out.blocks();
  return out;
}

template <class C>
void synthesize_lc(const proving_key<C>& key, const typename C::scalar* witness,
                   typename C::fr* a, typename C::fr* b, typename C::fr* c,
                   lc_allocations* counted, uint32_t keep_every) {
  using fr = typename C::fr;
  lc_allocations local;
  lc_allocations* counts = counted ? counted : &local;
  *counts = {};
  const key_info& info = key.info;
  const uint32_t n = info.domain_size;
  {
    auto vec = [&] { return counted_vector<fr>(counting_allocator<fr>(counts, block_kind::vector)); };
    // The assignment, one alloc (push) per variable.
    counted_vector<fr> inputs = vec(), aux = vec();
    for (uint32_t i = 0; i <= info.n_public; ++i) push(inputs, fr::from_montgomery_limbs(witness[i]));
    for (uint32_t i = info.n_public + 1; i < info.n_vars; ++i)
      push(aux, fr::from_montgomery_limbs(witness[i]));

    row_walker<C> rows_a(key.coefs_a, n, counts, "A"), rows_b(key.coefs_b, n, counts, "B");
    counted_vector<fr> out_a = vec(), out_b = vec(), out_c = vec();
    counted_vector<kept_row<C>> kept{counting_allocator<kept_row<C>>(counts, block_kind::vector)};
    const std::size_t n_aux = aux.size();
    for (uint32_t r = 0; r < n; ++r) {
      // enforce(A_r, B_r, C_r): build the three combinations, evaluate, push
      // the values, drop the combinations (in reverse order, as Rust drops).
      linear_combination<C> lc_a(counts), lc_b(counts), lc_c(counts);
      rows_a.row(r, [&](const coef<C>& k) { add_term(lc_a, k, info, "A"); });
      rows_b.row(r, [&](const coef<C>& k) { add_term(lc_b, k, info, "B"); });
      const bool constraint = !(lc_a.inputs.empty() && lc_a.aux.empty()) &&
                              !(lc_b.inputs.empty() && lc_b.aux.empty());
      if (constraint && n_aux > 0) push(lc_c.aux, lc_term<C>{r % n_aux, fr::one()});
      const fr va = evaluate(lc_a, inputs, aux);
      const fr vb = evaluate(lc_b, inputs, aux);
      push(out_a, va);
      push(out_b, vb);
      push(out_c, va * vb);
      if (keep_every > 0 && r % keep_every == 0)
        push(kept, kept_row<C>{std::move(lc_a), std::move(lc_b), std::move(lc_c)});
    }
    std::copy(out_a.begin(), out_a.end(), a);
    std::copy(out_b.begin(), out_b.end(), b);
    std::copy(out_c.begin(), out_c.end(), c);
  }  // assignment, index and outputs freed here
}

#define PROOFLINE_INSTANTIATE_SYNTHESIS_MODEL(C)                                                 \
  template std::size_t kept_combination_bytes<C>();                                              \
  template lc_allocations lc_predict<C>(const proving_key<C>&, uint32_t);                        \
  template void synthesize_lc<C>(const proving_key<C>&, const C::scalar*, C::fr*, C::fr*, C::fr*, \
                                 lc_allocations*, uint32_t);

PROOFLINE_INSTANTIATE_SYNTHESIS_MODEL(bn254)
PROOFLINE_INSTANTIATE_SYNTHESIS_MODEL(bls12_381)

#undef PROOFLINE_INSTANTIATE_SYNTHESIS_MODEL

}  // namespace proofline::zk::groth16
