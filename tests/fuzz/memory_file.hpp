// A file the fuzz targets hand to parsers that take a path (zkey, wtns): an
// anonymous in-memory file (memfd), rewritten for every input and opened by
// its /proc/self/fd path, so the parsers run their real open/stat/pread code
// and nothing touches the disk.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace proofline::fuzz {

class memory_file {
 public:
  explicit memory_file(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;

  /// Replaces the contents with `size` bytes at `data`; returns the path.
  const std::string& hold(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace proofline::fuzz
