#include "zk/dev/fixed_base_engine.hpp"

namespace proofline::zk::dev {

std::string cpu_fixed_base_engine::describe() const {
  return "CPU, " + std::to_string(pool_.size()) + " thread(s)";
}

void cpu_fixed_base_engine::mul(const fixed_base<bn254::g1_group>& table, const bn254::fr* scalars,
                                std::size_t n, bn254::g1_affine* out) {
  batch_mul(table, scalars, n, out, pool_);
}

void cpu_fixed_base_engine::mul(const fixed_base<bn254::g2_group>& table, const bn254::fr* scalars,
                                std::size_t n, bn254::g2_affine* out) {
  batch_mul(table, scalars, n, out, pool_);
}

void cpu_fixed_base_engine::mul(const fixed_base<bls12_381::g1_group>& table,
                                const bls12_381::fr* scalars, std::size_t n,
                                bls12_381::g1_affine* out) {
  batch_mul(table, scalars, n, out, pool_);
}

void cpu_fixed_base_engine::mul(const fixed_base<bls12_381::g2_group>& table,
                                const bls12_381::fr* scalars, std::size_t n,
                                bls12_381::g2_affine* out) {
  batch_mul(table, scalars, n, out, pool_);
}

}  // namespace proofline::zk::dev
