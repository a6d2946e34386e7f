#include "zk/dev/writers.hpp"

#include <nlohmann/json.hpp>

#include "zk/dev/output_file.hpp"
#include "zk/formats/decimal.hpp"
#include "zk/formats/snarkjs_json.hpp"

namespace proofline::zk::dev {

namespace {

using json = formats::snarkjs_json;
using formats::field_json;
using formats::point_json;
using formats::snarkjs_indent;

constexpr char wtns_magic[4] = {'w', 't', 'n', 's'};
constexpr uint32_t wtns_version = 2;

}  // namespace

template <class C>
void write_wtns(const std::string& path, const std::vector<typename C::scalar>& values) {
  constexpr uint32_t n8 = C::fr_bytes;
  static_assert(sizeof(typename C::scalar) == n8);
  output_file f(path);
  f.begin_container(wtns_magic, wtns_version, 2);
  f.begin_section(1, 8 + n8);
  f.u32(n8);
  const auto r = C::fr::modulus();
  f.write(r.l, n8);
  f.u32(static_cast<uint32_t>(values.size()));
  f.end_section();
  f.begin_section(2, uint64_t(values.size()) * n8);
  f.write(values.data(), values.size() * n8);
  f.end_section();
  f.commit();
}

template <class C>
std::string verification_key_json(const formats::verification_key<C>& vk, const gt<C>& alphabeta) {
  json j;
  j["protocol"] = "groth16";
  j["curve"] = C::snarkjs_name;
  j["nPublic"] = vk.n_public;
  j["vk_alpha_1"] = point_json(vk.alpha1);
  j["vk_beta_2"] = point_json(vk.beta2);
  j["vk_gamma_2"] = point_json(vk.gamma2);
  j["vk_delta_2"] = point_json(vk.delta2);
  json ab = json::array();
  for (unsigned half = 0; half < 2; ++half) {
    json h = json::array();
    for (unsigned i = 0; i < 3; ++i) h.push_back(field_json(alphabeta.c[3 * half + i]));
    ab.push_back(h);
  }
  j["vk_alphabeta_12"] = ab;
  json ic = json::array();
  for (const auto& p : vk.ic) ic.push_back(point_json(p));
  j["IC"] = ic;
  return j.dump(snarkjs_indent);
}

template void write_wtns<bn254>(const std::string&, const std::vector<bn254::scalar>&);
template void write_wtns<bls12_381>(const std::string&, const std::vector<bls12_381::scalar>&);
template std::string verification_key_json<bn254>(const formats::verification_key<bn254>&,
                                                  const gt<bn254>&);
template std::string verification_key_json<bls12_381>(const formats::verification_key<bls12_381>&,
                                                      const gt<bls12_381>&);

}  // namespace proofline::zk::dev
