// What the library's tests share: fixture bytes, a scratch directory, and
// snarkjs as the oracle for every proof they check.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace proofline::test {

inline std::string fixture(const std::string& rel) {
  return std::string(PROOFLINE_FIXTURES_DIR) + "/" + rel;
}

inline std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error(path + ": cannot write");
}

/// A fresh directory under the system's temporary directory.
inline std::string scratch_dir(const std::string& name) {
  std::string tmpl = "/tmp/proofline-" + name + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch directory");
  return tmpl;
}

/// Proofs (proof.json and public.json text) collected for snarkjs, which
/// verifies them all in one process (scripts/verify-many.js) at the end.
class snarkjs_batch {
 public:
  snarkjs_batch(std::string vk, std::string dir) : vk_(std::move(vk)), dir_(std::move(dir)) {}
  void add(const std::string& proof, const std::string& pub) {
    const std::string tag = std::to_string(files_.size() / 2);
    files_.push_back(dir_ + "/proof_" + tag + ".json");
    files_.push_back(dir_ + "/public_" + tag + ".json");
    write_text(files_[files_.size() - 2], proof);
    write_text(files_.back(), pub);
  }
  std::size_t size() const { return files_.size() / 2; }
  /// How many snarkjs accepted; the failures' lines go to `report`.
  std::size_t verified(std::string* report = nullptr) const {
    std::string cmd = "node " + std::string(PROOFLINE_SOURCE_DIR) + "/scripts/verify-many.js " + vk_;
    for (const auto& f : files_) cmd += " " + f;
    cmd += " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return 0;
    std::size_t ok = 0;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) {
      if (std::string(buf).rfind("OK ", 0) == 0) ++ok;
      else if (report) *report += buf;
    }
    pclose(p);
    return ok;
  }

 private:
  std::string vk_, dir_;
  std::vector<std::string> files_;
};

}  // namespace proofline::test
