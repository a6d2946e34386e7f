#include <utility>

#include "zk/dev/r1cs.hpp"
#include "zk/formats/r1cs.hpp"

namespace proofline::zk::dev {

template <class C>
r1cs<C> circom_r1cs(const std::string& path) {
  const formats::r1cs_info info = formats::read_r1cs_info(path);
  formats::r1cs_constraints<C> file = formats::read_r1cs_constraints<C>(path, info);
  r1cs<C> cs;
  cs.n_public = info.n_public();
  cs.n_constraints = info.n_constraints;
  cs.n_vars = info.n_wires;
  cs.offsets = std::move(file.offsets);
  cs.terms.resize(file.signals.size());
  for (std::size_t k = 0; k < file.signals.size(); ++k)
    cs.terms[k] = term<C>{file.signals[k], file.coefs[k]};
  return cs;
}

template r1cs<bn254> circom_r1cs<bn254>(const std::string&);
template r1cs<bls12_381> circom_r1cs<bls12_381>(const std::string&);

}  // namespace proofline::zk::dev
