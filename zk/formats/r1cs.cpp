#include "zk/formats/r1cs.hpp"

#include <cstring>

#include "zk/formats/binfile.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/primes.hpp"

namespace proofline::zk::formats {

namespace {

using detail::input_file;
using detail::section;

constexpr char r1cs_magic[4] = {'r', '1', 'c', 's'};
constexpr uint32_t r1cs_version = 1;
constexpr uint32_t sec_header = 1;
constexpr uint32_t sec_constraints = 2;
constexpr uint32_t sec_map = 3;
constexpr uint32_t sec_gates_list = 4;
constexpr uint32_t sec_gates_uses = 5;
/// The largest field element a header may declare; real files use 32 or 48.
constexpr uint32_t max_field_bytes = 1024;

const char* section_name(uint32_t id) {
  switch (id) {
    case sec_header: return "header";
    case sec_constraints: return "constraints";
    case sec_map: return "wire-to-label map";
    case sec_gates_list: return "custom gates list";
    case sec_gates_uses: return "custom gates uses";
    default: return nullptr;
  }
}

detail::container open(const input_file& f) {
  detail::container c = detail::read_container(f, r1cs_magic, "r1cs", section_name);
  if (c.version != r1cs_version)
    f.fail("unsupported r1cs version " + std::to_string(c.version) + " (proofline reads version " +
           std::to_string(r1cs_version) + ")");
  return c;
}

}  // namespace

r1cs_info read_r1cs_info(const std::string& path) {
  input_file f(path);
  const detail::container c = open(f);
  if (c.sections.count(sec_gates_list) || c.sections.count(sec_gates_uses))
    f.fail("the circuit uses PLONK custom gates, which Groth16 keys cannot express");
  const section& h = c.unique(f, sec_header, section_name(sec_header));
  if (h.size < 4) f.fail("section 1 (header) is " + std::to_string(h.size) + " bytes, too short");
  r1cs_info info;
  info.n8 = f.read_u32(h.offset);
  if (info.n8 == 0 || info.n8 > max_field_bytes)
    f.fail("unsupported field element size n8 = " + std::to_string(info.n8) + " bytes");
  const uint64_t expected = 4ull + info.n8 + 4 * 4 + 8 + 4;
  if (h.size != expected)
    f.fail("section 1 (header) is " + std::to_string(h.size) + " bytes, expected " +
           std::to_string(expected) + " for n8 = " + std::to_string(info.n8));
  std::vector<uint8_t> prime(info.n8);
  f.read(h.offset + 4, prime.data(), info.n8);
  if (detail::is_modulus<bn254::fr>(prime.data(), info.n8))
    info.curve = curve_id::bn254;
  else if (detail::is_modulus<bls12_381::fr>(prime.data(), info.n8))
    info.curve = curve_id::bls12_381;
  else
    f.fail("constraints over " + detail::describe_prime(prime.data(), info.n8) +
           "; proofline proves over the BN254 and BLS12-381 scalar fields");
  uint64_t at = h.offset + 4 + info.n8;
  info.n_wires = f.read_u32(at);
  info.n_pub_out = f.read_u32(at + 4);
  info.n_pub_in = f.read_u32(at + 8);
  info.n_prv_in = f.read_u32(at + 12);
  f.read(at + 16, &info.n_labels, 8);
  info.n_constraints = f.read_u32(at + 24);
  if (info.n_wires == 0) f.fail("the header declares no wires (wire 0 is the constant 1)");
  if (uint64_t(info.n_public()) + 1 > info.n_wires)
    f.fail(std::to_string(info.n_public()) + " public signals but only " +
           std::to_string(info.n_wires) + " wires");
  info.constraint_bytes = c.unique(f, sec_constraints, section_name(sec_constraints)).size;
  return info;
}

template <class C>
r1cs_constraints<C> read_r1cs_constraints(const std::string& path, const r1cs_info& info) {
  using fr = typename C::fr;
  input_file f(path);
  const detail::container c = open(f);
  if (info.curve != C::id || info.n8 != fr::N * 8)
    f.fail("constraints are not over the " + std::string(detail::display_name(C::id)) +
           " scalar field");
  const section& s = c.unique(f, sec_constraints, section_name(sec_constraints));
  // One read of the whole section: real circuits' sections are a few
  // hundred bytes per constraint.
  std::vector<uint8_t> bytes(s.size);
  f.read(s.offset, bytes.data(), s.size);
  const uint64_t term_bytes = 4ull + info.n8;

  r1cs_constraints<C> out;
  out.offsets.reserve(3 * std::size_t(info.n_constraints) + 1);
  out.offsets.push_back(0);
  // A careful upper bound on the terms, from the section's size.
  out.signals.reserve(s.size / term_bytes);
  out.coefs.reserve(s.size / term_bytes);
  uint64_t pos = 0;
  auto need = [&](uint64_t n, uint32_t row, const char* what) {
    if (s.size - pos < n)
      f.fail("section 2 (constraints) ends inside constraint " + std::to_string(row) + " (" +
             what + "); the header declares " + std::to_string(info.n_constraints));
  };
  static const char* const matrix[3] = {"A", "B", "C"};
  for (uint32_t row = 0; row < info.n_constraints; ++row) {
    for (unsigned m = 0; m < 3; ++m) {
      need(4, row, matrix[m]);
      uint32_t terms;
      std::memcpy(&terms, bytes.data() + pos, 4);
      pos += 4;
      need(uint64_t(terms) * term_bytes, row, matrix[m]);
      for (uint32_t k = 0; k < terms; ++k, pos += term_bytes) {
        uint32_t wire;
        std::memcpy(&wire, bytes.data() + pos, 4);
        if (wire >= info.n_wires)
          f.fail("constraint " + std::to_string(row) + " (" + matrix[m] + ") names wire " +
                 std::to_string(wire) + ", but the circuit has " + std::to_string(info.n_wires));
        typename fr::repr v;
        std::memcpy(v.l, bytes.data() + pos + 4, info.n8);
        if (!(v < fr::modulus()))
          f.fail("constraint " + std::to_string(row) + " (" + matrix[m] +
                 ") has a coefficient not below the field's prime");
        out.signals.push_back(wire);
        out.coefs.push_back(fr::from_standard(v));
      }
      out.offsets.push_back(out.signals.size());
    }
  }
  if (pos != s.size)
    f.fail("section 2 (constraints) has " + std::to_string(s.size - pos) +
           " bytes after the last of its " + std::to_string(info.n_constraints) + " constraints");
  return out;
}

template r1cs_constraints<bn254> read_r1cs_constraints<bn254>(const std::string&, const r1cs_info&);
template r1cs_constraints<bls12_381> read_r1cs_constraints<bls12_381>(const std::string&,
                                                                       const r1cs_info&);

}  // namespace proofline::zk::formats
