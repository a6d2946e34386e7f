#include "actors/detail/generator_check.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "witness/generator.hpp"
#include "zk/curves.hpp"
#include "zk/formats/error.hpp"

namespace proofline {

file_error check_generator(const std::string& path, const zk::groth16::proving_key_base& key,
                           uint64_t& bytes, std::shared_ptr<const witness::generator>& opened) {
  try {
    auto gen = witness::generator::open(path);
    std::vector<uint8_t> prime(key.info.n8r);
    zk::visit_curve(key.info.curve, [&](auto curve) {
      using C = decltype(curve);
      const auto m = C::fr::modulus();
      std::memcpy(prime.data(), m.l, std::min<size_t>(prime.size(), sizeof(m.l)));
    });
    std::string problem = gen->check_key(prime.data(), static_cast<uint32_t>(prime.size()),
                                         key.info.n_vars, key.path);
    if (!problem.empty()) return {path, problem};  // the problem names the generator
    bytes = gen->reservation_bytes();
    opened = std::move(gen);
    return {};
  } catch (const zk::formats::format_error& e) {
    return {e.file(), e.what()};
  } catch (const std::exception& e) {
    return {path, path + ": " + e.what()};
  }
}


}  // namespace proofline
