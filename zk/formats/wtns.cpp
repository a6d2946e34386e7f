#include "zk/formats/wtns.hpp"

#include <cstddef>
#include <stdexcept>

#include "base/parallel.hpp"
#include "zk/formats/binfile.hpp"
#include "zk/formats/primes.hpp"

namespace proofline::zk::formats {

namespace {

using detail::input_file;
using detail::section;

constexpr char wtns_magic[4] = {'w', 't', 'n', 's'};
constexpr uint32_t wtns_version = 2;
constexpr uint32_t sec_header = 1;
constexpr uint32_t sec_values = 2;
/// The largest field element the header may declare; real files use 32 or 48.
constexpr uint32_t max_field_bytes = 1024;
/// Fewest values a thread reads: 2^14 values (512 KiB of BN254), below
/// which starting a thread costs more than it saves.
constexpr std::size_t values_per_chunk = std::size_t(1) << 14;

struct wtns_layout {
  wtns_info info;
  section values;
};

const char* section_name(uint32_t id) {
  return id == sec_header ? "header" : id == sec_values ? "witness values" : nullptr;
}

/// Magic, version, header section, and the value section's size.
wtns_layout read_layout(const input_file& f) {
  detail::container c = detail::read_container(f, wtns_magic, "wtns", section_name);
  if (c.version != wtns_version)
    f.fail("unsupported wtns version " + std::to_string(c.version) + " (proofline reads version " +
           std::to_string(wtns_version) + ")");
  wtns_layout L;
  const section& h = c.unique(f, sec_header, section_name(sec_header));
  if (h.size < 4)
    f.fail("section 1 (header) is " + std::to_string(h.size) + " bytes, too short for n8");
  uint32_t n8 = f.read_u32(h.offset);
  if (n8 == 0 || n8 > max_field_bytes)
    f.fail("unsupported field element size n8 = " + std::to_string(n8) + " bytes");
  if (h.size != 8ull + n8)
    f.fail("section 1 (header) is " + std::to_string(h.size) + " bytes, expected " +
           std::to_string(8ull + n8) + " for n8 = " + std::to_string(n8));
  L.info.n8 = n8;
  L.info.prime.resize(n8);
  f.read(h.offset + 4, L.info.prime.data(), n8);
  L.info.count = f.read_u32(h.offset + 4 + n8);
  L.values = c.unique(f, sec_values, section_name(sec_values));
  const uint64_t expected = uint64_t(L.info.count) * n8;
  if (L.values.size != expected)
    f.fail("section 2 (witness values) is " + std::to_string(L.values.size) + " bytes, expected " +
           std::to_string(expected) + " for " + std::to_string(L.info.count) + " values of " +
           std::to_string(n8) + " bytes");
  return L;
}

template <class C>
void read_values(const input_file& f, const groth16::proving_key_base& key,
                 typename C::scalar* out, unsigned threads) {
  using fr = typename C::fr;
  if (key.info.curve != C::id)
    throw std::invalid_argument("read_witness: " + key.path + " is a " + to_string(key.info.curve) +
                                " key, read as " + C::name);
  wtns_layout L = read_layout(f);
  const wtns_info& info = L.info;
  if (!detail::is_modulus<fr>(info.prime.data(), info.n8))
    f.fail("witness is for " + detail::describe_prime(info.prime.data(), info.n8) + ", " +
           key.path + " is a " + detail::display_name(key.info.curve) + " circuit");
  if (info.count != key.info.n_vars)
    f.fail(std::to_string(info.count) + " witness values, " + key.path + " expects " +
           std::to_string(key.info.n_vars));
  static_assert(sizeof(typename C::scalar) == C::fr_bytes);
  const auto r = fr::modulus();
  const uint64_t offset = L.values.offset;
  // Chunks are contiguous and the earliest failing one is rethrown, so the
  // message names the first bad value, as a sequential read would.
  base::parallel_chunks(info.count, threads, values_per_chunk, [&](std::size_t b, std::size_t e) {
    f.read(offset + b * C::fr_bytes, out + b, (e - b) * C::fr_bytes);
    for (std::size_t i = b; i < e; ++i)
      if (!(out[i] < r))
        f.fail("witness value " + std::to_string(i) + " is not below the " +
               detail::display_name(C::id) + " scalar field prime");
  });
}

}  // namespace

wtns_info read_wtns_info(const std::string& path) {
  input_file f(path);
  return read_layout(f).info;
}

wtns_info read_wtns_info(const memory_file& bytes) {
  input_file f(bytes);
  return read_layout(f).info;
}

template <class C>
void read_witness(const std::string& path, const groth16::proving_key_base& key,
                  typename C::scalar* out, unsigned threads) {
  read_values<C>(input_file(path), key, out, threads);
}

template <class C>
void read_witness(const memory_file& bytes, const groth16::proving_key_base& key,
                  typename C::scalar* out, unsigned threads) {
  read_values<C>(input_file(bytes), key, out, threads);
}

template void read_witness<bn254>(const std::string&, const groth16::proving_key_base&,
                                  bn254::scalar*, unsigned);
template void read_witness<bls12_381>(const std::string&, const groth16::proving_key_base&,
                                      bls12_381::scalar*, unsigned);
template void read_witness<bn254>(const memory_file&, const groth16::proving_key_base&,
                                  bn254::scalar*, unsigned);
template void read_witness<bls12_381>(const memory_file&, const groth16::proving_key_base&,
                                      bls12_381::scalar*, unsigned);

}  // namespace proofline::zk::formats
