// What glibc's heap holds, from malloc_info(3): the arenas' memory from the
// system, the free chunks inside it (memory the arenas hold but no
// allocation uses: what malloc_trim(0) walks and returns page by page) and
// the chunks mapped on their own (large blocks, unmapped whole by free()).
//
//   read_glibc_heap()       malloc_info on this process, parsed; walks every
//                           arena under its lock (milliseconds on a large,
//                           fragmented heap)
//   parse_malloc_info(xml)  the totals of malloc_info's XML (tests)
#pragma once

#include <cstdint>
#include <string_view>

namespace proofline::bench::baseline {

struct glibc_heap {
  bool ok = false;           ///< malloc_info answered and its totals were found
  unsigned arenas = 0;       ///< <heap nr=...> entries
  uint64_t arena_bytes = 0;  ///< <system type="current">: arena memory from the system
  uint64_t free_bytes = 0;   ///< <total type="fast"> + <total type="rest"> sizes
  uint64_t free_chunks = 0;  ///< their counts
  uint64_t mmap_bytes = 0;   ///< <total type="mmap">: blocks mapped on their own
  uint64_t mmap_chunks = 0;
  double read_ms = 0;        ///< time malloc_info took

  /// free_bytes / arena_bytes (0 without arena memory): the share of the
  /// arenas' memory that no allocation uses.
  double fragmentation() const {
    return arena_bytes ? static_cast<double>(free_bytes) / static_cast<double>(arena_bytes) : 0.0;
  }
};

/// The totals of malloc_info's XML (the entries after the last </heap>).
glibc_heap parse_malloc_info(std::string_view xml);

/// malloc_info(0, ...) of this process, parsed, with its duration.
glibc_heap read_glibc_heap();

}  // namespace proofline::bench::baseline
