// How synthesis allocates: `plain` (synthesize_abc: a, b, c written straight
// into the caller's buffers, a few large allocations) or `lc`, which computes
// the same a, b, c but allocates the way a bellperson-style synthesizer does.
//
// How such a synthesizer works (bellperson, https://github.com/filecoin-project/bellperson,
// src/groth16/prover: the proving assignment, and src/lc.rs): the circuit's
// code calls `alloc` for every variable, which appends its value to an
// assignment vector (Rust `Vec::push`: the vector grows by doubling), and
// `enforce(a, b, c)` for every constraint, where a, b and c are closures that
// each build a linear combination, a small heap vector of (variable index,
// coefficient) terms, split into the terms on public inputs and those on
// private (aux) variables. The prover evaluates each combination against the
// assignment, appends the three values to its output vectors a, b, c (again
// `Vec::push`), and drops the combinations. So every constraint allocates and
// frees a few small vectors, and the outputs and assignment are reallocated
// each time they double, leaving freed blocks of every size behind.
//
// What `lc` allocates, per partition (the model; lc_predict computes it from
// the key, and synthesize_lc counts what it really does):
//  * assignment: `inputs` gets w[0 ..= n_public], `aux` the other n_vars - 1 -
//    n_public values (Fr, Montgomery form), one push at a time;
//  * per row r of the n-domain, in row order: three combinations A_r, B_r,
//    C_r, each two vectors of lc_term (inputs, aux; an empty one allocates
//    nothing). A_r and B_r hold the key's own coefficients of row r; the key
//    has no C matrix (snarkjs keeps only A and B, since c = a∘b), so C_r holds
//    one aux term when row r has both A and B terms (the variable a
//    constraint defines, its commonest shape) and none otherwise. A_r and B_r
//    are evaluated into a[r], b[r]; c[r] = a[r]·b[r]; C_r is built and dropped;
//  * the outputs a, b, c get one push per row (n pushes each); at the end
//    they are copied into the caller's buffers and freed, with the assignment;
//  * coefficients not sorted by row (snarkjs keys are) need an index per
//    matrix first: a row count array (n + 1 uint32) and a permutation
//    (one uint32 per coefficient).
// Every vector grows as Rust's Vec does: the first push allocates room for
// 4 elements (Rust's minimum for elements of 2 to 1024 bytes), and a full
// vector reallocates at twice its capacity (copy, then free the old block).
// A vector of k elements therefore allocates
// lc_growth_steps(k) = ceil(log2(ceil(k / 4))) + 1 blocks (0 for k = 0) of
// 4, 8, ... elements. All of it runs on the calling thread (bellperson
// synthesizes one circuit on one thread), through malloc/free.
//
// `lc-keep` allocates the same blocks but frees the combinations of every
// 16th row (lc_keep_every) only when synthesis returns, in allocation order,
// standing for gadget state that outlives its constraint (a gadget's own
// linear combinations, bit decompositions): small live blocks left between
// the freed ones, which is what keeps an allocator from giving freed memory
// back inside free(). The kept combinations are held in one more vector of
// n / 16 entries (kept_combination_bytes<C>() each), grown like the others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zk/groth16/proving_key.hpp"

namespace proofline::zk::groth16 {

enum class synthesis_model : uint8_t {
  plain,    ///< synthesize_abc: a, b, c straight into the partition's buffers
  lc,       ///< synthesize_lc: the same a, b, c, allocated like bellperson
  lc_keep,  ///< synthesize_lc keeping every lc_keep_every-th row's combinations to the end
};

/// Rows whose combinations `lc-keep` frees only at the end: one in this many.
inline constexpr uint32_t lc_keep_every = 16;

/// "plain", "lc" or "lc-keep".
const char* to_string(synthesis_model m);

/// Whether one partition's synthesis spreads over the threads it is granted
/// (plain); lc and lc-keep build their combinations row by row on one.
constexpr bool uses_granted_threads(synthesis_model m) { return m == synthesis_model::plain; }

/// The model named `text` ("plain", "lc", "lc-keep"), or nullopt.
std::optional<synthesis_model> parse_synthesis_model(std::string_view text);

/// Allocations of one lc synthesis (counted by synthesize_lc, predicted by
/// lc_predict). Sizes in bytes, as requested from malloc.
struct lc_allocations {
  uint64_t lc_blocks = 0;      ///< term vectors of linear combinations
  uint64_t lc_bytes = 0;
  uint64_t vector_blocks = 0;  ///< assignment (inputs, aux) and outputs a, b, c
  uint64_t vector_bytes = 0;
  uint64_t index_blocks = 0;   ///< row index of a key whose coefficients are not sorted
  uint64_t index_bytes = 0;
  uint64_t largest = 0;        ///< the largest single block
  uint64_t frees = 0;          ///< blocks freed (all of them, once synthesis returns)
  uint64_t live = 0;           ///< bytes live now (0 once synthesis returns)
  uint64_t peak_live = 0;      ///< most bytes live at once (counted only; not predicted)

  uint64_t blocks() const { return lc_blocks + vector_blocks + index_blocks; }
  uint64_t bytes() const { return lc_bytes + vector_bytes + index_bytes; }
};

/// The size of one linear-combination term: a variable index (usize) and a
/// coefficient, as bellperson's (usize, Scalar) pairs.
template <class C>
struct lc_term {
  std::size_t index;
  typename C::fr coeff;
};

/// Blocks a vector of `k` elements allocates when grown from empty with
/// the model's policy (first 4 elements, then doubling).
uint64_t lc_growth_steps(uint64_t k);

/// Elements in all those blocks together: 4 (2^steps - 1).
uint64_t lc_growth_elements(uint64_t k);

/// Bytes of one kept row in lc-keep's list (its three combinations).
template <class C>
std::size_t kept_combination_bytes();

/// What synthesize_lc(key, ..., keep_every) allocates, from the key's
/// coefficient counts per row. O(n + coefficients) time, 9 n bytes of scratch.
template <class C>
lc_allocations lc_predict(const proving_key<C>& key, uint32_t keep_every = 0);

/// a, b, c as synthesize_abc computes them, bit for bit, allocating as the
/// header comment says; with keep_every > 0 the combinations of rows r with
/// r % keep_every == 0 are freed only at the end (lc-keep). `counted`, when
/// given, receives what was allocated. Throws std::out_of_range on a
/// coefficient outside the domain or witness, like synthesize_abc.
template <class C>
void synthesize_lc(const proving_key<C>& key, const typename C::scalar* witness,
                   typename C::fr* a, typename C::fr* b, typename C::fr* c,
                   lc_allocations* counted = nullptr, uint32_t keep_every = 0);

}  // namespace proofline::zk::groth16
