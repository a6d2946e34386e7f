#include "witness/generator.hpp"

#include <cpuid.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/confined.hpp"
#include "witness/abi.h"
#include "zk/formats/error.hpp"
#include "zk/formats/whole_file.hpp"

namespace proofline::witness {

namespace {

using zk::formats::format_error;
using json = nlohmann::ordered_json;

/// What entry.cpp embeds into an object built with circom's assembly
/// (PROOFLINE_WG_ASM=1), found without loading the object.
constexpr char asm_marker[] = "proofline-wg-field-code=asm";

bool file_contains(const std::string& path, std::string_view needle) {
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return data.find(needle) != std::string::npos;
}

/// The generator `path` opened beneath its allowed root (no link followed),
/// as a descriptor that dlopen then loads through /proc/self/fd: what is
/// loaded is the file checked, whatever happens to the name meanwhile.
/// Throws format_error naming the file.
int open_confined(const base::confinement& c, const std::string& path) {
  std::string why;
  int fd = c.open_file(path, O_RDONLY | O_NONBLOCK, why);
  if (fd < 0) throw format_error(path, "cannot open: " + why);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw format_error(path, "not a regular file");
  }
  return fd;
}

/// The generator `path` opened for reading (an unconfined process).
int open_plain(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw format_error(path, std::string("cannot open: ") + std::strerror(errno));
  return fd;
}

/// What tells one generator file from another, and from itself once replaced.
struct file_identity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator<(const file_identity& o) const {
    return std::tie(dev, ino, size, mtime_ns) < std::tie(o.dev, o.ino, o.size, o.mtime_ns);
  }
};

file_identity identity_of(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw format_error(path, "not a regular file");
  return {st.st_dev, st.st_ino, st.st_size,
          int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

/// The generators loaded so far, by file identity; taken by synthesizers'
/// threads at once, so guarded (held for an fstat's lookup, or a first load).
std::mutex& loaded_mu() {
  static std::mutex mu;
  return mu;
}

std::map<file_identity, std::shared_ptr<const generator>>& loaded_generators() {
  static std::map<file_identity, std::shared_ptr<const generator>> loaded;
  return loaded;
}

template <class F>
F symbol(void* handle, const std::string& path, const char* name) {
  void* p = dlsym(handle, name);
  if (!p)
    throw format_error(path, fmt::format("not a proofline witness generator (no {}); build one "
                                         "from circom's C++ code with `proofline witness build`",
                                         name));
  return reinterpret_cast<F>(p);
}

/// An unsigned integer of `limbs` 64-bit words (one more than the prime's),
/// reduced modulo the prime as digits arrive.
struct residue {
  std::vector<uint64_t> v;
  const std::vector<uint64_t>& p;

  explicit residue(const std::vector<uint64_t>& prime) : v(prime.size(), 0), p(prime) {}

  bool at_least_p() const {
    for (size_t i = v.size(); i-- > 0;) {
      if (v[i] != p[i]) return v[i] > p[i];
    }
    return true;
  }
  void sub_p() {
    unsigned __int128 borrow = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      unsigned __int128 d = (unsigned __int128)v[i] - p[i] - borrow;
      v[i] = static_cast<uint64_t>(d);
      borrow = (d >> 64) ? 1 : 0;
    }
  }
  /// v = (v * base + digit) mod p, with v < p before.
  void push(unsigned base, unsigned digit) {
    unsigned __int128 carry = digit;
    for (size_t i = 0; i < v.size(); ++i) {
      unsigned __int128 t = (unsigned __int128)v[i] * base + carry;
      v[i] = static_cast<uint64_t>(t);
      carry = t >> 64;
    }
    // v < p has a zero top word (one more than the prime's), so
    // v * base + digit < 16p + 16 fits: carry is 0 and a few subtractions reduce it.
    while (at_least_p()) sub_p();
  }
  void negate() {
    bool zero = true;
    for (auto w : v) zero = zero && w == 0;
    if (zero) return;
    unsigned __int128 borrow = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      unsigned __int128 d = (unsigned __int128)p[i] - v[i] - borrow;
      v[i] = static_cast<uint64_t>(d);
      borrow = (d >> 64) ? 1 : 0;
    }
  }
};

int digit_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return 99;
}

