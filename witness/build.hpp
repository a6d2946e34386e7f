// `proofline witness build`: compiles the C++ code of `circom --c` (the
// NAME_cpp/ directory) with proofline's entry point (witness/entry.cpp) into
// a witness generator, a shared object with the C interface of
// witness/abi.h.
//
// What goes in: NAME.cpp, calcwit.cpp and fr.cpp from the directory, with
// its headers; fr.asm through nasm when the directory has it (circom's
// default, x86-64 assembly that needs ADX and BMI2), else circom's --no_asm
// field code; the circuit's NAME.dat, linked into the object; the names of
// the input signals from NAME.sym (circom --sym) when it is found, so that
// errors can name a missing signal. circom's main.cpp is not used. Only the
// ABI's functions are exported; the rest is local to the object.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace proofline::witness {

struct build_options {
  std::string dir;     ///< what `circom --c` wrote: NAME_cpp/
  std::string output;  ///< empty: NAME.so beside the directory
  std::string sym;     ///< empty: NAME.sym beside the directory, when there is one
  std::string cxx;     ///< empty: $CXX, else c++
  std::string nasm;    ///< empty: nasm on PATH
  unsigned jobs = 0;   ///< compilers at once; 0: one per hardware thread
  bool keep_temp = false;  ///< keep the directory of intermediate files
};

struct build_result {
  std::string output;      ///< the object written
  bool uses_asm = false;   ///< circom's assembly field code (else --no_asm code)
  bool named_inputs = false;  ///< the .sym file gave the input signals' names
  double seconds = 0;      ///< wall time of the whole build
};

/// Builds the generator; progress lines go to `progress` (one call per
/// line). Throws std::runtime_error with a message naming the file or tool
/// at fault: not a directory of circom's C++ output, fr.asm without nasm or
/// on a CPU without ADX/BMI2 ("... or compile with circom --c --no_asm"), no
/// compiler, a compile error (with the end of the compiler's output and
/// where the whole log was kept).
build_result build_generator(const build_options& opts,
                             const std::function<void(const std::string&)>& progress);

/// The text of witness/entry.cpp, witness/abi.h and witness/capture.hpp as
/// built into this binary (written next to circom's sources by the build).
const char* entry_source();
const char* abi_header();
const char* capture_header();

}  // namespace proofline::witness
