// Which prover backends a runtime runs on: --backend auto|cpu|cuda with
// --gpus, --gpu-memory and --gpu-lanes (or the library's options of the same
// names). Used by the runtime builder (engine/runtime_builder.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "observe/report.hpp"
#include "gpu/backend.hpp"

namespace proofline::engine {

struct backend_request {
  std::string backend = "auto";  ///< auto | cpu | cuda
  std::string gpus = "all";      ///< all | comma-separated device ids
  std::string gpu_memory;        ///< size text; empty: the backend's default
  unsigned gpu_lanes = 2;
  unsigned cpu_threads = 0;  ///< CPU backend threads; 0 = every hardware thread
};

struct backend_choice {
  std::vector<std::shared_ptr<gpu::backend>> backends;  ///< one per device used
  std::vector<int> devices;  ///< CUDA device ordinal of each backend; empty for the CPU
  /// With CUDA, a CPU backend that proves the partitions the GPUs could not
  /// (runtime_config::fallback); null on the CPU.
  std::shared_ptr<gpu::backend> fallback;
  std::string error;  ///< non-empty: the request cannot be met (a usage error)

  bool cuda() const { return !backends.empty() && std::string(backends.front()->kind()) == "cuda"; }
  /// GPU-worker lanes over all backends (the runtime spawns one worker each).
  unsigned lanes() const;
};

/// "all" -> every id below `visible`; "0,2" -> {0, 2}. Returns nothing and
/// sets *error for text that is not a list of distinct ids below `visible`.
std::optional<std::vector<int>> parse_gpu_list(const std::string& text, int visible,
                                               std::string* error);

/// Synthesizers when the command line leaves it open (0): with the CUDA
/// backend every core but the finalizers' and one for the actor system, at
/// least 2 (synthesis of one partition is single-threaded and takes ~10 times
/// its GPU time at 2^20); with the CPU backend 2, since proving already uses
/// every core.
unsigned default_synthesizers(const backend_choice& choice, unsigned finalizers);

/// Each backend as reports name it (kind, description, lanes, CUDA device).
std::vector<observe::backend_record> backend_records(const backend_choice& choice);

/// The runtime's memory settings for these backends: their host footprint
/// (CUDA: each lane's pinned staging), and, when `pool` is set, a pinned pool
/// that CUDA uploads read directly, sized at the first job for the
/// partitions that can be in flight at once (granted ahead: synthesizers +
/// lanes; proving: lanes; finalizing: one per lane), at most a quarter of
/// rc.memory_budget (set it first), pinned with CUDA unless `pin` is false:
/// then a pool of ordinary pages, which stay resident between partitions
/// (no pinning at start; uploads go through the lanes' staging, as without
/// a pool).
void configure_memory(runtime_config& rc, const backend_choice& choice, unsigned synthesizers,
                      bool pool, bool pin = true);

/// Creates the backends and logs which one runs and why. With --backend auto
/// and no usable CUDA device, the CPU backend (said in the log); with
/// --backend cuda and none, an error. A --gpus list naming a device that is
/// not there is an error with either.
backend_choice choose_backends(const backend_request& request);

}  // namespace proofline::engine
