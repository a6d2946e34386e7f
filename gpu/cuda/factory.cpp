#include "gpu/cuda/factory.hpp"

#include "zk/dev/fixed_base_engine.hpp"

#if PROOFLINE_HAVE_CUDA
#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/cuda/fixed_base.hpp"
#endif

namespace proofline::gpu {

#if PROOFLINE_HAVE_CUDA

int cuda_device_count(std::string* why) { return cuda::device_count(why); }

std::unique_ptr<backend> make_cuda_backend(int device, const cuda_settings& settings) {
  cuda::backend_options o;
  o.memory_limit = settings.memory_limit;
  o.lanes = settings.lanes;
  return cuda::make_backend(device, o);
}

std::unique_ptr<zk::dev::fixed_base_engine> make_cuda_fixed_base_engine(int device) {
  cuda::fixed_base_options o;
  o.device = device;
  return cuda::make_fixed_base_engine(o);
}

#else

int cuda_device_count(std::string* why) {
  if (why) *why = "built without CUDA";
  return 0;
}

std::unique_ptr<backend> make_cuda_backend(int, const cuda_settings&) {
  throw backend_error("the CUDA backend is not available: proofline was built without CUDA");
}

std::unique_ptr<zk::dev::fixed_base_engine> make_cuda_fixed_base_engine(int) {
  throw backend_error("the CUDA fixed-base engine is not available: proofline was built without CUDA");
}

#endif

}  // namespace proofline::gpu
