// The CUDA prover backend, from plain C++ (no CUDA headers), so factory.cpp
// and the benchmarks build with the host compiler.
//
// What one backend object does (gpu/cuda/backend.cu):
//  * keeps each proving key's points resident on its GPU, uploaded on first
//    use (or prepare()) and evicted least-recently-used when the
//    device-memory limit would be exceeded; partitions prove on the plain
//    points at once, and precomputed window tables (fixed-base MSM) are
//    built in the background, on a low-priority stream, when the partitions
//    still to come pay for them and they fit, then switched in between two
//    partitions;
//  * runs a partition as: upload (witness, a, b, c through a pinned staging
//    buffer, or directly when the partition's memory is pinned), three
//    odd-coset NTTs, h = a*b - c, five MSMs (G2 on the GPU as well), download
//    of the window sums; every step is timed with CUDA events and reported as
//    spans on the host's steady clock;
//  * accepts prove() from up to `lanes` threads at once: each call gets its
//    own stream and scratch, so the upload of one partition overlaps the
//    compute of another, while compute itself runs one partition at a time
//    in call order (an event chain), keeping per-partition latency low.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "gpu/backend.hpp"
#include "gpu/footprint.hpp"

namespace proofline::gpu::cuda {

/// Number of CUDA devices visible to this process; 0 with the reason in *why
/// (if given) when there is no usable driver or device.
int device_count(std::string* why);

/// When a key gets window tables (gpu/cuda/key_tables.hpp).
enum class table_policy {
  never,        ///< plain points only
  when_paying,  ///< prove on plain points at once; build tables in the background when they pay and fit
  first,        ///< build them with the upload, before the key's first partition, when they fit (benchmarks)
};

struct backend_options {
  /// Device bytes the backend may hold (resident keys, NTT tables, scratch);
  /// 0 = 90% of the memory free on the device when the backend is created.
  std::size_t memory_limit = 0;
  /// prove() calls that may run at once (2: upload of one overlaps compute of the other).
  unsigned lanes = cuda_lanes;
  /// Window tables (precomputed multiples 2^(c w) P for every window w:
  /// about 12-17 times the points' memory), with which an MSM needs fewer,
  /// larger windows and one bucket reduction.
  table_policy tables = table_policy::when_paying;
  /// Pinned staging per lane, in two halves that alternate (host memcpy into
  /// one while the other is copied to the device).
  std::size_t staging_bytes = cuda_lane_staging_bytes;
  /// Keep each key's A and B on the device beside its points, when both fit,
  /// and compute a, b, c of partitions that come without them there
  /// (backend::computes_abc); false: synthesis computes them on the CPU.
  bool abc = true;
};

/// The CUDA backend on `device`; throws backend_error.
std::unique_ptr<backend> make_backend(int device, const backend_options& options);

}  // namespace proofline::gpu::cuda
