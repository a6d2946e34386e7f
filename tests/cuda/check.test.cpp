// CUDA_OK's errors: a context-poisoning error is thrown as sticky_error (the
// backend turns it into gpu::device_lost), any other as a plain
// backend_error; both name the call and CUDA's words. No GPU needed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>

#include "gpu/cuda/check.cuh"

using proofline::gpu::backend_error;
using proofline::gpu::cuda::check;
using proofline::gpu::cuda::is_sticky;
using proofline::gpu::cuda::sticky_error;

TEST_CASE("an illegal address is a sticky error, out of memory is not") {
  CHECK(is_sticky(cudaErrorIllegalAddress));
  CHECK(is_sticky(cudaErrorLaunchFailure));
  CHECK_FALSE(is_sticky(cudaErrorMemoryAllocation));
  CHECK_FALSE(is_sticky(cudaErrorInvalidValue));
  CHECK_THROWS_AS(check(cudaErrorIllegalAddress, "k<<<1, 1>>>()", "gpu/cuda/x.cu", 7), sticky_error);
  try {
    check(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "gpu/cuda/x.cu", 9);
    FAIL("no exception");
  } catch (const sticky_error&) {
    FAIL("out of memory thrown as sticky");
  } catch (const backend_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cudaMalloc(&p, n) at x.cu:9: cudaErrorMemoryAllocation") != std::string::npos);
  }
  CHECK_NOTHROW(check(cudaSuccess, "cudaFree(0)", "x.cu", 1));
}
