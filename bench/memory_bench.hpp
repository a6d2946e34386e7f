// `proofline bench memory`: where purging runs and what it blocks.
//
// Three measurements (README, "How it works"):
//
//  1. Purge vs trim. The same heap (--bytes in --chunk blocks, allocated and
//     touched on one thread, freed from another, all of them or all but 1 in
//     16) returned to the kernel by jemalloc's arena.<i>.purge of one arena
//     (here, in-process) and by glibc's trim of every arena (in the child
//     proofline-trim-baseline, built without jemalloc, which names its call). Reported: time of the
//     release call, bytes it returned (RSS before - after), ms per GiB, and
//     what returned memory inside free() already.
//  2. Hand-off gaps under a backlog. The actor pipeline (real runtime,
//     detached actors) proves --partitions partitions of a synthetic key on a
//     fake timed backend, three times: purges off (requests only counted),
//     by message (the memory manager purges on its own thread: production)
//     and inline (the GPU worker purges every arena after each partition,
//     as the prover this replaces trimmed under its lock). The gap is the
//     time from the end of one partition's kernels to the start of the
//     next's on the worker. Backends: "cpu-like" allocates the CPU backend's
//     four domain-sized working copies on the worker's thread and sleeps
//     --prove-ms for the kernels; "cuda-upload" (a GPU visible) copies the
//     witness and a, b, c to the device for real, then sleeps.
//  3. Upload bandwidth (GPU only): host-to-device from a pinned pool block,
//     from a pageable arena buffer and from cudaHostAlloc memory (the pinned
//     reference; the pool should reach >= 80% of it).
//
// Defaults are small (128 MiB heaps, 16 partitions of a 2^16 domain) so it
// finishes in well under a minute on a 2-core machine without a GPU.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace proofline::bench {

struct memory_bench_options {
  uint64_t bytes = uint64_t(128) << 20;  ///< heap for purge vs trim, and upload size
  uint64_t chunk = uint64_t(64) << 10;   ///< block size of that heap
  unsigned partitions = 16;              ///< backlog length
  unsigned log_domain = 16;              ///< backlog partition size (2^16: 2 MiB vectors)
  unsigned prove_ms = 20;                ///< simulated kernel time per partition
  std::string backend = "auto";          ///< auto | cpu-like | cuda-upload
  uint64_t pool = 0;                     ///< pinned pool for the backlog (0: pageable)
  std::string trim_baseline;             ///< path; default: beside this executable
  std::string json;                      ///< write the figures here
  int device = 0;                        ///< CUDA device
  unsigned repeats = 5;                  ///< bandwidth copies (median)
};

/// One heap shape released by one allocator.
struct heap_figures {
  std::string allocator;  ///< "jemalloc" | "glibc"
  std::string release;    ///< the release call: "arena.<i>.purge", or the baseline's
  uint64_t bytes = 0, chunk = 0, keep_every = 0;
  double alloc_ms = 0, free_ms = 0, release_ms = 0;
  uint64_t rss_allocated = 0, rss_freed = 0, rss_released = 0;
  std::string error;  ///< non-empty: not measured, and why

  uint64_t returned_in_free() const { return rss_allocated > rss_freed ? rss_allocated - rss_freed : 0; }
  uint64_t returned_by_release() const { return rss_freed > rss_released ? rss_freed - rss_released : 0; }
  /// release_ms per GiB returned by the release call (0 if it returned nothing).
  double ms_per_gib() const;
};

/// One backlog run with one purge mode.
struct backlog_figures {
  std::string mode;  ///< "off" | "message" | "inline"
  unsigned partitions = 0;
  double wall_ms = 0;
  double gap_p50_ms = 0, gap_p99_ms = 0, gap_max_ms = 0;  ///< kernel end -> next kernel start
  uint64_t purges = 0;              ///< purges run
  double purge_ms = 0, purge_max_ms = 0;
  double purge_on_gpu_thread_ms = 0;   ///< purge time on the GPU worker's thread
  double purge_on_manager_ms = 0;      ///< purge time on the memory manager's thread
  std::vector<std::string> threads;    ///< where purges ran
  uint64_t budget = 0, peak_reserved = 0, peak_rss = 0, baseline_rss = 0;
  bool ok = true;
  std::string error;
};

struct bandwidth_figures {
  uint64_t bytes = 0;
  bool pool_pinned = false;
  double pin_ms = 0;
  std::optional<double> pool_gbps, pageable_gbps, host_alloc_gbps;
  std::string note;  ///< why something is missing
};

struct memory_bench_report {
  std::string machine;  ///< cores, memory, CPU, jemalloc, GPU
  std::string gpu;      ///< "" when none (with `gpu_why`)
  std::string gpu_why;
  std::vector<heap_figures> heaps;
  std::string backend;  ///< the backlog's backend, in words
  std::vector<backlog_figures> backlog;
  std::optional<bandwidth_figures> bandwidth;

  /// Everything above as one JSON object.
  std::string json() const;
  /// False when a measurement failed (exit 1).
  bool ok() const;
};

/// Runs every measurement; progress lines go to `log`.
memory_bench_report run_memory_bench(const memory_bench_options& opts, std::ostream& log);

/// The tables.
void print_memory_bench(std::ostream& out, const memory_bench_report& r);

}  // namespace proofline::bench
