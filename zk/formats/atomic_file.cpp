#include "zk/formats/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "base/confined.hpp"

namespace proofline::zk::formats {

namespace {

[[noreturn]] void fail(const std::string& path, int err) {
  throw std::runtime_error(path + ": " + std::strerror(err));
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view contents) {
  if (const auto* c = base::process_confinement()) return c->write_atomic(path, contents);
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw std::runtime_error(target.parent_path().string() + ": " + ec.message());
  }
  // A unique name in the same directory, so rename() is atomic.
  std::random_device rd;
  std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, errno);
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(path, err);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  int err = ::fsync(fd) == 0 ? 0 : errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    fail(path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, err);
  }
}

std::string writable_dir_problem(const std::string& dir) {
  if (const auto* c = base::process_confinement()) return c->writable_dir_problem(dir);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path d = dir.empty() ? fs::path(".") : fs::path(dir);
  fs::create_directories(d, ec);
  if (ec) return d.string() + ": cannot create the directory: " + ec.message();
  if (!fs::is_directory(d, ec)) return d.string() + ": not a directory";
  std::random_device rd;
  fs::path probe = d / (".proofline-probe-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return d.string() + ": cannot create files: " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

}  // namespace proofline::zk::formats
