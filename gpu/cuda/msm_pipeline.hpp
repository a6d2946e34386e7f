// The MSM pipeline, all its parts (gpu/cuda/msm/): plan.hpp (shapes),
// tuning.hpp (policies and defaults), the kernels (bucket_kernels.hpp,
// reduce_kernels.hpp, precompute_kernel.hpp) and pipeline.hpp (the steps
// over an executor). The design: docs/GPU.md, "MSM pipeline".
#pragma once

#include "gpu/cuda/msm/pipeline.hpp"
