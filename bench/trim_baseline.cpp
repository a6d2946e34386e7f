// proofline-trim-baseline: the glibc side of `proofline bench memory`.
//
// Built WITHOUT jemalloc (bench/CMakeLists.txt), so malloc is glibc's and
// malloc_trim(0) does real work. It builds the same heap shape the bench
// builds in a jemalloc arena: `bytes` in `chunk`-byte blocks, allocated and
// touched on a worker thread (a non-main glibc arena, as a synthesizer
// thread's would be), then freed from the main thread except every
// `keep_every`-th block (0 keeps none; 16 leaves a fragmented heap), and
// times malloc_trim(0), which walks every arena.
//
//   proofline-trim-baseline --bytes 256M --chunk 64K --keep-every 0
//
// Prints one JSON object on stdout: the shape, alloc/free/trim times in ms,
// RSS after alloc, after free and after the trim in bytes, and whether
// jemalloc is linked (it must not be). Exit 0, or 2 on bad arguments.
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace {

uint64_t rss_bytes() {
  long pages_total = 0, pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
  std::fclose(f);
  return static_cast<uint64_t>(pages_resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

template <class F>
double time_ms(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// "256M", "64K", "4096": binary units, as proofline's --bytes.
bool parse_size(const char* text, uint64_t& out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text) return false;
  uint64_t unit = 1;
  switch (*end) {
    case '\0':
      break;
    case 'K': case 'k': unit = uint64_t(1) << 10; ++end; break;
    case 'M': case 'm': unit = uint64_t(1) << 20; ++end; break;
    case 'G': case 'g': unit = uint64_t(1) << 30; ++end; break;
    default:
      return false;
  }
  if (*end == 'i') ++end;
  if (*end == 'B') ++end;
  if (*end != '\0' || v == 0) return false;
  out = v * unit;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t bytes = uint64_t(256) << 20, chunk = uint64_t(64) << 10, keep_every = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) {
      fmt::print(stderr, "proofline-trim-baseline: {} needs a value\n", arg);
      return 2;
    }
    const char* value = argv[++i];
    bool ok = arg == "--bytes"        ? parse_size(value, bytes)
              : arg == "--chunk"      ? parse_size(value, chunk)
              : arg == "--keep-every" ? (keep_every = std::strtoull(value, nullptr, 10), true)
                                      : false;
    if (!ok) {
      fmt::print(stderr,
                 "usage: proofline-trim-baseline [--bytes SIZE] [--chunk SIZE] [--keep-every N]\n");
      return 2;
    }
  }
  const std::size_t n = static_cast<std::size_t>(bytes / chunk);
  std::vector<void*> blocks(n, nullptr);
  void* sentinel = nullptr;
  double alloc_ms = 0;
  std::thread([&] {
    alloc_ms = time_ms([&] {
      for (auto& p : blocks) {
        p = std::malloc(chunk);
        std::memset(p, 1, chunk);
      }
    });
    sentinel = std::malloc(64);  // keeps the arena's top from shrinking inside free()
  }).join();
  uint64_t rss_allocated = rss_bytes();
  double free_ms = time_ms([&] {
    for (std::size_t i = 0; i < n; ++i)
      if (!keep_every || i % keep_every) {
        std::free(blocks[i]);
        blocks[i] = nullptr;
      }
  });
  uint64_t rss_freed = rss_bytes();
  int trimmed = 0;
  double trim_ms = time_ms([&] { trimmed = malloc_trim(0); });
  uint64_t rss_trimmed = rss_bytes();
  bool jemalloc = dlsym(RTLD_DEFAULT, "mallctl") != nullptr;
  fmt::print(
      "{{\"allocator\": \"glibc\", \"release\": \"malloc_trim(0)\", \"jemalloc_linked\": {}, "
      "\"bytes\": {}, \"chunk\": {}, "
      "\"keep_every\": {}, \"alloc_ms\": {:.3f}, \"free_ms\": {:.3f}, \"trim_ms\": {:.3f}, "
      "\"trim_returned\": {}, \"rss_allocated\": {}, \"rss_freed\": {}, \"rss_trimmed\": {}}}\n",
      jemalloc, bytes, chunk, keep_every, alloc_ms, free_ms, trim_ms, trimmed, rss_allocated,
      rss_freed, rss_trimmed);
  for (auto p : blocks) std::free(p);
  std::free(sentinel);
  return 0;
}
