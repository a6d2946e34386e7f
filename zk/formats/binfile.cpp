#include "zk/formats/binfile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/confined.hpp"

namespace proofline::zk::formats::detail {

namespace {

/// Linux transfers at most 0x7ffff000 bytes per read call; stay below it.
constexpr uint64_t max_read_bytes = uint64_t(1) << 30;

/// magic (4) + version (u32) + section count (u32).
constexpr uint64_t file_header_bytes = 12;
/// id (u32) + size (u64).
constexpr uint64_t section_header_bytes = 12;

}  // namespace

input_file::input_file(std::string path) : path_(std::move(path)) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the file is
  // refused below unless it is regular, where O_NONBLOCK changes nothing.
  // Under a confinement (serve), the file is opened beneath its allowed root
  // without following symbolic links, checked now rather than when the job
  // naming it was accepted.
  if (const auto* c = base::process_confinement()) {
    std::string why;
    fd_ = c->open_file(path_, O_RDONLY | O_NONBLOCK, why);
    if (fd_ < 0) fail("cannot open: " + why);
  } else {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    fail(std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail(S_ISFIFO(st.st_mode)   ? "not a regular file (a FIFO)"
         : S_ISDIR(st.st_mode)  ? "not a regular file (a directory)"
         : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "not a regular file (a device)"
                                : "not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

input_file::input_file(const memory_file& bytes)
    : path_(bytes.name), bytes_(static_cast<const unsigned char*>(bytes.data)), size_(bytes.size) {
  if (!bytes_ && size_ > 0) fail("no bytes (a null buffer of " + std::to_string(size_) + " bytes)");
}

input_file::~input_file() {
  if (fd_ >= 0) ::close(fd_);
}

void input_file::fail(const std::string& problem) const { throw format_error(path_, problem); }

void input_file::read(uint64_t offset, void* dst, uint64_t n) const {
  auto* out = static_cast<unsigned char*>(dst);
  if (fd_ < 0) {
    if (offset > size_ || n > size_ - offset)
      fail("truncated: " + std::to_string(size_) + " bytes, while " + std::to_string(n) +
           " bytes at offset " + std::to_string(offset) + " were expected");
    if (n > 0) std::memcpy(out, bytes_ + offset, n);
    return;
  }
  while (n > 0) {
    ssize_t got = ::pread(fd_, out, std::min(n, max_read_bytes), static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(std::string("read error at offset ") + std::to_string(offset) + ": " +
           std::strerror(errno));
    }
    if (got == 0)
      fail("truncated: the file ends at offset " + std::to_string(offset) + " while " +
           std::to_string(n) + " more bytes were expected (the file shrank while being read?)");
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<uint64_t>(got);
  }
}

uint32_t input_file::read_u32(uint64_t offset) const {
  uint32_t v;
  read(offset, &v, sizeof v);
  return v;
}

const section& container::unique(const input_file& f, uint32_t id, const char* name) const {
  auto it = sections.find(id);
  if (it == sections.end()) f.fail("missing section " + std::to_string(id) + " (" + name + ")");
  if (it->second.size() != 1)
    f.fail("section " + std::to_string(id) + " (" + name + ") appears " +
           std::to_string(it->second.size()) + " times");
  return it->second.front();
}

container read_container(const input_file& f, const char* magic, const char* kind,
                         section_namer name) {
  const uint64_t file_size = f.size();
  if (file_size < file_header_bytes) {
    if (file_size >= 4) {
      char m[4];
      f.read(0, m, 4);
      if (std::memcmp(m, magic, 4) != 0)
        f.fail(std::string("not a ") + kind + " file (magic '" + printable(m, 4) + "')");
    }
    f.fail("truncated: " + std::to_string(file_size) + " bytes, shorter than the " +
           std::to_string(file_header_bytes) + "-byte file header");
  }
  unsigned char head[file_header_bytes];
  f.read(0, head, sizeof head);
  if (std::memcmp(head, magic, 4) != 0)
    f.fail(std::string("not a ") + kind + " file (magic '" + printable(head, 4) + "')");

  container c;
  uint32_t n_sections;
  std::memcpy(&c.version, head + 4, 4);
  std::memcpy(&n_sections, head + 8, 4);

  uint64_t pos = file_header_bytes;
  for (uint32_t i = 0; i < n_sections; ++i) {
    if (file_size - pos < section_header_bytes)
      f.fail("truncated: the header of section " + std::to_string(i + 1) + " of " +
             std::to_string(n_sections) + " at offset " + std::to_string(pos) +
             " runs past the end of the file (file size " + std::to_string(file_size) + ")");
    unsigned char sh[section_header_bytes];
    f.read(pos, sh, sizeof sh);
    uint32_t id;
    uint64_t size;
    std::memcpy(&id, sh, 4);
    std::memcpy(&size, sh + 4, 8);
    pos += section_header_bytes;
    if (size > file_size - pos) {
      const char* known = name ? name(id) : nullptr;
      f.fail("truncated: section " + std::to_string(id) +
             (known ? std::string(" (") + known + ")" : "") +
             " runs past the end of the file (offset " + std::to_string(pos) + ", " +
             std::to_string(size) + " bytes, file size " + std::to_string(file_size) + ")");
    }
    c.sections[id].push_back(section{pos, size});
    pos += size;
  }
  return c;
}

std::string printable(const void* bytes, std::size_t n) {
  static const char hex[] = "0123456789abcdef";
  std::string s;
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\'' && p[i] != '\\') {
      s += static_cast<char>(p[i]);
    } else {
      s += "\\x";
      s += hex[p[i] >> 4];
      s += hex[p[i] & 15];
    }
  }
  return s;
}

}  // namespace proofline::zk::formats::detail
