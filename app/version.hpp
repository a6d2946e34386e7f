// `proofline --version`: what this binary is, for bug reports and for an
// operator checking a deployment. One "key: value" line each after the
// first:
//
//   proofline 0.1.0
//   commit: f252c99
//   build: Release
//   CUDA: yes (built with CUDA 13.0; runtime 13.0, driver none: no NVIDIA driver)
//   curves: BN254, BLS12-381
//   CAF: 0.17.6
#pragma once

#include <string>

namespace proofline::app {

/// The text above, with a trailing newline. Asks the CUDA runtime for its
/// and the driver's version when built with CUDA (no device is touched).
std::string version_details();

}  // namespace proofline::app
