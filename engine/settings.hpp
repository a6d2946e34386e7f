// What a proving runtime is asked for: the options `run`, `serve` and `prove`
// take on the command line (app/cli.cpp declares them), and the library
// takes as a JSON object of the same names (settings_from_json). Zero and
// empty mean the default, as on the command line.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace proofline::engine {

struct runtime_settings {
  std::string backend = "auto";  ///< auto | cpu | cuda
  std::string gpus = "all";      ///< all | comma-separated CUDA device ids
  std::string gpu_memory;        ///< per-GPU device memory limit(s); empty: 90% of free
  unsigned gpu_lanes = 2;        ///< GPU-worker lanes per GPU
  unsigned synthesizers = 0;     ///< 0: default_synthesizers (engine/backend_choice.hpp)
  unsigned finalizers = 2;
  unsigned cpu_threads = 0;      ///< CPU backend and key-loading threads; 0: every hardware thread
  unsigned synthesis_ahead = 0;  ///< pacing; 0: adaptive (runtime_config::pacing)
  unsigned synthesis_ahead_max = 0;  ///< widening limit of pacing (runtime_config::max_pacing)
  uint64_t memory_budget = 0;    ///< bytes; 0: default_memory_budget()
  bool no_verify = false;        ///< write proofs without the pairing self-check
  std::string synthesis_model = "plain";  ///< plain | lc | lc-keep (zk/groth16/synthesis_model.hpp)
};

/// Physical memory in bytes from /proc/meminfo (0 if unreadable).
uint64_t physical_memory();

/// The default memory budget: 70% of MemTotal (/proc/meminfo) minus 1 GiB
/// for proving keys and the runtime, and at least 256 MiB.
uint64_t default_memory_budget();

/// Settings from a JSON object keyed by the long option names without "--"
/// ({"backend": "cuda", "gpus": "0,1", "memory-budget": "8G", "no-verify":
/// false}); keys not given keep the defaults. A key of `also` (library-only
/// keys its caller reads itself) is skipped. Throws std::invalid_argument
/// naming the key and what was expected, for text that is not one JSON
/// object, an unknown key, or a value of the wrong kind or range.
runtime_settings settings_from_json(const std::string& text,
                                    std::initializer_list<const char*> also = {});

}  // namespace proofline::engine
