// gpu/nvml: loading libnvidia-ml with dlopen, sampling every device, and
// mapping CUDA ordinals to NVML indices. A fake library (fake_nvml.cpp)
// stands in for the driver's.
#include "gpu/nvml.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

using proofline::gpu::nvml_device;
using proofline::gpu::nvml_index_of_cuda_device;
using proofline::gpu::nvml_sampler;

namespace {

/// Sets an environment variable for one scope, restoring it after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~scoped_env() {
    if (old_.empty())
      unsetenv(name_);
    else
      setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

}  // namespace

TEST_CASE("without the NVML library the sampler has no samples and says which file is missing") {
  nvml_sampler s(std::chrono::steady_clock::now(), std::chrono::milliseconds(10),
                 "libproofline-no-such-nvml.so.1");
  CHECK_FALSE(s.available());
  CHECK(s.why().find("libproofline-no-such-nvml.so.1") != std::string::npos);
  CHECK(s.devices().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK(s.samples().empty());
  CHECK(s.latest().empty());
}

TEST_CASE("the sampler reads every device's utilization at its period, on the caller's clock") {
  auto epoch = std::chrono::steady_clock::now();
  nvml_sampler s(epoch, std::chrono::milliseconds(10), PROOFLINE_FAKE_NVML);
  REQUIRE_MESSAGE(s.available(), s.why());
  REQUIRE(s.devices().size() == 2);
  CHECK(s.devices()[0].name == "Fake GPU A");
  CHECK(s.devices()[1].uuid == "GPU-bbbb1111-1111-1111-1111-111111111111");

  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  s.stop();
  double stopped_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch).count();
  auto samples = s.samples();
  // 120 ms at 10 ms: about 12 rounds of 2 devices; a loaded machine may skip some.
  CHECK(samples.size() >= 6);
  CHECK(samples.size() <= 2 * 14);
  for (const auto& x : samples) {
    CHECK(x.t_ms >= 0);
    CHECK(x.t_ms <= stopped_ms);
    if (x.device == 0) {
      CHECK(x.gpu_percent == 97);
      CHECK(x.memory_percent == 40);
      CHECK(x.memory_used == (1ull << 30));
    } else {
      CHECK(x.device == 1);
      CHECK(x.gpu_percent == 12);
    }
  }
  // Stopped means stopped: no sample is added afterwards.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK(s.samples().size() == samples.size());
  auto latest = s.latest();
  REQUIRE(latest.size() == 2);
  CHECK(latest[0].device == 0);
  CHECK(latest[1].gpu_percent == 12);
}

TEST_CASE("a CUDA ordinal maps to NVML through CUDA_VISIBLE_DEVICES") {
  std::vector<nvml_device> devices{
      {0, "A", "GPU-aaaa0000"}, {1, "B", "GPU-bbbb1111"}, {2, "C", "GPU-cccc2222"}};
  SUBCASE("unset: the same number") {
    scoped_env env("CUDA_VISIBLE_DEVICES", nullptr);
    CHECK(nvml_index_of_cuda_device(2, devices) == 2u);
  }
  SUBCASE("indices: the entry at that position") {
    scoped_env env("CUDA_VISIBLE_DEVICES", "2, 0");
    CHECK(nvml_index_of_cuda_device(0, devices) == 2u);
    CHECK(nvml_index_of_cuda_device(1, devices) == 0u);
    CHECK_FALSE(nvml_index_of_cuda_device(2, devices).has_value());
  }
  SUBCASE("UUID prefixes: the device whose UUID starts with it") {
    scoped_env env("CUDA_VISIBLE_DEVICES", "GPU-cccc,GPU-aaaa0000");
    CHECK(nvml_index_of_cuda_device(0, devices) == 2u);
    CHECK(nvml_index_of_cuda_device(1, devices) == 0u);
  }
  SUBCASE("MIG instances cannot be told apart") {
    scoped_env env("CUDA_VISIBLE_DEVICES", "MIG-1234");
    CHECK_FALSE(nvml_index_of_cuda_device(0, devices).has_value());
  }
}
