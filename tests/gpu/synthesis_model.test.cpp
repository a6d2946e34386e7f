// The lc synthesis model (zk/groth16/synthesis_model.hpp): the same a, b, c
// as synthesize_abc bit for bit, so the same proof from the CPU backend with
// r = s = 0; and exactly the allocations its documented model predicts,
// checked against the predictor on the fixture keys and against counts
// worked out by hand on a key built here.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "helpers.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/prover.hpp"
#include "zk/groth16/synthesis_model.hpp"

using namespace proofline;
namespace g16 = zk::groth16;

namespace {

template <class C>
struct loaded {
  g16::key_ptr handle;
  const g16::proving_key<C>* key = nullptr;
  std::vector<typename C::scalar> witness;

  explicit loaded(const char* size) {
    const std::string dir = test::fixture_dir<C>(size);
    REQUIRE_MESSAGE(test::file_exists(dir + "/circuit.zkey"),
                    dir << "/circuit.zkey is missing: run scripts/make-fixtures.sh");
    handle = zk::formats::load_zkey(dir + "/circuit.zkey", 2);
    key = &g16::typed<C>(*handle);
    witness.resize(key->info.n_vars);
    zk::formats::read_witness<C>(dir + "/witness_0.wtns", *handle, witness.data());
  }

  /// A partition whose a, b, c come from the chosen synthesis.
  std::shared_ptr<gpu::partition<C>> partition(g16::synthesis_model model,
                                               g16::lc_allocations* counted = nullptr) const {
    const auto& info = key->info;
    auto p = std::make_shared<gpu::partition<C>>();
    p->witness = memory::buffer<typename C::scalar>(info.n_vars);
    std::copy(witness.begin(), witness.end(), p->witness.begin());
    p->a = memory::buffer<typename C::fr>(info.domain_size);
    p->b = memory::buffer<typename C::fr>(info.domain_size);
    p->c = memory::buffer<typename C::fr>(info.domain_size);
    if (model == g16::synthesis_model::lc)
      g16::synthesize_lc<C>(*key, witness.data(), p->a.data(), p->b.data(), p->c.data(), counted);
    else
      g16::synthesize_abc<C>(*key, witness.data(), p->a.data(), p->b.data(), p->c.data());
    return p;
  }
};

template <class C>
void check_same_abc(const char* size) {
  loaded<C> fx(size);
  const std::size_t n = fx.key->info.domain_size;
  auto plain = fx.partition(g16::synthesis_model::plain);
  auto lc = fx.partition(g16::synthesis_model::lc);
  CHECK(std::equal(plain->a.begin(), plain->a.end(), lc->a.begin()));
  CHECK(std::equal(plain->b.begin(), plain->b.end(), lc->b.begin()));
  CHECK(std::equal(plain->c.begin(), plain->c.end(), lc->c.begin()));
  // Not all zero: a model that wrote nothing would fail above only by luck.
  CHECK(std::any_of(lc->a.begin(), lc->a.end(), [](const auto& x) { return !x.is_zero(); }));

  // Coefficients out of row order take the index path and give the same.
  auto shuffled = *fx.key;
  std::reverse(shuffled.coefs_a.begin(), shuffled.coefs_a.end());
  std::swap(shuffled.coefs_b.front(), shuffled.coefs_b.back());
  std::vector<typename C::fr> a(n), b(n), c(n);
  g16::lc_allocations counted;
  g16::synthesize_lc<C>(shuffled, fx.witness.data(), a.data(), b.data(), c.data(), &counted);
  CHECK(std::equal(a.begin(), a.end(), plain->a.begin()));
  CHECK(std::equal(b.begin(), b.end(), plain->b.begin()));
  CHECK(std::equal(c.begin(), c.end(), plain->c.begin()));
  CHECK(counted.index_blocks == 4);  // row starts and a permutation, for A and for B
}

template <class C>
void check_same_proof() {
  using fr = typename C::fr;
  loaded<C> fx("small");
  auto backend = gpu::make_cpu_backend(2);
  const auto rp = backend->prove(fx.handle, fx.partition(g16::synthesis_model::plain));
  const auto rl = backend->prove(fx.handle, fx.partition(g16::synthesis_model::lc));
  const auto& mp = static_cast<const gpu::result<C>&>(*rp).msm;
  const auto& ml = static_cast<const gpu::result<C>&>(*rl).msm;
  const auto pp = g16::assemble<C>(*fx.key, mp, fr::zero(), fr::zero());
  const auto pl = g16::assemble<C>(*fx.key, ml, fr::zero(), fr::zero());
  CHECK(pp.a == pl.a);
  CHECK(pp.b == pl.b);
  CHECK(pp.c == pl.c);
}

template <class C>
void check_counts_match_model(const char* size) {
  loaded<C> fx(size);
  g16::lc_allocations counted;
  fx.partition(g16::synthesis_model::lc, &counted);
  const auto predicted = g16::lc_predict<C>(*fx.key);
  CHECK(counted.lc_blocks == predicted.lc_blocks);
  CHECK(counted.lc_bytes == predicted.lc_bytes);
  CHECK(counted.vector_blocks == predicted.vector_blocks);
  CHECK(counted.vector_bytes == predicted.vector_bytes);
  CHECK(counted.index_blocks == 0);  // snarkjs keys come sorted by row
  CHECK(counted.largest == predicted.largest);
  CHECK(counted.frees == counted.blocks());  // nothing outlives the call
  CHECK(counted.live == 0);
  // lc-keep: the same a, b, c and the same blocks, plus the list of kept rows.
  const auto n = fx.key->info.domain_size;
  std::vector<typename C::fr> a(n), b(n), c(n);
  g16::lc_allocations kept;
  g16::synthesize_lc<C>(*fx.key, fx.witness.data(), a.data(), b.data(), c.data(), &kept,
                        g16::lc_keep_every);
  auto plain = fx.partition(g16::synthesis_model::plain);
  CHECK(std::equal(a.begin(), a.end(), plain->a.begin()));
  CHECK(std::equal(c.begin(), c.end(), plain->c.begin()));
  const auto kept_predicted = g16::lc_predict<C>(*fx.key, g16::lc_keep_every);
  CHECK(kept.lc_blocks == counted.lc_blocks);
  CHECK(kept.vector_blocks == kept_predicted.vector_blocks);
  CHECK(kept.vector_bytes == kept_predicted.vector_bytes);
  CHECK(kept.vector_blocks == counted.vector_blocks + g16::lc_growth_steps(n / g16::lc_keep_every));
  CHECK(kept.frees == kept.blocks());
  CHECK(kept.peak_live > counted.peak_live);  // kept combinations still live at the end
  // Every row with a term allocates at least one block.
  CHECK(counted.lc_blocks >= fx.key->info.domain_size / 2);
  // The outputs end at exactly n elements each (n is a power of two >= 4).
  CHECK(counted.largest >= uint64_t(fx.key->info.domain_size) * sizeof(typename C::fr));
}

}  // namespace

