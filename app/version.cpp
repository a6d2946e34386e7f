#include "app/version.hpp"

#include <caf/config.hpp>

#if PROOFLINE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "app/cli.hpp"

#ifndef PROOFLINE_COMMIT
#define PROOFLINE_COMMIT "unknown"
#endif
#ifndef PROOFLINE_BUILD_TYPE
#define PROOFLINE_BUILD_TYPE ""
#endif

namespace proofline::app {

namespace {

/// 13000 -> "13.0" (CUDA's encoding: 1000 * major + 10 * minor).
[[maybe_unused]] std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cuda_line() {
#if PROOFLINE_HAVE_CUDA
  std::string s = "yes (built with CUDA " + cuda_version(CUDART_VERSION);
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) s += "; runtime " + cuda_version(runtime);
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    s += ", driver " + cuda_version(driver);
  else
    s += ", driver none: no NVIDIA driver";
  return s + ")";
#else
  return "no (built without CUDA: the CPU backend only)";
#endif
}

}  // namespace

std::string version_details() {
  std::string build = PROOFLINE_BUILD_TYPE;
  return version_text() + "\n" +                                   //
         "commit: " + PROOFLINE_COMMIT + "\n" +                    //
         "build: " + (build.empty() ? "default (no CMAKE_BUILD_TYPE)" : build) + "\n" +
         "CUDA: " + cuda_line() + "\n" +                           //
         "curves: BN254, BLS12-381\n" +                            //
         "CAF: " + std::to_string(CAF_MAJOR_VERSION) + "." + std::to_string(CAF_MINOR_VERSION) +
         "." + std::to_string(CAF_VERSION % 100) + "\n";
}

}  // namespace proofline::app
