// Large output files written atomically and in big pieces: bytes go to a
// temporary file beside the target (so rename() is atomic), through an
// 8 MiB buffer (large writes bypass it), and commit() flushes, fsyncs and
// renames. A file never committed is removed, so a failed or interrupted
// setup leaves either the old file or none, never half of a new one.
//
// Also the binfileutils container that snarkjs uses for .zkey and .wtns:
// magic, u32 version, u32 section count, then sections {u32 id, u64 size,
// bytes}. Section sizes are declared up front and checked at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proofline::zk::dev {

class output_file {
 public:
  /// Creates `<path>.tmp-<pid>-<random>` for writing. Throws
  /// std::runtime_error("<path>: <reason>").
  explicit output_file(std::string path);
  /// Removes the temporary file unless commit() succeeded.
  ~output_file();
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  /// Appends n bytes. Throws std::runtime_error naming the target on an I/O error.
  void write(const void* data, std::size_t n);
  void u32(uint32_t v) { write(&v, 4); }
  void u64(uint64_t v) { write(&v, 8); }

  /// Starts a binfileutils file: magic (4 bytes), version, section count.
  void begin_container(const char magic[4], uint32_t version, uint32_t sections);
  /// Starts section `id` of exactly `size` bytes (checked by end_section).
  void begin_section(uint32_t id, uint64_t size);
  /// Throws std::logic_error when the section's bytes differ from its size.
  void end_section();

  /// Flushes, fsyncs, closes and renames the file onto its target.
  void commit();

  const std::string& path() const { return path_; }
  /// Bytes written so far.
  uint64_t size() const { return written_; }

 private:
  void flush();
  [[noreturn]] void fail(int err) const;

  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  std::vector<unsigned char> buf_;
  std::size_t used_ = 0;
  uint64_t written_ = 0;
  uint64_t section_end_ = 0;
  bool in_section_ = false;
  uint32_t section_id_ = 0;
};

}  // namespace proofline::zk::dev