TEST_CASE("the lc model's vectors grow from 4 elements by doubling") {
  CHECK(g16::lc_growth_steps(0) == 0);
  CHECK(g16::lc_growth_steps(1) == 1);
  CHECK(g16::lc_growth_steps(4) == 1);
  CHECK(g16::lc_growth_steps(5) == 2);
  CHECK(g16::lc_growth_steps(8) == 2);
  CHECK(g16::lc_growth_steps(9) == 3);
  CHECK(g16::lc_growth_steps(uint64_t(1) << 20) == 19);
  CHECK(g16::lc_growth_elements(0) == 0);
  CHECK(g16::lc_growth_elements(3) == 4);
  CHECK(g16::lc_growth_elements(9) == 4 + 8 + 16);
  CHECK(g16::parse_synthesis_model("lc") == g16::synthesis_model::lc);
  CHECK(g16::parse_synthesis_model("plain") == g16::synthesis_model::plain);
  CHECK(g16::parse_synthesis_model("lc-keep") == g16::synthesis_model::lc_keep);
  CHECK(std::string(g16::to_string(g16::synthesis_model::lc_keep)) == "lc-keep");
  CHECK_FALSE(g16::parse_synthesis_model("LC"));
  CHECK(std::string(g16::to_string(g16::synthesis_model::lc)) == "lc");
}

TEST_CASE("synthesize_lc gives synthesize_abc's a, b, c bit for bit") {
  SUBCASE("bn254") { check_same_abc<zk::bn254>("medium"); }
  SUBCASE("bls12_381") { check_same_abc<zk::bls12_381>("small"); }
}

TEST_CASE("a proof from lc-synthesized a, b, c equals the plain one with r = s = 0") {
  SUBCASE("bn254") { check_same_proof<zk::bn254>(); }
  SUBCASE("bls12_381") { check_same_proof<zk::bls12_381>(); }
}

