#include "zk/formats/whole_file.hpp"

#include "zk/formats/binfile.hpp"
#include "zk/formats/error.hpp"

namespace proofline::zk::formats {

std::string read_whole_file(const std::string& path, uint64_t max_bytes) {
  detail::input_file f(path);
  if (f.size() > max_bytes)
    f.fail(std::to_string(f.size()) + " bytes, more than the " + std::to_string(max_bytes) +
           " this file may hold");
  std::string bytes(static_cast<std::size_t>(f.size()), '\0');
  f.read(0, bytes.data(), bytes.size());
  return bytes;
}

}  // namespace proofline::zk::formats
