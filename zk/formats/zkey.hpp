// snarkjs Groth16 proving keys (.zkey).
//
// Layout (binfileutils): magic "zkey", u32 version (1), u32 section count, then
// sections {u32 id, u64 size, bytes} in any order. Groth16 uses ids 1 (header:
// protocol 1), 2 (Groth16 header: n8q, q, n8r, r, nVars, nPublic, domainSize,
// alpha1, beta1, beta2, gamma2, delta1, delta2), 3 (IC), 4 (coefficients),
// 5 (A), 6 (B1), 7 (B2), 8 (C), 9 (H), 10 (contributions, ignored). Points are
// affine, little-endian, Montgomery form; infinity is all zero bytes.
//
// Cost: the file is read once for the points and twice for the coefficient
// section (the second time from the page cache), on every thread given, each
// byte written once to its final place; `proofline bench key-read` measures
// it (figures in docs/BENCHMARKS.md).
#pragma once

#include <string>

#include "zk/formats/error.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::zk::formats {

/// Reads the section table, the two header sections and the coefficient
/// count only (a few small reads, whatever the key's size), and checks the
/// layout: magic, version, protocol, primes, nPublic < nVars, domainSize a
/// power of two within the scalar field's 2-adicity, sections 1-9 present
/// once each, inside the file, and of the sizes the header implies.
/// Throws format_error naming the file.
groth16::key_info read_zkey_info(const std::string& path);
/// The same, of a key given as bytes.
groth16::key_info read_zkey_info(const memory_file& bytes);

/// Reads the whole key and checks it: everything read_zkey_info checks, every
/// coordinate below q and every point on its curve, every coefficient's
/// matrix, constraint, signal and value in range. Point sections are read and
/// checked by `threads` threads (0 = every hardware thread); the first bad
/// point in file order is the one reported. Throws format_error naming the file.
groth16::key_ptr load_zkey(const std::string& path, unsigned threads = 0);
/// The same, of a key given as bytes (copied out, so they may go once it
/// returns); the key's path is bytes.name.
groth16::key_ptr load_zkey(const memory_file& bytes, unsigned threads = 0);

}  // namespace proofline::zk::formats
