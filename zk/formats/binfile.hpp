// The container format snarkjs uses for .zkey, .wtns, .r1cs and .ptau files
// (binfileutils): 4-byte magic, u32 version, u32 section count, then sections
// {u32 id, u64 size, size bytes} in any order, all integers little-endian.
//
// Internal to zk/formats: zkey.cpp and wtns.cpp read their files through it.
//
//   input_file  RAII file descriptor with positioned reads (pread), large
//               reads split as the kernel requires; errors name the file.
//               Or bytes in memory (memory_file), read by copying.
//   container   the section table, indexed by id, every section checked to
//               end inside the file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zk/formats/error.hpp"

namespace proofline::zk::formats::detail {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "snarkjs files are little-endian and are read into memory as is");

/// A read-only file opened by path. Thread-safe reads (pread has no shared
/// file position), so several threads may fill disjoint parts of a buffer.
class input_file {
 public:
  /// Opens `path`; throws format_error(path, "cannot open: <reason>").
  explicit input_file(std::string path);
  /// Reads `bytes` in place (nothing is copied until read()); named
  /// bytes.name in errors. A null pointer with a size is refused.
  explicit input_file(const memory_file& bytes);
  ~input_file();
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }

  /// Reads exactly n bytes at offset into dst (any n: loops over the kernel's
  /// 2 GiB per-call limit). Throws format_error on an I/O error or when the
  /// file ends early.
  void read(uint64_t offset, void* dst, uint64_t n) const;
  /// Little-endian u32 / u64 at offset.
  uint32_t read_u32(uint64_t offset) const;

  /// Throws format_error(path(), problem).
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  std::string path_;
  int fd_ = -1;
  const unsigned char* bytes_ = nullptr;  ///< memory_file contents; fd_ is then -1
  uint64_t size_ = 0;
};

/// Where one section's bytes lie in the file.
struct section {
  uint64_t offset = 0;  ///< first byte of the section's contents
  uint64_t size = 0;    ///< bytes of contents
};

/// The header and section table of a binfileutils container.
struct container {
  uint32_t version = 0;
  std::map<uint32_t, std::vector<section>> sections;  ///< by id, in file order

  /// The one section with this id. Throws format_error naming the file when it
  /// is missing ("missing section 4 (coefficients)") or appears twice.
  const section& unique(const input_file& f, uint32_t id, const char* name) const;
};

/// Names a section id for messages ("H points"); nullptr for ids it does not know.
using section_namer = const char* (*)(uint32_t id);

/// Reads the magic, version and section table (a 12-byte read per section,
/// the contents are not touched). `magic` is the 4 expected bytes, `kind` the
/// file kind for messages ("zkey"). Throws format_error on a wrong magic or a
/// table or section running past the end of the file.
container read_container(const input_file& f, const char* magic, const char* kind,
                         section_namer name);

/// Bytes as text for a message: printable ASCII as is, others as \xNN.
std::string printable(const void* bytes, std::size_t n);

}  // namespace proofline::zk::formats::detail
