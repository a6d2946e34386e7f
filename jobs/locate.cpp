#include "jobs/locate.hpp"

#include <filesystem>

namespace proofline::jobs {

namespace fs = std::filesystem;

std::vector<std::string> example_dirs() {
  std::vector<std::string> dirs;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = exe.parent_path();
    dirs.push_back((dir / "examples").lexically_normal().string());
    dirs.push_back((dir / ".." / "examples").lexically_normal().string());
    dirs.push_back((dir / ".." / "share" / "proofline" / "examples").lexically_normal().string());
  }
#ifdef PROOFLINE_SOURCE_EXAMPLES
  dirs.push_back(fs::path(PROOFLINE_SOURCE_EXAMPLES).lexically_normal().string());
#endif
  return dirs;
}

std::optional<std::string> find_bundled_jobs() {
  for (const auto& d : example_dirs()) {
    std::error_code ec;
    fs::path jobs = fs::path(d) / "jobs.json";
    if (fs::is_regular_file(jobs, ec)) return jobs.string();
  }
  return std::nullopt;
}

}  // namespace proofline::jobs
