// A stand-in for libnvidia-ml.so.1 with two devices, so the NVML sampler's
// loading, device discovery and sampling run without a GPU. Exports the few
// C entry points gpu/nvml.cpp resolves; utilization is fixed per device
// (device 0: 97% gpu, 40% memory; device 1: 12%, 3%) so tests can check the
// values travel through unchanged.
#include <cstring>

namespace {

struct fake_device {
  const char* name;
  const char* uuid;
  unsigned gpu;
  unsigned memory;
  unsigned long long used;
};

fake_device devices[] = {
    {"Fake GPU A", "GPU-aaaa0000-0000-0000-0000-000000000000", 97, 40, 1ull << 30},
    {"Fake GPU B", "GPU-bbbb1111-1111-1111-1111-111111111111", 12, 3, 2ull << 30},
};
bool initialized = false;

int copy_text(const char* text, char* out, unsigned int length) {
  if (std::strlen(text) + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(out, text);
  return 0;
}

}  // namespace

extern "C" {

struct fake_utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct fake_memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

int nvmlInit_v2() {
  initialized = true;
  return 0;
}
int nvmlShutdown() {
  initialized = false;
  return 0;
}
const char* nvmlErrorString(int r) { return r == 0 ? "Success" : "Fake error"; }
int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!initialized) return 1;  // NVML_ERROR_UNINITIALIZED
  *count = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &devices[index];
  return 0;
}
int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  return copy_text(static_cast<fake_device*>(device)->name, name, length);
}
int nvmlDeviceGetUUID(void* device, char* uuid, unsigned int length) {
  return copy_text(static_cast<fake_device*>(device)->uuid, uuid, length);
}
int nvmlDeviceGetUtilizationRates(void* device, fake_utilization* u) {
  auto* d = static_cast<fake_device*>(device);
  u->gpu = d->gpu;
  u->memory = d->memory;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* device, fake_memory* m) {
  auto* d = static_cast<fake_device*>(device);
  m->total = 4ull << 30;
  m->used = d->used;
  m->free = m->total - m->used;
  return 0;
}

}  // extern "C"
