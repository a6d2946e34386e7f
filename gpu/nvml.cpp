#include "gpu/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "base/text.hpp"

namespace proofline::gpu {

namespace {

// The few NVML declarations used here, from NVIDIA's documented C API
// (nvml.h): return codes are ints with 0 = NVML_SUCCESS, devices are opaque
// handles, and the structs below match nvmlUtilization_t and nvmlMemory_t.
using nvml_return = int;
constexpr nvml_return nvml_success = 0;
using nvml_device_handle = void*;
struct nvml_utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct nvml_memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
/// NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE are 96.
constexpr unsigned nvml_text_buffer = 96;

}  // namespace

/// The loaded library and the entry points used.
struct nvml_sampler::api {
  void* library = nullptr;
  bool initialized = false;
  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  const char* (*error_string)(nvml_return) = nullptr;
  nvml_return (*device_count)(unsigned int*) = nullptr;
  nvml_return (*device_by_index)(unsigned int, nvml_device_handle*) = nullptr;
  nvml_return (*device_name)(nvml_device_handle, char*, unsigned int) = nullptr;
  nvml_return (*device_uuid)(nvml_device_handle, char*, unsigned int) = nullptr;
  nvml_return (*utilization)(nvml_device_handle, nvml_utilization*) = nullptr;
  nvml_return (*memory_info)(nvml_device_handle, nvml_memory*) = nullptr;
  std::vector<nvml_device_handle> handles;

  ~api() {
    if (initialized && shutdown) shutdown();
    if (library) dlclose(library);
  }

  std::string error(nvml_return r) const {
    if (error_string) return error_string(r);
    return "NVML error " + std::to_string(r);
  }

  /// Resolves `name` into `fn`; false (with *why set) if the library lacks it.
  template <class F>
  bool bind(F& fn, const char* name, std::string* why) {
    fn = reinterpret_cast<F>(dlsym(library, name));
    if (!fn) *why = std::string("NVML library has no ") + name;
    return fn != nullptr;
  }
};

nvml_sampler::nvml_sampler(std::chrono::steady_clock::time_point epoch,
                           std::chrono::milliseconds period, std::string library)
    : epoch_(epoch), period_(period), api_(std::make_unique<api>()) {
  if (period_.count() <= 0) period_ = default_period;
  api& a = *api_;
  a.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!a.library) {
    const char* e = dlerror();
    why_ = e ? e : library + ": cannot be loaded";
    return;
  }
  // The _v2 entry points are the current ones (since CUDA 5); nvmlInit_v2
  // does not fail when some device is unhealthy.
  if (!a.bind(a.init, "nvmlInit_v2", &why_) || !a.bind(a.shutdown, "nvmlShutdown", &why_) ||
      !a.bind(a.device_count, "nvmlDeviceGetCount_v2", &why_) ||
      !a.bind(a.device_by_index, "nvmlDeviceGetHandleByIndex_v2", &why_) ||
      !a.bind(a.device_name, "nvmlDeviceGetName", &why_) ||
      !a.bind(a.utilization, "nvmlDeviceGetUtilizationRates", &why_))
    return;
  a.bind(a.error_string, "nvmlErrorString", &why_);  // optional
  a.bind(a.device_uuid, "nvmlDeviceGetUUID", &why_);
  a.bind(a.memory_info, "nvmlDeviceGetMemoryInfo", &why_);
  why_.clear();
  if (nvml_return r = a.init(); r != nvml_success) {
    why_ = "nvmlInit: " + a.error(r);
    return;
  }
  a.initialized = true;
  unsigned count = 0;
  if (nvml_return r = a.device_count(&count); r != nvml_success) {
    why_ = "nvmlDeviceGetCount: " + a.error(r);
    return;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvml_device_handle h = nullptr;
    if (a.device_by_index(i, &h) != nvml_success) continue;  // e.g. no permission: skip it
    nvml_device d;
    d.index = i;
    char text[nvml_text_buffer] = {};
    if (a.device_name(h, text, sizeof(text)) == nvml_success) d.name = text;
    text[0] = '\0';
    if (a.device_uuid && a.device_uuid(h, text, sizeof(text)) == nvml_success) d.uuid = text;
    devices_.push_back(d);
    a.handles.push_back(h);
  }
  if (devices_.empty()) {
    why_ = count == 0 ? "NVML sees no device" : "NVML could not open any device";
    return;
  }
  available_ = true;
  latest_.resize(devices_.size());
  thread_ = std::thread([this] { sample_loop(); });
}

nvml_sampler::~nvml_sampler() { stop(); }

void nvml_sampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void nvml_sampler::sample_loop() {
  auto next = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    sample_once();
    lock.lock();
    // Fixed rate, not fixed delay: a slow read does not stretch the period.
    next += period_;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

void nvml_sampler::sample_once() {
  api& a = *api_;
  std::vector<nvml_sample> read;
  for (size_t i = 0; i < devices_.size(); ++i) {
    nvml_utilization u{};
    if (a.utilization(a.handles[i], &u) != nvml_success) continue;
    nvml_sample s;
    s.t_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch_)
                 .count();
    s.device = devices_[i].index;
    s.gpu_percent = u.gpu;
    s.memory_percent = u.memory;
    nvml_memory m{};
    if (a.memory_info && a.memory_info(a.handles[i], &m) == nvml_success) s.memory_used = m.used;
    read.push_back(s);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& s : read) {
    samples_.push_back(s);
    for (size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i].index == s.device) latest_[i] = s;
  }
}

std::vector<nvml_sample> nvml_sampler::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

std::vector<nvml_sample> nvml_sampler::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<nvml_sample> out;
  for (const auto& s : latest_)
    if (s) out.push_back(*s);
  return out;
}

std::optional<unsigned> nvml_index_of_cuda_device(int cuda_device,
                                                  const std::vector<nvml_device>& devices) {
  if (cuda_device < 0) return std::nullopt;
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!env || !*env) return static_cast<unsigned>(cuda_device);
  std::vector<std::string> entries = base::split(env, ',');
  for (std::string& e : entries) {
    while (!e.empty() && e.front() == ' ') e.erase(e.begin());
    while (!e.empty() && e.back() == ' ') e.pop_back();
  }
  if (static_cast<size_t>(cuda_device) >= entries.size()) return std::nullopt;
  const std::string& e = entries[cuda_device];
  if (e.empty()) return std::nullopt;
  if (e.find_first_not_of("0123456789") == std::string::npos) return std::stoul(e);
  if (e.rfind("GPU-", 0) == 0)  // a UUID or a unique prefix of one
    for (const auto& d : devices)
      if (d.uuid.rfind(e, 0) == 0) return d.index;
  return std::nullopt;  // MIG instances and anything else
}

}  // namespace proofline::gpu
