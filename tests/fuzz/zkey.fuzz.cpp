// Fuzz target: snarkjs proving keys (zk/formats/zkey), read through a path
// like every key a job names. read_zkey_info and load_zkey must accept the
// input or throw format_error naming the file; a key that loads must hold
// exactly the points and coefficients its header promises.
#include <cstdint>
#include <cstdlib>

#include "tests/fuzz/memory_file.hpp"
#include "zk/formats/zkey.hpp"

namespace fmt = proofline::zk::formats;
namespace g16 = proofline::zk::groth16;

namespace {

template <class C>
void check_shape(const g16::proving_key_base& base) {
  const auto& k = g16::typed<C>(base);
  const auto& i = k.info;
  if (k.points_a.size() != i.n_vars || k.points_b1.size() != i.n_vars ||
      k.points_b2.size() != i.n_vars || k.points_c.size() != i.n_private() ||
      k.points_h.size() != i.domain_size || k.ic.size() != i.n_public + 1u ||
      k.coefs_a.size() + k.coefs_b.size() != i.n_coefs)
    std::abort();
  for (const auto* cs : {&k.coefs_a, &k.coefs_b})
    for (const auto& c : *cs)
      if (c.constraint >= i.domain_size || c.signal >= i.n_vars) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static proofline::fuzz::memory_file file("fuzz.zkey");
  const std::string& path = file.hold(data, size);
  g16::key_info info;
  try {
    info = fmt::read_zkey_info(path);
  } catch (const fmt::format_error& e) {
    if (e.file() != path) std::abort();
    return 0;
  }
  try {
    auto key = fmt::load_zkey(path, 1);
    if (key->info.n_vars != info.n_vars || key->info.domain_size != info.domain_size)
      std::abort();
    if (key->info.curve == proofline::zk::curve_id::bn254)
      check_shape<proofline::zk::bn254>(*key);
    else
      check_shape<proofline::zk::bls12_381>(*key);
  } catch (const fmt::format_error& e) {
    if (e.file() != path) std::abort();
  }
  return 0;
}
