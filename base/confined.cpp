#include "base/confined.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

namespace proofline::base {

namespace {

namespace fs = std::filesystem;

#ifndef RESOLVE_BENEATH
struct open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
constexpr uint64_t RESOLVE_NO_MAGICLINKS = 0x02;
constexpr uint64_t RESOLVE_NO_SYMLINKS = 0x04;
constexpr uint64_t RESOLVE_BENEATH = 0x08;
#endif
#ifndef SYS_openat2
constexpr long SYS_openat2 = 437;  // the same number on every architecture
#endif

/// Flags of a directory held only to resolve names beneath it.
constexpr int dir_flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string joined(const std::vector<std::string>& parts, size_t n) {
  std::string s;
  for (size_t i = 0; i < n && i < parts.size(); ++i) s += (i ? "/" : "") + parts[i];
  return s.empty() ? "." : s;
}

/// Closes a descriptor at the end of a scope unless released.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

std::atomic<const confinement*> current{nullptr};
std::unique_ptr<const confinement>& owned() {
  static std::unique_ptr<const confinement> c;
  return c;
}

}  // namespace

confinement::confinement(const std::vector<std::string>& roots, resolve_mode mode)
    : openat2_(mode == resolve_mode::automatic) {
  for (const auto& path : roots) {
    int fd = ::open(path.c_str(), dir_flags);
    if (fd < 0) {
      int err = errno;
      for (auto& r : roots_) ::close(r.fd);
      throw std::runtime_error(path + ": cannot open the directory: " + std::strerror(err));
    }
    roots_.push_back({fs::path(path).lexically_normal().string(), fd});
  }
}

confinement::~confinement() {
  for (auto& r : roots_) ::close(r.fd);
}

std::vector<std::string> confinement::roots() const {
  std::vector<std::string> out;
  for (const auto& r : roots_) out.push_back(r.path);
  return out;
}

const confinement::root* confinement::locate(const std::string& path,
                                             std::vector<std::string>& parts,
                                             std::string& why) const {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  if (ec || path.empty()) {
    why = "not a usable path";
    return nullptr;
  }
  const root* best = nullptr;
  size_t best_len = 0;
  for (const auto& r : roots_) {
    fs::path rp(r.path);
    size_t len = 0;
    auto ri = rp.begin(), pi = p.begin();
    for (; ri != rp.end() && pi != p.end(); ++ri, ++pi, ++len) {
      if (ri->empty()) continue;  // a root's trailing separator
      if (*ri != *pi) break;
    }
    bool under = ri == rp.end() || (std::next(ri) == rp.end() && ri->empty());
    if (under && (!best || len > best_len)) {
      best = &r;
      best_len = len;
      parts.clear();
      for (; pi != p.end(); ++pi)
        if (!pi->empty() && *pi != ".") parts.push_back(pi->string());
    }
  }
  if (!best) {
    std::string list;
    for (const auto& r : roots_) list += (list.empty() ? "" : ", ") + r.path;
    why = "outside the allowed roots (" + (list.empty() ? std::string("none") : list) + ")";
    return nullptr;
  }
  for (const auto& part : parts)
    if (part == "..") {  // only left where the text climbs above "/"
      why = "climbs out of its allowed root with ..";
      return nullptr;
    }
  return best;
}

int confinement::beneath(const root& r, const std::vector<std::string>& parts, int flags) const {
  if (!uses_openat2()) {
    errno = ENOSYS;
    return -1;
  }
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string rel = joined(parts, parts.size());
  long fd;
  do {
    fd = ::syscall(SYS_openat2, r.fd, rel.c_str(), &how, sizeof how);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG)) {
    // No openat2 here (an old kernel, or a seccomp filter that refuses it).
    openat2_.store(false, std::memory_order_relaxed);
    errno = ENOSYS;
  }
  return static_cast<int>(fd);
}

