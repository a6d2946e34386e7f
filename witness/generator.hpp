// A witness generator: the shared object `proofline witness build` makes from
// the C++ code of `circom --c` (witness/abi.h), loaded into this process.
//
//   generator::open(path)    loads it and reads what it reports: its prime,
//                            witness length, signal count and input signals
//   parse_inputs(name, json) an input.json as snarkjs reads it, checked
//                            against the input signals (every problem names
//                            the input file and the signal)
//   calculate(name, values)  the witness, straight into the caller's buffer
//   check_key(...)           the generator against a proving key: same
//                            prime, same witness length
//   wtns_bytes(...)          a .wtns file of a witness, byte for byte what
//                            `snarkjs wtns calculate` writes
//
// Containment: the generator runs in the calling thread, in process. A
// failed assert of the circuit comes back as an error (witness/entry.cpp);
// a crash of the generated code (a segfault) ends the process. Objects are
// never unloaded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace proofline::witness {

/// One input signal of the circuit's main component.
struct input_signal {
  std::string name;     ///< "in", "a.b"; empty when the object was built without the .sym file
  uint64_t hash = 0;    ///< FNV-1a 64 of the name, as circom and snarkjs look inputs up
  uint64_t offset = 0;  ///< index of its first value among all input values
  uint64_t size = 0;    ///< values (1 for a scalar)
};

/// Input values ready for calculate(): input_count() elements of
/// field_bytes() bytes, little-endian, below the prime.
using input_values = std::vector<uint8_t>;

class generator {
 public:
  /// Loads the object at `path`, once per file (a file replaced since is
  /// loaded again; thread-safe). Throws zk::formats::format_error naming the
  /// file: not a shared object, not a proofline witness generator, another
  /// ABI version, or circom's assembly field code on a CPU without ADX/BMI2.
  static std::shared_ptr<const generator> open(const std::string& path);

  const std::string& path() const { return path_; }
  uint32_t field_bytes() const { return n8_; }
  /// The prime, field_bytes() bytes little-endian.
  const std::vector<uint8_t>& prime() const { return prime_; }
  /// "BN254", "BLS12-381" or "p = <decimal>".
  std::string prime_name() const;
  uint64_t witness_count() const { return witness_count_; }
  uint64_t signal_count() const { return signal_count_; }
  uint64_t input_count() const { return input_count_; }
  const std::vector<input_signal>& inputs() const { return inputs_; }
  /// Bytes one calculate() allocates (signals and components), by the
  /// object's estimate from its signal and component counts.
  uint64_t work_bytes() const { return work_bytes_; }
  /// What a pipeline reserves for one witness computation: work_bytes()
  /// plus the input file's text and parsed values (256 bytes per input value
  /// covers decimal strings and JSON nodes) and 64 KiB for the rest.
  uint64_t reservation_bytes() const {
    return work_bytes_ + input_count_ * (2ull * n8_ + 256) + (64u << 10);
  }
  bool uses_asm() const { return uses_asm_; }

  /// Reads an input.json text as `snarkjs wtns calculate` does: each key is
  /// an input signal (nested objects as "a.b"), arrays are flattened, a
  /// value is a number, a decimal string (signed), a 0x/0o/0b string or a
  /// boolean, taken modulo the prime. Throws format_error naming
  /// `input_name` and the signal: not JSON, not an object, a signal the
  /// circuit has not, a wrong number of values, a value that is not an
  /// integer, a missing signal.
  input_values parse_inputs(const std::string& input_name, std::string_view json) const;
  /// Reads the file `input_path` and parses it.
  input_values read_inputs(const std::string& input_path) const;

  /// Computes the witness into `out` (witness_count() × field_bytes()
  /// bytes), on the calling thread. Throws format_error naming `input_name`
  /// with circom's message when the circuit's computation fails.
  void calculate(const std::string& input_name, const input_values& values, void* out) const;

  /// Empty when the generator fits a key with this prime (n8 bytes,
  /// little-endian) and witness length; else what differs, naming both
  /// files ("circuit.so computes 3928 witness values, circuit.zkey expects 3929").
  std::string check_key(const void* prime, uint32_t n8, uint64_t n_vars,
                        const std::string& key_name) const;

 private:
  generator() = default;
  /// The generator in the loaded object `handle`, its symbols read and checked.
  static std::shared_ptr<const generator> read_symbols(void* handle, const std::string& path);

  using u32_fn = uint32_t (*)();
  using u64_fn = uint64_t (*)();
  using calc_fn = int (*)(const uint8_t*, uint8_t*, char*, uint64_t);

  std::string path_;
  uint32_t n8_ = 0;
  std::vector<uint8_t> prime_;
  uint64_t witness_count_ = 0;
  uint64_t signal_count_ = 0;
  uint64_t input_count_ = 0;
  uint64_t work_bytes_ = 0;
  bool uses_asm_ = false;
  std::vector<input_signal> inputs_;
  calc_fn calc_ = nullptr;
};

using generator_ptr = std::shared_ptr<const generator>;

/// The bytes of a .wtns file (version 2) holding `witness`
/// (gen.witness_count() values of gen.field_bytes() bytes).
std::string wtns_bytes(const generator& gen, const void* witness);

/// Whether this CPU has the BMI2 and ADX instructions that circom's assembly
/// field code uses.
bool cpu_has_adx_bmi2();

/// FNV-1a 64 of `s`, circom's hash of input names.
uint64_t fnv1a(std::string_view s);

}  // namespace proofline::witness