/// A string as JavaScript's BigInt() reads it (what snarkjs applies to
/// every input value): surrounding white space ignored, empty = 0, decimal
/// with an optional sign, or 0x / 0o / 0b without one. False when it is none.
bool parse_integer_text(std::string_view s, residue& r) {
  auto space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  if (s.empty()) return true;
  unsigned base = 10;
  bool negative = false;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' ||
                                      s[1] == 'b' || s[1] == 'B')) {
    base = (s[1] == 'x' || s[1] == 'X') ? 16 : (s[1] == 'o' || s[1] == 'O') ? 8 : 2;
    s.remove_prefix(2);
  } else if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    s.remove_prefix(1);
    if (s.empty()) return false;
  }
  for (char ch : s) {
    int d = digit_value(ch);
    if (d >= static_cast<int>(base)) return false;
    r.push(base, static_cast<unsigned>(d));
  }
  if (negative) r.negate();
  return true;
}

/// The JSON value as a field element; an empty string when it is one, else
/// why it is not.
std::string to_field(const json& value, residue& r) {
  switch (value.type()) {
    case json::value_t::boolean:
      r.push(10, value.get<bool>() ? 1 : 0);
      return {};
    case json::value_t::number_unsigned:
      parse_integer_text(std::to_string(value.get<uint64_t>()), r);
      return {};
    case json::value_t::number_integer:
      parse_integer_text(std::to_string(value.get<int64_t>()), r);
      return {};
    case json::value_t::number_float: {
      double d = value.get<double>();
      if (!std::isfinite(d) || std::floor(d) != d)
        return fmt::format("{} is not an integer", value.dump());
      parse_integer_text(fmt::format("{:.0f}", d), r);
      return {};
    }
    case json::value_t::string:
      if (!parse_integer_text(value.get_ref<const std::string&>(), r))
        return fmt::format("{} is not an integer (decimal, or 0x, 0o, 0b)", value.dump());
      return {};
    default:
      return fmt::format("{} is not a number", value.dump());
  }
}

void flatten(const json& v, std::vector<const json*>& out) {
  if (v.is_array())
    for (const auto& e : v) flatten(e, out);
  else
    out.push_back(&v);
}

/// circom's naming of nested inputs: {"a": {"b": 1}} is signal "a.b", an
/// array of objects "a[0].b"; anything else is the values of `prefix`.
void qualify(const std::string& prefix, const json& v,
             std::vector<std::pair<std::string, const json*>>& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      qualify(prefix.empty() ? it.key() : prefix + "." + it.key(), it.value(), out);
  } else if (v.is_array() && !v.empty() && v.front().is_object()) {
    for (size_t i = 0; i < v.size(); ++i) qualify(fmt::format("{}[{}]", prefix, i), v[i], out);
  } else {
    out.emplace_back(prefix, &v);
  }
}

std::string decimal(const std::vector<uint8_t>& le) {
  std::vector<uint8_t> n(le.rbegin(), le.rend());  // big-endian
  std::string digits;
  while (true) {
    bool zero = true;
    unsigned rem = 0;
    for (auto& b : n) {
      unsigned cur = rem * 256 + b;
      b = static_cast<uint8_t>(cur / 10);
      rem = cur % 10;
      zero = zero && b == 0;
    }
    digits.push_back(static_cast<char>('0' + rem));
    if (zero) break;
  }
  return std::string(digits.rbegin(), digits.rend());
}

}  // namespace

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001B3ull;
  }
  return h;
}

std::shared_ptr<const generator> generator::open(const std::string& path) {
  // Every generator is loaded from a descriptor (beneath the allowed root
  // when the process is confined), through its /proc/self/fd name. The
  // dynamic loader takes a name it has loaded before for the same object,
  // so a descriptor of a loaded generator is never closed: its number, and
  // so its name, is never reused for another file. Loaded objects are kept
  // by file identity: opening one again (each partition does) costs an
  // fstat, and a file replaced since (a rebuilt generator: a new inode or
  // modification time) is loaded anew under a name of its own.
  const auto* confined = base::process_confinement();
  struct fd_closer {
    int fd = -1;
    ~fd_closer() {
      if (fd >= 0) ::close(fd);
    }
  } fd{confined ? open_confined(*confined, path) : open_plain(path)};
  const file_identity id = identity_of(fd.fd, path);
  std::lock_guard<std::mutex> hold(loaded_mu());
  auto& loaded = loaded_generators();
  if (auto it = loaded.find(id); it != loaded.end()) {
    if (it->second->path_ == path) return it->second;
    auto named = std::make_shared<generator>(*it->second);  // messages name the path asked for
    named->path_ = path;
    return named;
  }
  const std::string load_path = "/proc/self/fd/" + std::to_string(fd.fd);
  if (!cpu_has_adx_bmi2() && file_contains(load_path, asm_marker))
    throw format_error(path,
                       "built with circom's assembly field code, which needs a CPU with ADX and "
                       "BMI2, and this one has not: build it from `circom --c --no_asm` output");
  dlerror();
  void* handle = dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    std::string why = e ? e : "?";
    // The loader names the descriptor; the user knows the file.
    if (auto at = why.find(load_path); at != std::string::npos) why.replace(at, load_path.size(), path);
    throw format_error(path, fmt::format("cannot load the witness generator: {}", why));
  }
  std::shared_ptr<const generator> g;
  try {
    g = read_symbols(handle, path);
  } catch (...) {
    dlclose(handle);  // not a generator: unloaded, so its name may come again
    throw;
  }
  loaded.emplace(id, g);
  fd.fd = -1;  // kept open for as long as the object is loaded (for ever)
  return g;
}

