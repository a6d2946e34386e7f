// The run report: what a run did and how busy it kept the GPU, for the
// summary table, `--report FILE` and `--json`.
//
//   run_record          everything a run leaves behind (job reports, backends,
//                       memory statistics, queue and NVML samples, purges)
//   partition_record    one partition flattened from a job_report, with the
//                       stage lanes it ran on
//   run_report          the figures computed from a record (build_report)
//   report_json         the report as JSON text (docs/OBSERVABILITY.md)
//   nvml_busy_fraction  NVML's mean utilization of a device over a window
//
// Busy time and hand-off gaps come from observe/utilization.hpp, the one
// definition the baseline benchmark uses too: the union of a device's spans
// over the time from its first span's start to its last span's end. On the
// CPU backend the "GPU" entries describe the backend's own spans (device 0).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml.hpp"
#include "observe/utilization.hpp"
#include "messages/values.hpp"

namespace proofline::observe {

/// Queue depths and memory at one moment of the run.
struct queue_sample {
  double t_ms = 0;     ///< ms since the run started
  uint64_t ready = 0;  ///< synthesized partitions waiting at the scheduler for a GPU worker
  uint64_t waiting_memory = 0;  ///< partitions queued at the memory manager for their budget
  uint64_t reserved = 0;        ///< bytes reserved in the memory ledger
  uint64_t rss = 0;             ///< resident set size of the process, bytes
  /// CPU time the process has used since it started (user + system, every
  /// thread; getrusage), ms; negative when it could not be read.
  double cpu_ms = -1;
};

/// One arena purge the memory manager ran, on the run's clock.
struct purge_record {
  double start_ms = 0;
  double end_ms = 0;
  int arena = -1;
  uint64_t bytes = 0;  ///< dirty bytes returned to the kernel
  std::string thread;  ///< the thread it ran on ("pl.memory")
};

/// A prover backend of the run; its position is the `gpu` of partition_spans.
struct backend_record {
  std::string kind;         ///< "cpu" or "cuda"
  std::string description;  ///< backend::describe()
  int cuda_device = -1;     ///< the CUDA device ordinal it drives; -1 on the CPU
  unsigned lanes = 1;       ///< GPU-worker lanes on it
};

/// Everything a run leaves behind for its reports.
struct run_record {
  std::string job_file;    ///< the job file the run proved
  std::string started_at;  ///< when the run started, ISO 8601 in UTC (iso8601_utc)
  double wall_ms = 0;  ///< run start to the last job's completion
  std::vector<job_report> jobs;
  std::vector<backend_record> backends;
  unsigned synthesizers = 0;  ///< configured pool sizes
  unsigned finalizers = 0;
  std::optional<memory_stats> memory;  ///< the memory manager's statistics at the end
  std::vector<queue_sample> queues;    ///< in time order
  std::vector<purge_record> purges;    ///< in time order
  std::vector<key_startup> keys;       ///< each key load and its preparations (key cache)
  // NVML cross-check
  bool nvml_available = false;
  std::string nvml_why;  ///< why there are no NVML samples
  double nvml_period_ms = 100;
  std::vector<gpu::nvml_device> nvml_devices;
  std::vector<gpu::nvml_sample> nvml_samples;  ///< t_ms on the run's clock
};

/// One partition of a record, flattened.
struct partition_record {
  std::string job;
  uint32_t index = 0;
  partition_state state = partition_state::queued;
  partition_spans spans;
  int synthesizer = -1;  ///< lane among the synthesizers that ran partitions (by actor id)
  int finalizer = -1;    ///< lane among the finalizers
};

/// Every partition of `rec`, in job order then index; synthesizer and
/// finalizer lanes numbered 0.. in ascending actor id (spawn order).
std::vector<partition_record> partitions_of(const run_record& rec);

/// The device timelines of `rec`'s partitions that reached a backend.
std::vector<partition_timeline> timelines_of(const run_record& rec);

/// One GPU (or the CPU backend) in the report.
struct gpu_report {
  int device = 0;        ///< backend index
  int cuda_device = -1;  ///< CUDA ordinal; -1 for the CPU backend
  std::string name;      ///< NVML's name when known, else the backend's description
  std::string kind;      ///< "cuda" or "cpu"
  device_utilization util;
  std::optional<double> nvml_busy_fraction;  ///< mean NVML utilization over util's window
  uint64_t nvml_samples = 0;                 ///< samples that mean is over
  /// Busy fraction counting key preparation's device spans beside the
  /// partitions' (over the window of both); equals util's when a backend
  /// reports no preparation spans.
  double busy_fraction_with_keys = 0;
  double busy_ms_with_keys = 0;
  /// Keys this device prepared (gpu::backend::prepare) and the time those
  /// prepare() calls took in all, on the GPU worker's clock.
  uint64_t keys_prepared = 0;
  double key_prepare_ms = 0;
  double key_to_device_ms = 0;  ///< of which copying points to the device (0: not measured)
};

/// How one key load became ready, for the report's `startup` section.
struct key_startup_report {
  std::string path;
  uint64_t bytes = 0;         ///< host bytes
  double read_ms = 0;         ///< reading and checking the .zkey
  double prepare_ms = 0;      ///< the longest prepare() call over the devices
  double to_device_ms = 0;    ///< longest over the devices; 0: not measured
  double tables_ms = 0;       ///< longest over the devices; 0: not measured, or none
  uint64_t tables_bytes = 0;  ///< largest on one device
  uint64_t device_bytes = 0;  ///< largest on one device
  uint64_t abc_bytes = 0;     ///< of them, A and B for a, b, c on the device; largest on one device
};

/// Start-up: how long until the GPU and the first proof got going, and what
/// each key and the pinned pool cost on the way.
struct startup_report {
  std::optional<double> first_gpu_work_ms;  ///< earliest device span (partition or key), run clock
  std::optional<double> first_proof_ms;     ///< earliest proof written
  std::vector<key_startup_report> keys;
  uint64_t pool_bytes = 0;
  bool pool_pinned = false;
  double pool_pin_ms = 0;
};

/// Time a stage took per partition: nearest-rank percentiles, ms.
struct stage_times {
  uint64_t count = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0, total_ms = 0;
};

/// One job of the run, as the report's job table lists it.
struct job_row {
  std::string id;
  std::string status;  ///< done, failed or cancelled
  uint64_t done = 0;   ///< partitions proved
  uint64_t total = 0;  ///< partitions in the job
  std::string out;     ///< its out directory
  bool has_error = false;
  file_error error;  ///< the job's error when has_error
};

/// `t` as "2026-12-01T12:04:44.123Z" (UTC, milliseconds).
std::string iso8601_utc(std::chrono::system_clock::time_point t);

/// The process's CPU time over the window in which the devices proved
/// (first partition span start to last end, over every device), from the
/// observer's samples interpolated at the window's ends: what the whole
/// runtime (synthesis, scheduling, finalizing, purges, the CUDA driver's
/// threads) costs the host while it keeps the GPUs fed.
struct cpu_report {
  double window_ms = 0;  ///< the devices' proving window
  double cpu_ms = 0;     ///< CPU time used in it (user + system, every thread)
  uint64_t partitions = 0;  ///< partitions the devices proved
  double per_partition_ms = 0;  ///< cpu_ms / partitions
  double cores = 0;             ///< cpu_ms / window_ms: cores busy on average
};

/// The CPU time of `samples` (in time order) at `t_ms`, linear between the
/// two samples around it; none when t_ms is outside the samples or a
/// sample around it has no CPU time.
std::optional<double> cpu_at(const std::vector<queue_sample>& samples, double t_ms);

/// The CPU figures over [first_ms, last_ms] for `partitions` partitions;
/// none when the samples do not cover the window or it is empty.
std::optional<cpu_report> cpu_over(const std::vector<queue_sample>& samples, double first_ms, double last_ms,
                                   uint64_t partitions);

/// The figures of a run.
struct run_report {
  std::string job_file;      ///< from the record
  std::string started_at;    ///< from the record
  std::vector<job_row> job_table;  ///< every job, in the job file's order
  uint64_t jobs = 0, jobs_done = 0, jobs_failed = 0, jobs_cancelled = 0;
  uint64_t partitions = 0;  ///< in all jobs
  uint64_t proofs = 0;      ///< partitions done
  uint64_t failed = 0;      ///< partitions failed
  double wall_ms = 0;
  double proofs_per_s = 0;
  std::string backend;  ///< "cuda" or "cpu" (the first backend's kind)
  std::vector<gpu_report> gpus;
  stage_times synthesize, prove, finalize;
  /// Witness generation inside synthesize (jobs with a generator); count 0 otherwise.
  stage_times witness;
  std::optional<memory_stats> memory;
  bool nvml_available = false;
  std::string nvml_why;
  std::vector<queue_sample> queues;  ///< at most max_report_queue_points
  startup_report startup;
  std::optional<cpu_report> cpu;  ///< none without samples over the proving window
};

/// Queue samples kept in a report: at 10 Hz, 200 s of run; longer runs are
/// thinned to this many points (each the deepest of its stretch).
inline constexpr size_t max_report_queue_points = 2000;

/// The device timelines of `rec`'s key preparations that reported spans.
std::vector<partition_timeline> key_timelines_of(const run_record& rec);

/// The start-up figures of a record.
startup_report startup_of(const run_record& rec);

/// Computes the report of a run. O(S log S) in the device spans.
run_report build_report(const run_record& rec);

/// The report as JSON text (pretty-printed with `indent` spaces; -1 compact).
/// Keys: job_file, started_at, proofs, failed, partitions, jobs{total,
/// done, failed, cancelled}, job_table[{id, status, partitions{done, total},
/// out, error: null | {file, message}}], wall_s, proofs_per_s, backend,
/// gpus[{device, cuda_device, name, kind, partitions, gpu_busy_fraction,
/// busy_ms, window_ms, nvml_busy_fraction, nvml_samples, handoff_gap_ms{p50,
/// p99, max, count}, gpu_busy_fraction_with_keys, busy_ms_with_keys, keys_prepared,
/// key_prepare_ms, key_to_device_ms}], startup{first_gpu_work_ms,
/// first_proof_ms, keys[{path, bytes, read_ms, prepare_ms, to_device_ms,
/// tables_ms, tables_bytes, device_bytes, abc_bytes}], pool{bytes, pinned, pin_ms}},
/// stages{synthesize, prove, finalize}, nvml{available,
/// reason}, memory{budget_bytes, peak_reserved_bytes, peak_rss_bytes, ...},
/// purge{count, requests, total_ms, max_ms, bytes, threads}, cpu: null |
/// {window_ms, cpu_ms, partitions, per_partition_ms, cores}, queues[{t_s,
/// ready_partitions, waiting_for_memory, reserved_bytes, rss_bytes, cpu_s}].
std::string report_json(const run_report& r, int indent = 2);

/// NVML's utilization.gpu is the share of the driver's last sample period
/// with a kernel running, and the value read is held until the next period
/// ends, so a read reflects up to two periods before it (how long that is on
/// the H200: docs/benchmarks-history.md, "Earlier runs, same day"). A read taken less
/// than that after the window opens still counts time from before it. (Other
/// products use periods of up to 1 s.)
inline constexpr double nvml_lookback_ms = 400;

/// Mean NVML utilization.gpu (as a fraction) of NVML device `nvml_index`
/// over the samples taken in [from_ms + lookback_ms, to_ms], whose periods
/// lie inside the window; when none does (a window shorter than the
/// lookback), over those in [from_ms, to_ms]; nullopt when there are none.
/// `count` receives the number of samples used.
std::optional<double> nvml_busy_fraction(const std::vector<gpu::nvml_sample>& samples,
                                         unsigned nvml_index, double from_ms, double to_ms,
                                         uint64_t* count = nullptr, double lookback_ms = 0);

/// At most `max_points` samples: `samples` itself when short enough, else one
/// per stretch of consecutive samples, with the largest depths of the stretch.
std::vector<queue_sample> thin_queue_samples(const std::vector<queue_sample>& samples,
                                             size_t max_points);

}  // namespace proofline::observe
