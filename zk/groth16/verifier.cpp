#include "zk/groth16/verifier.hpp"

#include <type_traits>
#include <utility>

namespace proofline::zk::groth16 {

namespace {

template <class C, class A>
std::string subgroup_problem(const A& p, const std::string& name) {
  constexpr const char* group = std::is_same_v<A, typename C::g1_affine> ? "G1" : "G2";
  if (!p.is_on_curve()) return name + " is not on the " + group + " curve";
  if (!pairing::in_subgroup<C>(p)) return name + " is not in the " + group + " subgroup";
  return {};
}

verdict fail(std::string reason) { return {false, std::move(reason)}; }

}  // namespace

template <class C>
prepared_key<C> prepare(verifying_key<C> vk) {
  prepared_key<C> k;
  k.vk = std::move(vk);
  const auto& v = k.vk;
  if (v.ic.size() != v.n_public + std::size_t(1)) {
    k.problem = "verification key has " + std::to_string(v.ic.size()) + " IC points for " +
                std::to_string(v.n_public) + " public signals (expected nPublic + 1)";
    return k;
  }
  auto check = [&](std::string problem) {
    if (k.problem.empty() && !problem.empty()) k.problem = "verification key: " + problem;
  };
  check(subgroup_problem<C>(v.alpha1, "alpha1"));
  check(subgroup_problem<C>(v.beta2, "beta2"));
  check(subgroup_problem<C>(v.gamma2, "gamma2"));
  check(subgroup_problem<C>(v.delta2, "delta2"));
  for (std::size_t i = 0; i < v.ic.size() && k.problem.empty(); ++i)
    check(subgroup_problem<C>(v.ic[i], "IC[" + std::to_string(i) + "]"));
  if (k.problem.empty()) k.alpha_beta = pairing::pairing<C>(v.alpha1, v.beta2);
  return k;
}

template <class C>
verdict verify(const prepared_key<C>& key, const proof<C>& p, const typename C::scalar* pub,
               std::size_t count) {
  if (!key.problem.empty()) return fail(key.problem);
  const auto& vk = key.vk;
  if (count != vk.n_public)
    return fail(std::to_string(count) + " public signals, the verification key expects " +
                std::to_string(vk.n_public));
  const auto r = C::fr::modulus();
  auto l = C::g1_jacobian::from_affine(vk.ic[0]);
  for (std::size_t i = 0; i < count; ++i) {
    if (!(pub[i] < r))
      return fail("public signal " + std::to_string(i) + " is not below the scalar field prime");
    l += C::g1_jacobian::from_affine(vk.ic[i + 1]).mul(pub[i]);
  }
  for (auto problem : {subgroup_problem<C>(p.a, "pi_a"), subgroup_problem<C>(p.b, "pi_b"),
                       subgroup_problem<C>(p.c, "pi_c")})
    if (!problem.empty()) return fail(problem);

  const pairing::pair<C> pairs[3] = {{-p.a, p.b}, {l.to_affine(), vk.gamma2}, {p.c, vk.delta2}};
  const auto f = pairing::final_exponentiation<C>(pairing::miller_loop<C>(pairs, 3));
  if (!(f * key.alpha_beta).is_one())
    return fail("the pairing equation e(A, B) = e(alpha, beta) e(L, gamma) e(C, delta) does not hold");
  return {true, {}};
}

#define PL_INSTANTIATE(C)                                         \
  template prepared_key<C> prepare<C>(verifying_key<C>);          \
  template verdict verify<C>(const prepared_key<C>&, const proof<C>&, const C::scalar*, std::size_t);
PL_INSTANTIATE(bn254)
PL_INSTANTIATE(bls12_381)
#undef PL_INSTANTIATE

}  // namespace proofline::zk::groth16
