// The fixed-base engine seam of development keys (zk/dev/fixed_base_engine.hpp):
// every point of a key comes from the engine it is given, for every group
// and curve, and an engine that computes the same products gives the same
// bytes. The CUDA engine is checked against the CPU in tests/cuda.
#include <doctest/doctest.h>

#include <array>
#include <cstring>

#include "helpers.hpp"
#include "zk/dev/fixed_base_engine.hpp"
#include "zk/dev/keygen.hpp"
#include "zk/dev/r1cs.hpp"
#include "zk/dev/toxic_waste.hpp"

using namespace proofline;
using namespace proofline::zk::dev;
using proofline::test::temp_dir;

namespace {

/// Forwards to the CPU engine, counting calls and products per curve and
/// group; with `negate`, hands back -k G instead of k G.
class counting_engine final : public fixed_base_engine {
 public:
  explicit counting_engine(base::thread_pool& pool, bool negate = false)
      : cpu_(pool), negate_(negate) {}

  std::string describe() const override { return "counting"; }
  void mul(const fixed_base<zk::bn254::g1_group>& t, const zk::bn254::fr* k, std::size_t n,
           zk::bn254::g1_affine* out) override {
    forward(0, 0, t, k, n, out);
  }
  void mul(const fixed_base<zk::bn254::g2_group>& t, const zk::bn254::fr* k, std::size_t n,
           zk::bn254::g2_affine* out) override {
    forward(0, 1, t, k, n, out);
  }
  void mul(const fixed_base<zk::bls12_381::g1_group>& t, const zk::bls12_381::fr* k,
           std::size_t n, zk::bls12_381::g1_affine* out) override {
    forward(1, 0, t, k, n, out);
  }
  void mul(const fixed_base<zk::bls12_381::g2_group>& t, const zk::bls12_381::fr* k,
           std::size_t n, zk::bls12_381::g2_affine* out) override {
    forward(1, 1, t, k, n, out);
  }

  /// [curve: 0 bn254, 1 bls12_381][group: 0 G1, 1 G2]
  std::array<std::array<std::size_t, 2>, 2> calls{}, products{};

 private:
  template <class G, class F>
  void forward(int curve, int group, const fixed_base<G>& t, const F* k, std::size_t n,
               zk::ec::affine<G>* out) {
    ++calls[curve][group];
    products[curve][group] += n;
    cpu_.mul(t, k, n, out);
    if (negate_)
      for (std::size_t i = 0; i < n; ++i) out[i] = -out[i];
  }

  cpu_fixed_base_engine cpu_;
  bool negate_;
};

template <class C>
int curve_index() {
  return C::id == zk::curve_id::bn254 ? 0 : 1;
}

template <class C>
void check_every_point_from_engine() {
  constexpr uint32_t n_constraints = 40, n_public = 2;
  constexpr uint64_t seed = 17;
  CAPTURE(C::name);
  temp_dir dir;
  base::thread_pool pool(2);
  const auto cs = random_r1cs<C>(n_constraints, n_public, seed);
  const auto tw = toxic_waste<C>::from_seed(seed);
  const std::string plain = dir / "plain.zkey", counted = dir / "counted.zkey",
                    negated = dir / "negated.zkey";

  // Prepare / Run: the default engine, a counting one, a negating one.
  const auto key = write_dev_zkey<C>(plain, cs, tw, pool);
  counting_engine counter(pool);
  write_dev_zkey<C>(counted, cs, tw, pool, {}, &counter);
  counting_engine negator(pool, true);
  write_dev_zkey<C>(negated, cs, tw, pool, {}, &negator);

  // Verify: same bytes through a faithful engine, and every product went
  // through it: 3 header points per group, then IC, A, B1, C and H in G1
  // and B2 in G2, one call each.
  CHECK(test::read_text(counted) == test::read_text(plain));
  const int c = curve_index<C>();
  const std::size_t n_vars = cs.n_vars, n = key.domain_size;
  CHECK(counter.calls[c][0] == 3 + 5);
  CHECK(counter.calls[c][1] == 3 + 1);
  CHECK(counter.products[c][0] ==
        3 + (n_public + 1) + n_vars + n_vars + (n_vars - n_public - 1) + n);
  CHECK(counter.products[c][1] == 3 + n_vars);
  CHECK(counter.calls[1 - c][0] + counter.calls[1 - c][1] == 0);

  // The negating engine's key holds -P for every point P of the plain one,
  // in every point section (3 IC, 5 A, 6 B1, 7 B2, 8 C, 9 H).
  const std::string a = test::read_text(plain), b = test::read_text(negated);
  REQUIRE(a.size() == b.size());
  CHECK(a != b);
  for (uint32_t id : {3u, 5u, 6u, 7u, 8u, 9u}) {
    CAPTURE(id);
    const auto [pos, size] = test::find_section(a, id);
    CHECK(test::find_section(b, id) == std::make_pair(pos, size));
    auto check_negated = [&](auto point) {
      using A = decltype(point);
      REQUIRE(size % sizeof(A) == 0);
      std::size_t wrong = 0;
      for (uint64_t off = pos; off < pos + size; off += sizeof(A)) {
        A p, q;
        std::memcpy(&p, a.data() + off, sizeof(A));
        std::memcpy(&q, b.data() + off, sizeof(A));
        wrong += q != -p;
      }
      CHECK(wrong == 0);
    };
    if (id == 7)
      check_negated(typename C::g2_affine{});
    else
      check_negated(typename C::g1_affine{});
  }
}

}  // namespace

TEST_CASE("a development key takes every point from its fixed-base engine, bn254") {
  check_every_point_from_engine<zk::bn254>();
}

TEST_CASE("a development key takes every point from its fixed-base engine, bls12_381") {
  check_every_point_from_engine<zk::bls12_381>();
}

TEST_CASE("run_setup hands the key's products to the engine in its options") {
  temp_dir dir;
  base::thread_pool pool(2);
  auto engine = std::make_shared<counting_engine>(pool);
  setup_options o;
  o.curve = zk::curve_id::bls12_381;
  o.constraints = 30;
  o.witnesses = 1;
  o.seed = 4;
  o.threads = 2;
  o.out_dir = dir / "engine";
  o.engine = engine;
  run_setup(o);
  const auto plain = test::small_setup(dir / "plain", o.curve, o.constraints, 1, o.n_public, o.seed);
  CHECK(engine->calls[1][0] == 8);
  CHECK(engine->calls[1][1] == 4);
  CHECK(engine->calls[0][0] + engine->calls[0][1] == 0);
  CHECK(test::read_text(dir / "engine/circuit.zkey") == test::read_text(dir / "plain/circuit.zkey"));
  CHECK(plain.domain_size == 32);
}