std::shared_ptr<const generator> generator::read_symbols(void* handle, const std::string& path) {
  std::shared_ptr<generator> g(new generator);
  g->path_ = path;
  auto abi = symbol<u32_fn>(handle, path, "proofline_wg_abi_version")();
  if (abi != PROOFLINE_WG_ABI_VERSION)
    throw format_error(path, fmt::format("witness generator ABI version {}, this proofline reads "
                                         "version {}: build it again with `proofline witness build`",
                                         abi, PROOFLINE_WG_ABI_VERSION));
  g->uses_asm_ = symbol<u32_fn>(handle, path, "proofline_wg_uses_asm")() != 0;
  g->n8_ = symbol<u32_fn>(handle, path, "proofline_wg_field_bytes")();
  if (g->n8_ == 0 || g->n8_ % 8 != 0 || g->n8_ > 128)
    throw format_error(path, fmt::format("unsupported field element size {} bytes", g->n8_));
  g->prime_.resize(g->n8_);
  symbol<void (*)(uint8_t*)>(handle, path, "proofline_wg_prime")(g->prime_.data());
  g->witness_count_ = symbol<u64_fn>(handle, path, "proofline_wg_witness_count")();
  g->signal_count_ = symbol<u64_fn>(handle, path, "proofline_wg_signal_count")();
  g->input_count_ = symbol<u64_fn>(handle, path, "proofline_wg_input_count")();
  g->work_bytes_ = symbol<u64_fn>(handle, path, "proofline_wg_work_bytes")();
  const uint32_t n_inputs = symbol<u32_fn>(handle, path, "proofline_wg_input_signals")();
  auto input_at =
      symbol<int (*)(uint32_t, proofline_wg_input*)>(handle, path, "proofline_wg_input_signal");
  uint64_t covered = 0;
  for (uint32_t i = 0; i < n_inputs; ++i) {
    proofline_wg_input in{};
    if (input_at(i, &in) != 0) throw format_error(path, fmt::format("input signal {} unreadable", i));
    if (in.offset + in.size > g->input_count_)
      throw format_error(path, fmt::format("input signal {} lies beyond the {} input values", i,
                                           g->input_count_));
    covered += in.size;
    g->inputs_.push_back({in.name ? in.name : "", in.hash, in.offset, in.size});
  }
  if (covered != g->input_count_)
    throw format_error(path, fmt::format("its input signals hold {} values, it takes {}", covered,
                                         g->input_count_));
  g->calc_ = symbol<calc_fn>(handle, path, "proofline_wg_calculate");
  return g;
}

