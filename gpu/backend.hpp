// The prover backend interface: what a GPU worker runs for one partition.
//
// A synthesizer produces a partition (witness plus the a, b, c evaluations);
// the backend turns it into the five MSM results (the NTTs of the odd-coset
// step and the MSMs); a finalizer assembles the proof. The CPU backend
// (gpu/cpu) and the CUDA backend (gpu/cuda) implement this one interface and
// compute the same function, bit for bit.
//
// This header is plain C++ (no CUDA headers), so actors/ builds with the host
// compiler only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory/buffer.hpp"
#include "zk/curves.hpp"
#include "zk/groth16/proof.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::gpu {

/// A synthesized partition, immutable once built and shared by handle.
struct partition_base {
  zk::curve_id curve = zk::curve_id::bn254;
  virtual ~partition_base() = default;
  /// Bytes held in the buffers below.
  virtual std::size_t bytes() const = 0;
};

/// a, b, c come with the witness, or are left empty when the backend
/// computes them itself (backend::computes_abc); every backend accepts both.
template <class C>
struct partition final : partition_base {
  memory::buffer<typename C::scalar> witness;  ///< n_vars values, standard form
  memory::buffer<typename C::fr> a, b, c;      ///< domain_size values, Montgomery form; or all empty

  partition() { curve = C::id; }
  std::size_t bytes() const override { return witness.bytes() + a.bytes() + b.bytes() + c.bytes(); }
  /// a, b, c were computed by synthesis (else the backend computes them).
  bool has_abc() const { return a.size() != 0 || b.size() != 0 || c.size() != 0; }
};

using partition_ptr = std::shared_ptr<const partition_base>;

/// The MSM results of one partition.
struct result_base {
  zk::curve_id curve = zk::curve_id::bn254;
  virtual ~result_base() = default;
};

template <class C>
struct result final : result_base {
  zk::groth16::msm_results<C> msm;
  result() { curve = C::id; }
};

using result_ptr = std::shared_ptr<const result_base>;

/// One named interval of backend work, in microseconds on the steady clock
/// (std::chrono::steady_clock, since its epoch). On the GPU these come from
/// CUDA events, so they are device time, not host guesses.
struct span {
  std::string name;  ///< "upload", "ntt_a", "msm_h", ...
  double start_us = 0;
  double end_us = 0;
};

/// Optional observers of one prove() call.
struct prove_hooks {
  /// Called once the backend no longer reads the partition's host buffers
  /// (its inputs are on the device, or consumed). The caller may then release
  /// the bulk of the partition's memory reservation.
  std::function<void()> inputs_consumed;
  /// Receives the spans of the work done, in order.
  std::vector<span>* spans = nullptr;
};

/// A failure inside the backend, with context ("cudaMalloc(...) at msm.cu:120:
/// out of memory"). The GPU worker turns it into an error value for the job.
class backend_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws backend_error unless `part` and `key` agree on every length a
/// backend reads ("witness values: 3, the key expects 1521") and the key's
/// domain is 2^log_domain with log_domain < max_log_domain.
template <class C>
void check_partition(const zk::groth16::proving_key<C>& key, const partition<C>& part,
                     unsigned max_log_domain) {
  const auto& info = key.info;
  auto expect = [](std::size_t got, std::size_t want, const char* what) {
    if (got != want)
      throw backend_error(std::string(what) + ": " + std::to_string(got) + ", the key expects " +
                          std::to_string(want));
  };
  if (info.log_domain >= max_log_domain || (std::size_t(1) << info.log_domain) != info.domain_size)
    throw backend_error("domain size " + std::to_string(info.domain_size) + " is not 2^" +
                        std::to_string(info.log_domain));
  if (info.n_vars < info.n_public + 1)
    throw backend_error(std::to_string(info.n_vars) + " variables cannot hold " +
                        std::to_string(info.n_public) + " public signals and the constant 1");
  expect(part.witness.size(), info.n_vars, "witness values");
  if (part.has_abc()) {
    expect(part.a.size(), info.domain_size, "a values");
    expect(part.b.size(), info.domain_size, "b values");
    expect(part.c.size(), info.domain_size, "c values");
  }
  expect(key.points_a.size(), info.n_vars, "A points");
  expect(key.points_b1.size(), info.n_vars, "B1 points");
  expect(key.points_b2.size(), info.n_vars, "B2 points");
  expect(key.points_c.size(), info.n_private(), "C points");
  expect(key.points_h.size(), info.domain_size, "H points");
}

