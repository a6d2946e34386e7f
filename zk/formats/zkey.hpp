// snarkjs Groth16 proving keys (.zkey).
//
// Layout (binfileutils): magic "zkey", u32 version (1), u32 section count, then
// sections {u32 id, u64 size, bytes} in any order. Groth16 uses ids 1 (header:
// protocol 1), 2 (Groth16 header: n8q, q, n8r, r, nVars, nPublic, domainSize,
// alpha1, beta1, beta2, gamma2, delta1, delta2), 3 (IC), 4 (coefficients),
// 5 (A), 6 (B1), 7 (B2), 8 (C), 9 (H), 10 (contributions, ignored). Points are
// affine, little-endian, Montgomery form; infinity is all zero bytes.
#pragma once

#include <string>

#include "zk/formats/error.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::zk::formats {

/// Reads the section table and the two header sections only (cheap).
/// Throws format_error naming the file: wrong magic, unsupported version or
/// protocol, unknown prime, missing or truncated section.
groth16::key_info read_zkey_info(const std::string& path);

/// Reads the whole key and checks it: section sizes against the header, every
/// point on its curve, every coefficient in range. `threads` = 0 uses every
/// hardware thread for the checks. Throws format_error naming the file.
groth16::key_ptr load_zkey(const std::string& path, unsigned threads = 0);

}  // namespace proofline::zk::formats
