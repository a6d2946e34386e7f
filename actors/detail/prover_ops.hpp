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
#include "zk/formats/error.hpp"
#include "zk/groth16/proving_key.hpp"
#include "zk/groth16/synthesis_model.hpp"

namespace proofline {

struct constraint_system;  // messages/pipeline.hpp
namespace witness {
class generator;  // witness/generator.hpp
}

/// The text of a partition's two output files, and the proof's self-check.
struct finalized_files {
  std::string proof_json;
  std::string public_json;
  bool checked = false;   ///< the proof was checked by pairing (the key carries a verifier)
  bool verified = false;  ///< ... and passed
  double verify_ms = 0;
  std::string problem;    ///< why the check failed
};

/// Where a partition's witness comes from.
struct witness_source {
  std::string name;  ///< the .wtns path, or how messages name bytes given in memory
  /// The .wtns bytes (with a generator: the input.json text) when given in
  /// memory (job_payload), read in place; null: read the file at `name`.
  const void* data = nullptr;
  uint64_t size = 0;
  /// The job's witness generator (witness/generator.hpp), opened and
  /// checked against the key by the job registry (job_context::generator):
  /// `name` is then an input.json, and the witness is computed from it.
  /// Null: `name` is a .wtns.
  const witness::generator* generator = nullptr;
  /// With a generator: where to write the computed witness too (.wtns); empty: nowhere.
  std::string keep_path;
  /// The circuit's constraints (job_spec::r1cs): the witness is checked
  /// against every one before a, b, c; null: not checked.
  const constraint_system* constraints = nullptr;
};

/// What one synthesis is given: the witness, where its buffers come from,
/// and the threads it may use (the synthesizer's grant, grant::threads).
struct synthesis_request {
  witness_source witness;
  memory::source buffers;
  unsigned threads = 1;
  /// Compute a, b, c; false leaves them to the backends (every backend the
  /// partition may go to computes them: gpu::backend::computes_abc).
  bool abc = true;
};

/// Where one synthesis spent its time, for the SYNTH_TIMING log line.
struct synthesis_timing {
  double read_witness_us = 0;  ///< reading and checking the .wtns, or computing it from the input
  bool generated = false;      ///< the witness was computed by a generator
  uint64_t generator_bytes = 0;  ///< bytes the generator allocated on this thread (jemalloc), 0 unknown
  double abc_us = 0;           ///< a = A·w and b = B·w from the key's coefficients, c = a∘b
  unsigned threads = 1;        ///< threads a, b, c were computed on
  bool recorded = false;       ///< false: the op in use does not report (test fakes)
};

struct prover_ops {
  /// Reads and checks a whole .zkey. Blocking (seconds for large keys); runs
  /// in a key loader. Throws zk::formats::format_error naming the file.
  std::function<zk::groth16::key_ptr(const std::string& zkey)> load_key;

  /// Reads a circom .r1cs whole (its curve from its prime). Blocking (about
  /// a second per million constraints); runs off the registry's thread.
  /// Throws format_error naming the file. Null: jobs naming an .r1cs fail.
  std::function<std::shared_ptr<const constraint_system>(const std::string& r1cs)>
      load_constraints;

  /// Reads the witness for `key` and computes a, b, c (unless `req.abc` is
  /// false), with every buffer from `req.buffers`, on up to `req.threads`
  /// threads; fills `timing` when it measures its steps. Throws
  /// format_error naming the witness, also when `req.witness.constraints`
  /// is set and the witness does not satisfy one of them.
  std::function<gpu::partition_ptr(const zk::groth16::key_ptr& key, const synthesis_request& req,
                                   synthesis_timing& timing)>
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

/// Why the constraints at `r1cs` (over `curve`, `wires` wires, wire 0
/// included) are not those of the key `zkey` with `key`'s header, or "" when
/// they fit: same field, one wire per witness value.
inline std::string constraints_problem(const std::string& r1cs, zk::curve_id curve, uint32_t wires,
                                       const std::string& zkey, const zk::groth16::key_info& key) {
  if (curve != key.curve)
    return r1cs + ": a circuit over " + zk::to_string(curve) + ", " + zkey + " is a " +
           zk::to_string(key.curve) + " key";
  if (wires != key.n_vars)
    return r1cs + ": " + std::to_string(wires) + " wires, " + zkey + " has " +
           std::to_string(key.n_vars) + " witness values: not this key's circuit";
  return {};
}

/// The real operations: zk::formats::load_zkey (with `threads` for its
/// checks; 0 = every hardware thread), zk::dev::circom_r1cs for
/// load_constraints, read_witness (a file or bytes) and the constraint
/// check (zk::dev::first_unsatisfied), synthesize_abc,
/// assemble with random_scalar, proof_to_json/public_to_json and
/// write_file_atomic. With `self_check`, load_key also prepares the key's
/// verification key, so that every proof is checked by pairing before it is
/// written. `model` chooses how synthesize allocates (zk/groth16/
/// synthesis_model.hpp): plain (synthesize_abc on the granted threads), lc
/// or lc-keep (synthesize_lc, one thread, allocating like a bellperson-style
/// prover); all give the same a, b, c. Defined in library proofline_prover_ops.
prover_ops real_prover_ops(unsigned threads, bool self_check = true,
                           zk::groth16::synthesis_model model = zk::groth16::synthesis_model::plain);

/// Loads a key given as bytes as real_prover_ops' load_key loads a file
/// (with its verification key prepared when `self_check`); `bytes.name`
/// names it. The bytes may go once it returns.
zk::groth16::key_ptr load_key_bytes(const zk::formats::memory_file& bytes, unsigned threads,
                                    bool self_check);

}  // namespace proofline
