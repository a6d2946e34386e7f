// A process-wide choice read once from an environment variable (the kernels'
// PROOFLINE_* overrides): the variable's value in the setting's spelling, or
// a default when unset or empty.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace proofline::gpu::cuda {

/// Construct one as a function-local static; get() returns the value, or
/// throws std::invalid_argument naming the variable and the problem at every
/// use when the value did not parse.
template <class T>
class env_setting {
 public:
  /// parse(text) returns a T or throws std::invalid_argument.
  template <class Parse>
  env_setting(const char* variable, T fallback, Parse parse) : value_(std::move(fallback)) {
    const char* v = std::getenv(variable);
    if (!v || !*v) return;
    try {
      value_ = parse(std::string(v));
    } catch (const std::invalid_argument& e) {
      error_ = std::string(variable) + ": " + e.what();
    }
  }

  const T& get() const {
    if (!error_.empty()) throw std::invalid_argument(error_);
    return value_;
  }

 private:
  T value_;
  std::string error_;
};

}  // namespace proofline::gpu::cuda