/// What preparing one key on one device cost and holds, for the run report.
struct key_prep_stats {
  bool resident = false;         ///< the key's points are on the device
  double to_device_ms = 0;       ///< uploading its points (host wall time of the copies)
  double tables_ms = 0;          ///< building its window tables (device time; 0: none built)
  std::size_t tables_bytes = 0;  ///< device bytes of its tables (0: plain points only)
  std::size_t device_bytes = 0;  ///< device bytes the key holds now (points, tables, A and B)
  std::size_t abc_bytes = 0;     ///< of them, its A and B for a, b, c on the device (0: none)
  bool tables = false;           ///< partitions now read the tables
  std::string tables_note;       ///< why there are no tables, or "building"; empty when tables are in use
  /// Device work of the preparation, in order, microseconds on the steady
  /// clock like prove()'s spans; may be empty. CUDA: "key_upload" (the
  /// points copied; "key_upload_tables" when window tables are built with
  /// them), "key_abc" (its A and B laid out and copied), then "key_tables"
  /// once tables built later are in use.
  std::vector<span> spans;
};

class backend {
 public:
  virtual ~backend() = default;
  /// "cpu" or "cuda".
  virtual const char* kind() const = 0;
  /// For logs: "CPU backend, 16 threads" / "CUDA device 0: NVIDIA H200".
  virtual std::string describe() const = 0;
  /// prove() calls this backend runs well at once: the runtime gives it that
  /// many GPU-worker lanes (CUDA: 2, so one partition's upload overlaps the
  /// other's compute; CPU: 1, it already uses every core).
  virtual unsigned lanes() const { return 1; }
  /// NTTs and MSMs of one partition. Blocking; throws backend_error.
  virtual result_ptr prove(const zk::groth16::key_ptr& key, const partition_ptr& part,
                           const prove_hooks& hooks = {}) = 0;
  /// Makes `key` ready before its first partition arrives (CUDA: uploads
  /// its points and builds the NTT tables of its domain; window tables come
  /// later, and only when they pay), so that work overlaps synthesis instead
  /// of delaying the first proof. Blocking, but holds nothing that stalls
  /// prove() calls of other keys; throws backend_error.
  virtual void prepare(const zk::groth16::key_ptr& key) {}
  /// `partitions` more partitions of `key` are queued (the runtime calls
  /// this whenever it queues some). A backend may weigh per-key
  /// precomputation by the partitions still to come (CUDA: window tables).
  /// Cheap and non-blocking; without it the CUDA backend expects as many
  /// partitions to come as it has proved.
  virtual void expect_partitions(const zk::groth16::key_ptr& key, std::size_t partitions) {}
  /// What preparing `key` cost on this backend so far; resident = false for
  /// a key it does not hold.
  virtual key_prep_stats key_stats(const zk::groth16::proving_key_base* key) { return {}; }
  /// prepare() and what it cost: key_stats() once prepare() returned (the
  /// CPU backend has nothing to prepare and reports zeros). Blocking; throws
  /// backend_error.
  virtual key_prep_stats prepare_measured(const zk::groth16::key_ptr& key) {
    prepare(key);
    return key_stats(key.get());
  }
  /// Forgets per-key state (device-resident points); keys are otherwise
  /// cached by address until evicted.
  virtual void evict(const zk::groth16::proving_key_base* key) {}
  /// Whether this backend computes a, b, c of `key`'s partitions faster
  /// than synthesis would (CUDA: from the key's A and B resident on the
  /// device, when they fit its memory with the key), so that synthesis may
  /// leave them out. Partitions without a, b, c are proved by every backend
  /// whatever this says (the CPU backend computes them as synthesis would).
  virtual bool computes_abc(const zk::groth16::proving_key_base& key) const { return false; }
};

/// The multithreaded CPU backend; threads = 0 uses every hardware thread.
std::unique_ptr<backend> make_cpu_backend(unsigned threads = 0);

}  // namespace proofline::gpu
