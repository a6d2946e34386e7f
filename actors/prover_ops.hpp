// The work the pipeline's actors do on data, as replaceable functions. The
// actors decide when and where (ordering, memory, threads); these functions
// decide what (read a key, synthesize, assemble, write). The real ones call
// zk/ and the formats (real_prover_ops, in its own library so actor tests
// link without them); tests put in fakes that are fast and deterministic.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "gpu/backend.hpp"
#include "memory/buffer.hpp"
#include "zk/groth16/proving_key.hpp"
#include "zk/groth16/synthesis_model.hpp"

namespace proofline {

/// The text of a partition's two output files, and the proof's self-check.
struct finalized_files {
  std::string proof_json;
  std::string public_json;
  bool checked = false;   ///< the proof was checked by pairing (the key carries a verifier)
  bool verified = false;  ///< ... and passed
  double verify_ms = 0;
  std::string problem;    ///< why the check failed
};

struct prover_ops {
  /// Reads and checks a whole .zkey. Blocking (seconds for large keys); runs
  /// in a key loader. Throws zk::formats::format_error naming the file.
  std::function<zk::groth16::key_ptr(const std::string& zkey)> load_key;

  /// Reads the witness at `witness` for `key` and computes a, b, c, with
  /// every buffer from `src`. Throws format_error naming the file.
  std::function<gpu::partition_ptr(const zk::groth16::key_ptr& key, const std::string& witness,
                                   const memory::source& src)>
      synthesize;

  /// Assembles the proof with fresh random r, s and renders proof.json and
  /// public.json (public signals = witness values w[1 ..= n_public]). When
  /// the key carries a prepared verification key (proving_key_base::verifier)
  /// the proof is checked by pairing first (checked, verified, problem).
  std::function<finalized_files(const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                                const gpu::result_ptr& result)>
      finalize;

  /// Writes a file atomically (temp file + rename); throws std::runtime_error.
  std::function<void(const std::string& path, std::string_view contents)> write_file;
};

/// Where one synthesis spent its time, for the SYNTH_TIMING log line.
struct synthesis_timing {
  double read_witness_us = 0;  ///< reading and checking the .wtns file
  double abc_us = 0;           ///< a = A·w and b = B·w from the key's coefficients, c = a∘b
  unsigned threads = 1;        ///< threads a, b, c were computed on
  bool recorded = false;       ///< false: the op in use does not report (test fakes)
};

/// The timing of the last synthesize call on the calling thread: the real op
/// fills it, and since synthesize runs synchronously on its caller's thread
/// the synthesizer resets it before the call and reads it right after. A
/// thread-local value, so no synchronization is involved.
inline synthesis_timing& this_thread_synthesis_timing() {
  static thread_local synthesis_timing timing;
  return timing;
}

/// Threads the next synthesize call on the calling thread may use (the
/// synthesizer sets it from its grant, grant::threads, right before the
/// call; the real op reads it, fakes ignore it). Thread-local, like the timing.
inline unsigned& this_thread_synthesis_threads() {
  static thread_local unsigned threads = 1;
  return threads;
}

/// The real operations: zk::formats::load_zkey (with `threads` for its
/// checks; 0 = every hardware thread), read_witness, synthesize_abc,
/// assemble with random_scalar, proof_to_json/public_to_json and
/// write_file_atomic. With `self_check`, load_key also prepares the key's
/// verification key, so that every proof is checked by pairing before it is
/// written. `model` chooses how synthesize allocates (zk/groth16/
/// synthesis_model.hpp): plain (synthesize_abc on the granted threads), lc
/// or lc-keep (synthesize_lc, one thread, allocating like a bellperson-style
/// prover); all give the same a, b, c. Defined in library proofline_prover_ops.
prover_ops real_prover_ops(unsigned threads, bool self_check = true,
                           zk::groth16::synthesis_model model = zk::groth16::synthesis_model::plain);

}  // namespace proofline
