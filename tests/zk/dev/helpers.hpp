// Shared by the development-setup tests: scratch directories, running
// snarkjs, reading files and locating a .zkey section to tamper with.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "zk/dev/setup.hpp"

namespace proofline::test {

namespace fs = std::filesystem;

/// A fresh directory under the system's temp folder, removed at scope exit.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "proofline-setup-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

/// Exit status and combined output of a shell command.
struct command_result {
  int status;
  std::string output;
};

inline command_result shell(const std::string& cmd, const std::string& log_path) {
  const int raw = std::system((cmd + " > '" + log_path + "' 2>&1").c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(log_path)};
}

/// `snarkjs <args>` with its output in `log`.
inline command_result snarkjs(const std::string& args, const std::string& log) {
  return shell(std::string("'") + PROOFLINE_SNARKJS + "' " + args, log);
}

/// True when snarkjs exited 0 and said OK (what verify-proofs.sh requires too).
inline bool snarkjs_ok(const command_result& r) {
  return r.status == 0 && r.output.find("OK") != std::string::npos;
}

/// Offset and size of the first section `id` of a binfileutils file's bytes.
inline std::pair<uint64_t, uint64_t> find_section(const std::string& bytes, uint32_t id) {
  uint32_t count;
  std::memcpy(&count, bytes.data() + 8, 4);
  uint64_t pos = 12;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t sid;
    uint64_t size;
    std::memcpy(&sid, bytes.data() + pos, 4);
    std::memcpy(&size, bytes.data() + pos + 4, 8);
    pos += 12;
    if (sid == id) return {pos, size};
    pos += size;
  }
  throw std::runtime_error("no section " + std::to_string(id));
}

/// A small setup in `dir` (N constraints, K witnesses, P public, seed).
inline zk::dev::setup_result small_setup(const std::string& dir, zk::curve_id curve, uint32_t n,
                                         uint32_t k, uint32_t p, uint64_t seed) {
  zk::dev::setup_options o;
  o.curve = curve;
  o.constraints = n;
  o.witnesses = k;
  o.n_public = p;
  o.seed = seed;
  o.threads = 2;
  o.out_dir = dir;
  return zk::dev::run_setup(o);
}

}  // namespace proofline::test
