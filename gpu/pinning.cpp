#include "gpu/pinning.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#if PROOFLINE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace proofline::gpu {

#if PROOFLINE_HAVE_CUDA

namespace {

/// "cudaHostRegister: out of memory", and clears the sticky error state.
std::string describe(const char* what, cudaError_t e) {
  cudaGetLastError();
  return std::string(what) + ": " + cudaGetErrorString(e);
}

/// Times `repeats` copies of `bytes` from `host` into a device buffer.
std::optional<double> time_copies(const void* host, std::size_t bytes, int repeats, int device,
                                  std::string* why) {
  auto fail = [&](const char* what, cudaError_t e) -> std::optional<double> {
    if (why) *why = describe(what, e);
    return std::nullopt;
  };
  if (bytes == 0 || repeats <= 0) return fail("h2d_gbps", cudaErrorInvalidValue);
  if (auto e = cudaSetDevice(device); e != cudaSuccess) return fail("cudaSetDevice", e);
  void* d_dst = nullptr;
  if (auto e = cudaMalloc(&d_dst, bytes); e != cudaSuccess) return fail("cudaMalloc", e);
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> gbps;
  cudaError_t err = cudaSuccess;
  // One untimed copy first: the first touch of a device buffer maps its pages.
  err = cudaMemcpy(d_dst, host, bytes, cudaMemcpyHostToDevice);
  for (int i = 0; i < repeats && err == cudaSuccess; ++i) {
    cudaEventRecord(start, nullptr);
    err = cudaMemcpy(d_dst, host, bytes, cudaMemcpyHostToDevice);
    cudaEventRecord(stop, nullptr);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (ms > 0) gbps.push_back(double(bytes) / (double(ms) * 1e6));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(d_dst);
  if (err != cudaSuccess) return fail("cudaMemcpy", err);
  if (gbps.empty()) return fail("cudaEventElapsedTime", cudaErrorUnknown);
  std::sort(gbps.begin(), gbps.end());
  return gbps[gbps.size() / 2];
}

}  // namespace

memory::pinner cuda_pinner() {
  memory::pinner p;
  p.name = "cudaHostRegister";
  p.pin = [](void* ptr, std::size_t bytes, std::string* why) {
    // Fresh pages are faulted in and zeroed as they are registered, which is
    // slow for a pool of gigabytes (faulting them in from many threads first
    // was slower still; docs/BENCHMARKS.md, "Memory"), so the memory manager
    // runs this on its own thread.
    // Portable: pinned for every device's context, not only the current one
    // (one pool serves every GPU worker).
    cudaError_t e = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
    if (e == cudaSuccess) return true;
    if (why) *why = cudaGetErrorString(e);  // the pool prefixes the pinner's name
    cudaGetLastError();
    return false;
  };
  p.unpin = [](void* ptr) {
    if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
  };
  return p;
}

std::optional<double> h2d_gbps(const void* host, std::size_t bytes, int repeats, int device,
                               std::string* why) {
  return time_copies(host, bytes, repeats, device, why);
}

std::optional<double> h2d_gbps_host_alloc(std::size_t bytes, int repeats, int device,
                                          std::string* why) {
  if (auto e = cudaSetDevice(device); e != cudaSuccess) {
    if (why) *why = describe("cudaSetDevice", e);
    return std::nullopt;
  }
  void* host = nullptr;
  if (auto e = cudaHostAlloc(&host, bytes, cudaHostAllocDefault); e != cudaSuccess) {
    if (why) *why = describe("cudaHostAlloc", e);
    return std::nullopt;
  }
  std::memset(host, 1, bytes);
  auto r = time_copies(host, bytes, repeats, device, why);
  cudaFreeHost(host);
  return r;
}

std::unique_ptr<upload_channel> upload_channel::open(std::size_t capacity, int device,
                                                     std::string* why) {
  if (auto e = cudaSetDevice(device); e != cudaSuccess) {
    if (why) *why = describe("cudaSetDevice", e);
    return nullptr;
  }
  void* d_buffer = nullptr;
  if (auto e = cudaMalloc(&d_buffer, capacity ? capacity : 1); e != cudaSuccess) {
    if (why) *why = describe("cudaMalloc", e);
    return nullptr;
  }
  return std::unique_ptr<upload_channel>(new upload_channel(d_buffer, capacity, device));
}

upload_channel::~upload_channel() {
  cudaSetDevice(device_);
  cudaFree(d_buffer_);
}

bool upload_channel::copy(const void* host, std::size_t bytes) {
  if (bytes > capacity_) return false;
  if (cudaSetDevice(device_) != cudaSuccess) return false;
  if (cudaMemcpy(d_buffer_, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess) return true;
  cudaGetLastError();
  return false;
}

#else

memory::pinner cuda_pinner() { return {}; }

std::unique_ptr<upload_channel> upload_channel::open(std::size_t, int, std::string* why) {
  if (why) *why = "built without CUDA";
  return nullptr;
}

upload_channel::~upload_channel() = default;

bool upload_channel::copy(const void*, std::size_t) { return false; }

std::optional<double> h2d_gbps(const void*, std::size_t, int, int, std::string* why) {
  if (why) *why = "built without CUDA";
  return std::nullopt;
}

std::optional<double> h2d_gbps_host_alloc(std::size_t, int, int, std::string* why) {
  if (why) *why = "built without CUDA";
  return std::nullopt;
}

#endif

}  // namespace proofline::gpu
