#include "zk/formats/whole_file.hpp"

#include "zk/formats/binfile.hpp"
#include "zk/formats/error.hpp"

namespace proofline::zk::formats {

namespace {

template <class Bytes>
Bytes read_into(const std::string& path, uint64_t max_bytes) {
  detail::input_file f(path);
  if (f.size() > max_bytes)
    f.fail(std::to_string(f.size()) + " bytes, more than the " + std::to_string(max_bytes) +
           " this file may hold");
  Bytes bytes(static_cast<std::size_t>(f.size()), 0);
  f.read(0, bytes.data(), bytes.size());
  return bytes;
}

}  // namespace

std::string read_whole_file(const std::string& path, uint64_t max_bytes) {
  return read_into<std::string>(path, max_bytes);
}

std::vector<uint8_t> read_whole_file_bytes(const std::string& path, uint64_t max_bytes) {
  return read_into<std::vector<uint8_t>>(path, max_bytes);
}

}  // namespace proofline::zk::formats
