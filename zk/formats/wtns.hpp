// snarkjs witness files (.wtns, version 2).
//
// Layout: magic "wtns", u32 version (2), u32 section count; section 1 holds
// u32 n8, the prime (n8 bytes, little-endian) and u32 count; section 2 holds
// count values of n8 bytes each, little-endian, standard (not Montgomery) form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zk/formats/error.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::zk::formats {

struct wtns_info {
  uint32_t n8 = 0;
  std::vector<uint8_t> prime;  ///< little-endian, n8 bytes
  uint32_t count = 0;
};

/// Reads the header section only. Throws format_error naming the file.
wtns_info read_wtns_info(const std::string& path);
/// The same, of a witness given as bytes.
wtns_info read_wtns_info(const memory_file& bytes);

/// Reads a witness for `key` into out[0 .. key.info.n_vars), standard form.
/// Checks the prime equals the key's scalar field, the count equals n_vars
/// ("w3.wtns: 1520 witness values, circuit.zkey expects 1521") and every
/// value is below the prime. A large witness is read and checked in chunks
/// on up to `threads` threads (positioned reads straight into `out`, so the
/// pages of `out` are first written by those threads too); the first bad
/// value in file order is the one reported. Throws format_error naming the
/// file.
template <class C>
void read_witness(const std::string& path, const groth16::proving_key_base& key,
                  typename C::scalar* out, unsigned threads = 1);
/// The same, of a witness given as bytes (copied into `out` and checked in
/// chunks on up to `threads` threads, as from a file).
template <class C>
void read_witness(const memory_file& bytes, const groth16::proving_key_base& key,
                  typename C::scalar* out, unsigned threads = 1);

}  // namespace proofline::zk::formats
