// NVML sampling: an independent view of GPU utilization, to cross-check the
// busy fraction computed from the backend's device spans (observe/utilization.hpp).
//
// Problem: the device spans come from our own CUDA events; a bug there (a
// missed span, a wrong clock mapping) would make the run report lie. NVML's
// "utilization.gpu" is the driver's own figure: the percentage of its last
// sample period (1/6 s to 1 s, by product) during which a kernel ran.
//
// Design: libnvidia-ml.so.1 is loaded with dlopen at run time, so the binary
// builds and runs on machines without the NVIDIA driver; absent library or
// devices mean no samples, and why() says so for the report. One thread reads
// every device's utilization every `period` (10 Hz by default) and stores the
// samples with times in milliseconds since a caller-given epoch (the run's
// clock), so they line up with the device spans.
//
//   nvml_sample         one reading of one device
//   nvml_device         index, name and UUID of a device NVML sees
//   nvml_sampler        RAII: load + init + sampling thread; stop(), samples()
//   nvml_index_of_cuda_device   maps a CUDA device ordinal to an NVML index
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace proofline::gpu {

/// One NVML reading of one device.
struct nvml_sample {
  double t_ms = 0;      ///< when it was read, ms since the sampler's epoch
  unsigned device = 0;  ///< NVML device index
  unsigned gpu_percent =
      0;  ///< utilization.gpu: % of the driver's last period with a kernel running
  unsigned memory_percent = 0;  ///< utilization.memory: % of that period with device memory in use
  uint64_t memory_used = 0;     ///< bytes of device memory allocated
};

/// A device as NVML sees it.
struct nvml_device {
  unsigned index = 0;
  std::string name;  ///< "NVIDIA H200"
  std::string uuid;  ///< "GPU-8d5e...", what CUDA_VISIBLE_DEVICES may name
};

class nvml_sampler {
 public:
  /// 10 Hz: fine enough to see a run of a few seconds, cheap (one
  /// nvmlDeviceGetUtilizationRates per device, tens of microseconds).
  static constexpr std::chrono::milliseconds default_period{100};
  static constexpr const char* default_library = "libnvidia-ml.so.1";

  /// Loads `library`, initializes NVML and starts sampling every device every
  /// `period`. Never throws for a missing driver: available() is then false
  /// and why() says what was missing.
  explicit nvml_sampler(std::chrono::steady_clock::time_point epoch,
                        std::chrono::milliseconds period = default_period,
                        std::string library = default_library);
  /// Stops sampling, shuts NVML down and unloads the library.
  ~nvml_sampler();
  nvml_sampler(const nvml_sampler&) = delete;
  nvml_sampler& operator=(const nvml_sampler&) = delete;

  /// True when the library loaded and at least one device answered.
  bool available() const { return available_; }
  /// Why there are no samples ("libnvidia-ml.so.1: cannot open shared
  /// object file..."); empty when available.
  const std::string& why() const { return why_; }
  const std::vector<nvml_device>& devices() const { return devices_; }
  std::chrono::milliseconds period() const { return period_; }

  /// Stops the sampling thread (within one period at most). Idempotent.
  void stop();
  /// Every sample so far, in the order they were read. Thread-safe.
  std::vector<nvml_sample> samples() const;
  /// The newest sample of each device that has one. Thread-safe.
  std::vector<nvml_sample> latest() const;

 private:
  struct api;
  void sample_loop();
  void sample_once();

  std::chrono::steady_clock::time_point epoch_;
  std::chrono::milliseconds period_;
  std::unique_ptr<api> api_;
  bool available_ = false;
  std::string why_;
  std::vector<nvml_device> devices_;

  mutable std::mutex mutex_;  // guards samples_, latest_, stopping_
  std::condition_variable wake_;
  std::vector<nvml_sample> samples_;
  std::vector<std::optional<nvml_sample>> latest_;
  bool stopping_ = false;
  std::thread thread_;
};

/// The NVML index of CUDA device `cuda_device` as this process numbers it:
/// with CUDA_VISIBLE_DEVICES unset, the same number; set to indices ("2,3"),
/// the entry at that position; set to UUIDs ("GPU-8d5e..."), the device of
/// `devices` whose UUID starts with it. nullopt when it cannot tell (MIG
/// instances, an entry out of range). Assumes CUDA numbers devices in PCI
/// order as NVML does (CUDA_DEVICE_ORDER=PCI_BUS_ID, or identical devices).
std::optional<unsigned> nvml_index_of_cuda_device(int cuda_device,
                                                  const std::vector<nvml_device>& devices);

}  // namespace proofline::gpu
