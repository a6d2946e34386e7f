#include "base/paths.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace proofline::base {

namespace fs = std::filesystem;

std::string path_identity(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  if (ec) return path;
  if (p.has_relative_path() && p.filename().empty()) p = p.parent_path();  // "a/b/" -> "a/b"
  std::vector<std::string> missing;  // innermost first
  for (;;) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      std::string id = fmt::format("{}:{}", static_cast<unsigned long long>(st.st_dev),
                                   static_cast<unsigned long long>(st.st_ino));
      for (auto it = missing.rbegin(); it != missing.rend(); ++it) id += "/" + *it;
      return id;
    }
    if ((errno != ENOENT && errno != ENOTDIR) || p == p.root_path() || !p.has_parent_path())
      return fs::absolute(path, ec).lexically_normal().string();
    missing.push_back(p.filename().string());
    p = p.parent_path();
  }
}

}  // namespace proofline::base
