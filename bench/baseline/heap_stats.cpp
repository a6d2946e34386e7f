#include "bench/baseline/heap_stats.hpp"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace proofline::bench::baseline {

namespace {

/// The number in attribute `name="..."` of the element starting at `at`.
uint64_t attribute(std::string_view xml, std::size_t at, std::string_view name) {
  const std::size_t end = xml.find('>', at);
  const std::string key = std::string(name) + "=\"";
  const std::size_t k = xml.find(key, at);
  if (k == std::string_view::npos || k > end) return 0;
  return std::strtoull(std::string(xml.substr(k + key.size(), 24)).c_str(), nullptr, 10);
}

/// `size` and `count` of the element that starts with `tag` after `from`.
bool element(std::string_view xml, std::size_t from, std::string_view tag, uint64_t& size,
             uint64_t* count = nullptr) {
  const std::size_t at = xml.find(tag, from);
  if (at == std::string_view::npos) return false;
  size = attribute(xml, at, "size");
  if (count) *count = attribute(xml, at, "count");
  return true;
}

}  // namespace

glibc_heap parse_malloc_info(std::string_view xml) {
  glibc_heap h;
  for (std::size_t at = xml.find("<heap nr="); at != std::string_view::npos;
       at = xml.find("<heap nr=", at + 1))
    ++h.arenas;
  const std::size_t last = xml.rfind("</heap>");
  const std::size_t from = last == std::string_view::npos ? 0 : last;
  uint64_t fast = 0, fast_n = 0, rest = 0, rest_n = 0;
  h.ok = element(xml, from, "<total type=\"fast\"", fast, &fast_n) &&
         element(xml, from, "<total type=\"rest\"", rest, &rest_n) &&
         element(xml, from, "<total type=\"mmap\"", h.mmap_bytes, &h.mmap_chunks) &&
         element(xml, from, "<system type=\"current\"", h.arena_bytes);
  h.free_bytes = fast + rest;
  h.free_chunks = fast_n + rest_n;
  return h;
}

glibc_heap read_glibc_heap() {
  const auto t0 = std::chrono::steady_clock::now();
  char* buf = nullptr;
  std::size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) return {};
  const int rc = malloc_info(0, f);
  std::fclose(f);
  glibc_heap h;
  if (rc == 0 && buf) h = parse_malloc_info(std::string_view(buf, len));
  std::free(buf);
  h.read_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return h;
}

}  // namespace proofline::bench::baseline