std::string confinement::problem(const root& r, const std::vector<std::string>& parts,
                                 int err) const {
  if (err == ELOOP || err == ENOTDIR || err == EXDEV) {
    // Name the first component that is a symbolic link, examined in order
    // so that no link is followed to find it.
    for (size_t n = 1; n <= parts.size(); ++n) {
      struct stat st {};
      if (::fstatat(r.fd, joined(parts, n).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) break;
      if (S_ISLNK(st.st_mode))
        return "refused: " + joined(parts, n) + " beneath " + r.path +
               " is a symbolic link (beneath an allowed root, files are opened without "
               "following links; name the file it points to if that lies under a root)";
      if (n < parts.size() && !S_ISDIR(st.st_mode))
        return joined(parts, n) + " beneath " + r.path + " is not a directory";
    }
  }
  return std::strerror(err);
}

int confinement::walk_dirs(const root& r, const std::vector<std::string>& parts, size_t n,
                           bool create, std::string& why) const {
  fd_guard dir{::dup(r.fd)};
  if (dir.fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (create && ::mkdirat(dir.fd, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
      int err = errno;
      why = "cannot create " + joined(parts, i + 1) + " beneath " + r.path + ": " +
            std::strerror(err);
      return -1;
    }
    int next = ::openat(dir.fd, parts[i].c_str(), dir_flags);
    if (next < 0) {
      why = problem(r, parts, errno);
      return -1;
    }
    ::close(dir.fd);
    dir.fd = next;
  }
  return dir.release();
}

int confinement::open_file(const std::string& path, int flags, std::string& why) const {
  std::vector<std::string> parts;
  const root* r = locate(path, parts, why);
  if (!r) return -1;
  flags |= O_CLOEXEC | O_NOFOLLOW;
  int fd = beneath(*r, parts, flags);
  if (fd >= 0) return fd;
  if (errno != ENOSYS) {
    why = problem(*r, parts, errno);
    return -1;
  }
  if (parts.empty()) {
    why = "is an allowed root, not a file";
    return -1;
  }
  fd_guard dir{walk_dirs(*r, parts, parts.size() - 1, false, why)};
  if (dir.fd < 0) return -1;
  fd = ::openat(dir.fd, parts.back().c_str(), flags);
  if (fd < 0) why = problem(*r, parts, errno);
  return fd;
}

int confinement::open_dir(const std::string& path, bool create, std::string& why) const {
  std::vector<std::string> parts;
  const root* r = locate(path, parts, why);
  if (!r) return -1;
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = beneath(*r, parts, flags);
  if (fd >= 0) return fd;
  if (errno != ENOSYS && !(create && errno == ENOENT)) {
    why = problem(*r, parts, errno);
    return -1;
  }
  fd_guard walked{walk_dirs(*r, parts, parts.size(), create, why)};
  if (walked.fd < 0) return -1;
  // From the O_PATH descriptor of the walk to one that can be read.
  fd = ::openat(walked.fd, ".", flags);
  if (fd < 0) why = std::strerror(errno);
  return fd;
}

void confinement::write_atomic(const std::string& path, std::string_view contents) const {
  auto fail = [&](const std::string& problem) { throw std::runtime_error(path + ": " + problem); };
  fs::path target = fs::path(path).lexically_normal();
  const std::string leaf = target.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..") fail("not a file name");
  std::string why;
  fd_guard dir{open_dir(target.parent_path().string(), true, why)};
  if (dir.fd < 0) fail(why);
  std::random_device rd;
  const std::string tmp =
      leaf + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  fd_guard file{::openat(dir.fd, tmp.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (file.fd < 0) fail(std::strerror(errno));
  auto drop = [&](int err) {
    ::unlinkat(dir.fd, tmp.c_str(), 0);
    fail(std::strerror(err));
  };
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(file.fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      drop(errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  int err = ::fsync(file.fd) == 0 ? 0 : errno;
  if (::close(file.release()) != 0 && err == 0) err = errno;
  if (err != 0) drop(err);
  // renameat replaces the name `leaf` whatever it is (a symbolic link or a
  // hard link included), never what it points to.
  if (::renameat(dir.fd, tmp.c_str(), dir.fd, leaf.c_str()) != 0) drop(errno);
}

std::string confinement::writable_dir_problem(const std::string& dir) const {
  std::string why;
  fd_guard d{open_dir(dir.empty() ? std::string(".") : dir, true, why)};
  if (d.fd < 0) return dir + ": " + why;
  std::random_device rd;
  const std::string probe =
      ".proofline-probe-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = ::openat(d.fd, probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0644);
  if (fd < 0) return dir + ": cannot create files: " + std::strerror(errno);
  ::close(fd);
  ::unlinkat(d.fd, probe.c_str(), 0);
  return {};
}

const confinement* process_confinement() { return current.load(std::memory_order_acquire); }

void set_process_confinement(std::unique_ptr<const confinement> c) {
  current.store(c.get(), std::memory_order_release);
  owned() = std::move(c);
}

}  // namespace proofline::base
