// Fuzz target: snarkjs witness files (zk/formats/wtns). read_wtns_info and
// read_witness must accept the input or throw format_error naming the file.
// The key it is read against is of the curve whose scalar prime the header
// names (BN254 otherwise, which read_witness must then refuse) and has as
// many values as the header declares (up to a bound), so the value
// section and its range checks are reached, not only the count check.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/fuzz/memory_file.hpp"
#include "zk/formats/wtns.hpp"

namespace fmt = proofline::zk::formats;
namespace g16 = proofline::zk::groth16;
using proofline::zk::bls12_381;
using proofline::zk::bn254;

namespace {

/// Witness values read in one input at most: the seeds hold a few hundred.
constexpr uint32_t max_values = 1u << 16;

template <class C>
void read_as(const std::string& path, uint32_t count) {
  g16::proving_key_base key;
  key.info.curve = C::id;
  key.info.n_vars = count;
  key.path = "key.zkey";
  std::vector<typename C::scalar> values(count);
  fmt::read_witness<C>(path, key, values.data());
  const auto r = C::fr::modulus();
  for (const auto& v : values)
    if (!(v < r)) std::abort();  // accepted values are below the prime
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static proofline::fuzz::memory_file file("fuzz.wtns");
  const std::string& path = file.hold(data, size);
  try {
    fmt::wtns_info info = fmt::read_wtns_info(path);
    if (info.prime.size() != info.n8) std::abort();
    if (info.count > max_values) return 0;
    const auto bls_r = bls12_381::fr::modulus();
    if (info.n8 == sizeof bls_r && std::memcmp(info.prime.data(), &bls_r, sizeof bls_r) == 0)
      read_as<bls12_381>(path, info.count);
    else
      read_as<bn254>(path, info.count);
  } catch (const fmt::format_error& e) {
    if (e.file() != path) std::abort();
  }
  return 0;
}
