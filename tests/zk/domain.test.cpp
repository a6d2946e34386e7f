// The roots of unity and coset generators of zk/groth16/domain.hpp against
// the constants snarkjs itself uses (tests/fixtures/constants/<curve>.json,
// dumped from snarkjs's ffjavascript).
#include "zk/groth16/domain.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/gpu/helpers.hpp"  // fixture files, decimals

using namespace proofline;
using zk::groth16::roots;

namespace {

template <class C>
nlohmann::json constants() {
  const std::string path = std::string(PROOFLINE_FIXTURES_DIR) + "/constants/" + C::name + ".json";
  REQUIRE_MESSAGE(test::file_exists(path),
                  path << " is missing: run scripts/make-fixtures.sh to dump snarkjs's constants");
  return nlohmann::json::parse(test::read_text(path));
}

template <class C>
typename C::scalar dec(const nlohmann::json& j) {
  return test::from_decimal<C::fr::N>(j.template get<std::string>());
}

template <class C>
void check_roots_match_snarkjs() {
  using fr = typename C::fr;
  using R = roots<fr>;
  const auto k = constants<C>();
  const auto& F = k.at("Fr");
  REQUIRE(F.at("s").template get<unsigned>() == R::max_log);
  CHECK(R::nqr().to_standard() == dec<C>(F.at("nqr")));
  CHECK(R::shift().to_standard() == dec<C>(F.at("shift")));
  REQUIRE(F.at("w").size() == R::max_log + 1);
  REQUIRE(F.at("wi").size() == R::max_log + 1);
  for (unsigned i = 0; i <= R::max_log; ++i) {
    CAPTURE(i);
    CHECK(R::root(i).to_standard() == dec<C>(F.at("w")[i]));
    CHECK(R::inverse_root(i).to_standard() == dec<C>(F.at("wi")[i]));
    CHECK(R::odd_coset_generator(i).to_standard() == dec<C>(F.at("odd_coset_inc").at(std::to_string(i))));
    CHECK((R::inverse_size(i) * fr::from_u64(uint64_t(1) << i)).is_one());
  }
  CHECK_THROWS_AS(R::root(R::max_log + 1), std::out_of_range);
}

}  // namespace

TEST_CASE("roots of unity and the odd-coset generator equal snarkjs's on bn254") {
  check_roots_match_snarkjs<zk::bn254>();
}

TEST_CASE("roots of unity and the odd-coset generator equal snarkjs's on bls12_381") {
  check_roots_match_snarkjs<zk::bls12_381>();
}

TEST_CASE("w[k] has order exactly 2^k") {
  using fr = zk::bn254::fr;
  for (unsigned k : {1u, 2u, 5u, 28u}) {
    fr x = roots<fr>::root(k);
    for (unsigned i = 0; i + 1 < k; ++i) x = x.sqr();  // x = w^(2^(k-1))
    CHECK(x == -fr::one());                            // so w^(2^k) = 1, not earlier
  }
}
