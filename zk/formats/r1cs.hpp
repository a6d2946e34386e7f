// circom's constraint-system files (.r1cs, iden3's binfile container,
// version 1), read for development setups of real circuits.
//
//   section 1  header: u32 n8, the prime (n8 bytes), u32 nWires, u32 nPubOut,
//              u32 nPubIn, u32 nPrvIn, u64 nLabels, u32 mConstraints
//   section 2  mConstraints constraints, each three linear combinations
//              (A, B, C): u32 terms, then terms x {u32 wire, n8-byte
//              coefficient, little-endian, standard form}
//   section 3  wire -> label map (not needed for a key)
//   sections 4, 5  PLONK custom gates: refused (Groth16 has none)
//
// Wire 0 is the constant 1, wires 1 .. nPubOut + nPubIn the public signals
// (outputs first), as in the witness a circom circuit computes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::zk::formats {

/// The header of an .r1cs file.
struct r1cs_info {
  curve_id curve = curve_id::bn254;  ///< whose scalar field the prime is
  uint32_t n8 = 0;                   ///< bytes per coefficient
  uint32_t n_wires = 0;              ///< variables, wire 0 (= 1) included
  uint32_t n_pub_out = 0;            ///< public outputs
  uint32_t n_pub_in = 0;             ///< public inputs
  uint32_t n_prv_in = 0;             ///< private inputs
  uint64_t n_labels = 0;             ///< signals before circom's optimisation
  uint32_t n_constraints = 0;        ///< constraints
  uint64_t constraint_bytes = 0;     ///< size of section 2

  /// Public signals of a proof: outputs and public inputs.
  uint32_t n_public() const { return n_pub_out + n_pub_in; }
};

/// The constraints, matrix by matrix: constraint r's A terms are
/// [offsets[3r], offsets[3r+1]), B up to offsets[3r+2], C up to
/// offsets[3r+3]; a term is (signals[k], coefs[k]), coefficients in the
/// field's Montgomery form.
template <class C>
struct r1cs_constraints {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> signals;
  std::vector<typename C::fr> coefs;
};

/// Reads and checks the header. Throws format_error naming the file: not an
/// r1cs file, an unsupported version or prime, PLONK custom gates, no public
/// wire for the constant, sections of the wrong size.
r1cs_info read_r1cs_info(const std::string& path);

/// Reads every constraint of a file whose header `info` describes (its curve
/// must be C's). Throws format_error naming the file and the constraint on a
/// wire beyond nWires, a coefficient not below the prime, or a section that
/// ends early or late.
template <class C>
r1cs_constraints<C> read_r1cs_constraints(const std::string& path, const r1cs_info& info);

}  // namespace proofline::zk::formats