TEST_CASE("synthesize_lc allocates what lc_predict says on the fixture keys") {
  SUBCASE("bn254") { check_counts_match_model<zk::bn254>("medium"); }
  SUBCASE("bls12_381") { check_counts_match_model<zk::bls12_381>("small"); }
}

TEST_CASE("synthesize_lc allocates the counts worked out by hand for a small key") {
  using C = zk::bn254;
  using fr = C::fr;
  // n = 8 rows, w = (1, x, v2, v3, v4, v5): n_public = 1, aux = w2..w5.
  g16::proving_key<C> key;
  key.info.curve = C::id;
  key.info.domain_size = 8;
  key.info.log_domain = 3;
  key.info.n_vars = 6;
  key.info.n_public = 1;
  const fr one = fr::one();
  // Row 0: A = w0 + w2 (1 input, 1 aux term), B = w3.     C: one aux term.
  // Row 1: A = w1 + w2 + w3 + w4 + w5 (1 input, 4 aux),   B empty: no C term.
  // Row 2: B = w2 + w3 + w4 + w5 + w2, five aux terms (the model keeps a
  //        repeated signal as its own term);            A empty: no C term.
  // Rows 3..7: nothing.
  key.coefs_a = {{0, 0, one}, {0, 2, one}, {1, 1, one}, {1, 2, one},
                 {1, 3, one}, {1, 4, one}, {1, 5, one}};
  key.coefs_b = {{0, 3, one}, {2, 2, one}, {2, 3, one}, {2, 4, one}, {2, 5, one}, {2, 2, one}};
  std::vector<C::scalar> w(6);
  for (unsigned i = 0; i < 6; ++i) {
    w[i] = C::scalar::zero();
    w[i].l[0] = i + 1;
  }
  std::vector<fr> a(8), b(8), c(8), a1(8), b1(8), c1(8);
  g16::lc_allocations got;
  g16::synthesize_lc<C>(key, w.data(), a.data(), b.data(), c.data(), &got);
  g16::synthesize_abc<C>(key, w.data(), a1.data(), b1.data(), c1.data());
  CHECK(a == a1);
  CHECK(b == b1);
  CHECK(c == c1);

  const uint64_t term = sizeof(g16::lc_term<C>), elem = sizeof(fr);
  // LC blocks: row 0: A inputs 1 block (4), A aux 1 (4), B aux 1 (4), C aux 1 (4);
  //            row 1: A inputs 1 (4), A aux 1 (4 terms fit in 4);
  //            row 2: B aux 5 terms: blocks of 4 and 8.
  CHECK(got.lc_blocks == 4 + 2 + 2);
  CHECK(got.lc_bytes == term * (4 * 4 + 4 + 4 + 4 + 8));
  // Vectors: inputs (2 values: one block of 4), aux (4 values: one block of
  // 4), a, b, c (8 values each: blocks of 4 and 8).
  CHECK(got.vector_blocks == 1 + 1 + 3 * 2);
  CHECK(got.vector_bytes == elem * (4 + 4 + 3 * (4 + 8)));
  CHECK(got.largest == std::max(8 * elem, 8 * term));  // a, b, c's last block; row 2's B terms
  CHECK(got.index_blocks == 0);
  CHECK(got.frees == got.blocks());
  CHECK(got.peak_live >= 3 * 8 * elem);  // a, b, c at full size at the end

  const auto predicted = g16::lc_predict<C>(key);
  CHECK(predicted.lc_blocks == got.lc_blocks);
  CHECK(predicted.lc_bytes == got.lc_bytes);
  CHECK(predicted.vector_blocks == got.vector_blocks);
  CHECK(predicted.vector_bytes == got.vector_bytes);

  SUBCASE("a coefficient outside the domain is an error, as in synthesize_abc") {
    key.coefs_a.push_back({8, 1, one});
    CHECK_THROWS_AS(g16::synthesize_lc<C>(key, w.data(), a.data(), b.data(), c.data()),
                    std::out_of_range);
  }
  SUBCASE("a signal outside the witness is an error") {
    key.coefs_b.push_back({3, 6, one});
    CHECK_THROWS_WITH_AS(g16::synthesize_lc<C>(key, w.data(), a.data(), b.data(), c.data()),
                         doctest::Contains("signal 6"), std::out_of_range);
  }
}