std::string generator::prime_name() const {
  static const uint8_t bn254_r[32] = {
      0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9, 0x79, 0x48, 0xe8, 0x33, 0x28,
      0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45, 0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
  static const uint8_t bls_r[32] = {
      0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0x02, 0xa4, 0xbd, 0x53,
      0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8, 0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};
  if (n8_ == 32 && std::memcmp(prime_.data(), bn254_r, 32) == 0) return "BN254";
  if (n8_ == 32 && std::memcmp(prime_.data(), bls_r, 32) == 0) return "BLS12-381";
  return "p = " + decimal(prime_);
}

input_values generator::parse_inputs(const std::string& input_name, std::string_view text) const {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw format_error(input_name, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object())
    throw format_error(input_name, "not a JSON object of input signals (\"name\": value)");
  std::vector<std::pair<std::string, const json*>> named;
  qualify("", doc, named);
  std::unordered_map<uint64_t, size_t> by_hash;
  for (size_t i = 0; i < inputs_.size(); ++i) by_hash.emplace(inputs_[i].hash, i);
  std::vector<uint64_t> prime_words(n8_ / 8 + 1, 0);
  std::memcpy(prime_words.data(), prime_.data(), n8_);
  input_values out(input_count_ * n8_, 0);
  std::vector<bool> given(inputs_.size(), false);
  std::vector<const json*> values;
  for (const auto& [name, v] : named) {
    auto it = by_hash.find(fnv1a(name));
    if (it == by_hash.end())
      throw format_error(input_name,
                         fmt::format("signal \"{}\" is not an input of the circuit", name));
    const input_signal& s = inputs_[it->second];
    values.clear();
    flatten(*v, values);
    if (values.size() != s.size)
      throw format_error(input_name,
                         fmt::format("signal \"{}\": {} value{}, the circuit's input has {}", name,
                                     values.size(), values.size() == 1 ? "" : "s", s.size));
    for (size_t k = 0; k < values.size(); ++k) {
      residue r(prime_words);
      std::string problem = to_field(*values[k], r);
      if (!problem.empty())
        throw format_error(
            input_name,
            s.size == 1 && !v->is_array()
                ? fmt::format("signal \"{}\": {}, not a field element", name, problem)
                : fmt::format("signal \"{}\", value {}: {}, not a field element", name, k, problem));
      std::memcpy(out.data() + (s.offset + k) * n8_, r.v.data(), n8_);
    }
    given[it->second] = true;
  }
  std::vector<std::string> missing;
  uint64_t missing_values = 0;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!given[i]) {
      missing_values += inputs_[i].size;
      if (!inputs_[i].name.empty()) missing.push_back("\"" + inputs_[i].name + "\"");
    }
  if (missing_values > 0) {
    if (missing.size() == static_cast<size_t>(std::count(given.begin(), given.end(), false))) {
      std::string list;
      for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
      throw format_error(input_name, fmt::format("input signal{} {} not given",
                                                 missing.size() == 1 ? "" : "s", list));
    }
    throw format_error(input_name,
                       fmt::format("{} of the circuit's {} input values not given (build the "
                                   "generator with the circuit's .sym file to name the signals)",
                                   missing_values, input_count_));
  }
  return out;
}

input_values generator::read_inputs(const std::string& input_path) const {
  // read_whole_file opens it beneath its allowed root under a confinement.
  std::string text =
      zk::formats::read_whole_file(input_path, std::numeric_limits<uint64_t>::max());
  return parse_inputs(input_path, text);
}

void generator::calculate(const std::string& input_name, const input_values& values,
                          void* out) const {
  if (values.size() != input_count_ * n8_)
    throw std::invalid_argument(fmt::format("{}: {} input bytes for {} values", input_name,
                                            values.size(), input_count_));
  std::vector<char> error(4096, '\0');
  if (calc_(values.data(), static_cast<uint8_t*>(out), error.data(), error.size()) != 0)
    throw format_error(input_name, fmt::format("the circuit rejects the input ({}): {}", path_,
                                               error.data()));
}

std::string generator::check_key(const void* prime, uint32_t n8, uint64_t n_vars,
                                 const std::string& key_name) const {
  if (n8 != n8_ || std::memcmp(prime, prime_.data(), n8) != 0) {
    std::vector<uint8_t> key_prime(static_cast<const uint8_t*>(prime),
                                   static_cast<const uint8_t*>(prime) + n8);
    generator other;
    other.n8_ = n8;
    other.prime_ = key_prime;
    return fmt::format("{} computes witnesses over {}, {} is a circuit over {}", path_,
                       prime_name(), key_name, other.prime_name());
  }
  if (n_vars != witness_count_)
    return fmt::format("{} computes {} witness values, {} expects {}: they are not the same "
                       "circuit",
                       path_, witness_count_, key_name, n_vars);
  return {};
}

std::string wtns_bytes(const generator& gen, const void* witness) {
  std::string out;
  auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  const uint32_t n8 = gen.field_bytes();
  const uint64_t values = gen.witness_count() * n8;
  out.reserve(44 + n8 + values);
  out.append("wtns", 4);
  u32(2);  // version
  u32(2);  // sections
  u32(1);
  u64(8 + n8);
  u32(n8);
  out.append(reinterpret_cast<const char*>(gen.prime().data()), n8);
  u32(static_cast<uint32_t>(gen.witness_count()));
  u32(2);
  u64(values);
  out.append(static_cast<const char*>(witness), values);
  return out;
}

bool cpu_has_adx_bmi2() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 8)) && (b & (1u << 19));  // BMI2, ADX
}

}  // namespace proofline::witness
