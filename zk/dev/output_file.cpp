#include "zk/dev/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

namespace proofline::zk::dev {

namespace {

/// Write buffer: large enough that small writes (headers, coefficient
/// entries) cost a memcpy each and the kernel sees few, large writes.
constexpr std::size_t buffer_bytes = std::size_t(8) << 20;
/// Linux moves at most 0x7ffff000 bytes per write(); stay below it.
constexpr std::size_t max_write_bytes = std::size_t(1) << 30;

}  // namespace

output_file::output_file(std::string path) : path_(std::move(path)) {
  std::random_device rd;
  tmp_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(errno);
  buf_.resize(buffer_bytes);
}

output_file::~output_file() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void output_file::fail(int err) const {
  throw std::runtime_error(path_ + ": " + std::strerror(err));
}

void output_file::flush() {
  const unsigned char* p = buf_.data();
  std::size_t left = used_;
  while (left > 0) {
    ssize_t n = ::write(fd_, p, std::min(left, max_write_bytes));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  used_ = 0;
}

void output_file::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  written_ += n;
  if (used_ + n <= buf_.size()) {
    std::memcpy(buf_.data() + used_, p, n);
    used_ += n;
    return;
  }
  flush();
  if (n < buf_.size()) {
    std::memcpy(buf_.data(), p, n);
    used_ = n;
    return;
  }
  // A large block goes straight to the kernel.
  while (n > 0) {
    ssize_t k = ::write(fd_, p, std::min(n, max_write_bytes));
    if (k < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void output_file::begin_container(const char magic[4], uint32_t version, uint32_t sections) {
  write(magic, 4);
  u32(version);
  u32(sections);
}

void output_file::begin_section(uint32_t id, uint64_t size) {
  if (in_section_)
    throw std::logic_error(path_ + ": section " + std::to_string(id) + " begun inside section " +
                           std::to_string(section_id_));
  u32(id);
  u64(size);
  in_section_ = true;
  section_id_ = id;
  section_end_ = written_ + size;
}

void output_file::end_section() {
  if (!in_section_ || written_ != section_end_)
    throw std::logic_error(path_ + ": section " + std::to_string(section_id_) + " ends at byte " +
                           std::to_string(written_) + ", declared to end at " +
                           std::to_string(section_end_));
  in_section_ = false;
}

void output_file::commit() {
  if (in_section_)
    throw std::logic_error(path_ + ": committed inside section " + std::to_string(section_id_));
  flush();
  if (::fsync(fd_) != 0) fail(errno);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail(errno);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail(errno);
  committed_ = true;
}

}  // namespace proofline::zk::dev
