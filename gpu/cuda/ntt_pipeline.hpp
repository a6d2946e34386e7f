// The NTT pipeline, all its parts (gpu/cuda/ntt/): plan.hpp (a domain's
// tables), tuning.hpp (which passes, and the default), the kernels
// (butterflies.hpp, fused.hpp, elementwise_kernels.hpp) and transform.hpp
// (the entry points over an executor). The design: docs/GPU.md, "NTT
// passes".
#pragma once

#include "gpu/cuda/ntt/transform.hpp"
