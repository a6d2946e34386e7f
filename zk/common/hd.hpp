// Host/device portability for the arithmetic shared by the CPU and CUDA
// backends. Everything in zk/ff and zk/ec is written once and compiled by the
// host compiler and by nvcc; PL_HD marks what both may call.
#pragma once

#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define PL_HD __host__ __device__ __forceinline__
#define PL_DEVICE_CODE 1
#elif defined(__CUDACC__)
// nvcc's host pass: inline as the host compiler sees fit (forcing it there
// makes g++ take minutes over code that only runs once per MSM on the host)
#define PL_HD __host__ __device__ inline
#define PL_DEVICE_CODE 1
#else
#define PL_HD inline
#define PL_DEVICE_CODE 0
#endif

// Unroll hint that both compilers accept.
#if defined(__CUDACC__)
#define PL_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define PL_UNROLL _Pragma("GCC unroll 16")
#else
#define PL_UNROLL
#endif
