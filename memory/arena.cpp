#include "memory/arena.hpp"

#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>

// jemalloc's non-standard API, declared weak: these resolve to jemalloc when
// it is linked into the program and to null otherwise, so this library links
// with or without it. jemalloc's header is not included, to keep its strong
// declarations (and its malloc replacements) out of this translation unit.
extern "C" {
__attribute__((weak)) int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp,
                                  std::size_t newlen);
__attribute__((weak)) void* mallocx(std::size_t size, int flags);
__attribute__((weak)) void dallocx(void* ptr, int flags);
}

namespace proofline::memory {

namespace {

// jemalloc 5.3's flag encodings (jemalloc/jemalloc.h):
//   MALLOCX_LG_ALIGN(la)  = la                (low 6 bits)
//   MALLOCX_TCACHE(tc)    = (tc + 2) << 8     so TCACHE_NONE (tc = -1) = 1 << 8
//   MALLOCX_ARENA(a)      = (a + 1) << 20
constexpr int tcache_none = 1 << 8;
constexpr int arena_shift = 20;
constexpr unsigned max_arena_index = (1u << (31 - arena_shift)) - 2;  // keeps the flags positive

bool linked() { return mallctl != nullptr && mallocx != nullptr && dallocx != nullptr; }

template <class T>
bool ctl_read(const std::string& name, T& out) {
  if (!linked()) return false;
  std::size_t len = sizeof(T);
  return mallctl(name.c_str(), &out, &len, nullptr, 0) == 0 && len == sizeof(T);
}

template <class T>
bool ctl_write(const std::string& name, T value) {
  if (!linked()) return false;
  return mallctl(name.c_str(), nullptr, nullptr, &value, sizeof(T)) == 0;
}

bool ctl_run(const std::string& name) {
  if (!linked()) return false;
  return mallctl(name.c_str(), nullptr, nullptr, nullptr, 0) == 0;
}

bool refresh_epoch() {
  if (!linked()) return false;
  uint64_t epoch = 1;
  std::size_t len = sizeof(epoch);
  return mallctl("epoch", &epoch, &len, &epoch, sizeof(epoch)) == 0;
}

std::string arena_key(unsigned index, const char* what) {
  return "arena." + std::to_string(index) + "." + what;
}

uint64_t page_bytes() {
  std::size_t page = 0;
  if (ctl_read("arenas.page", page) && page) return page;
  return static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

unsigned lg2(std::size_t align) {
  unsigned lg = 0;
  while ((std::size_t(1) << lg) < align) ++lg;
  return lg;
}

}  // namespace

/// Shared by the arena handle and every live buffer of the arena.
struct arena::core {
  unsigned index = 0;
  std::atomic<uint64_t> refs{1};
  std::atomic<bool> bound{false};

  void ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  void unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // Last reference: no buffer is left. A bound thread's small allocations
    // may still be, so such an arena is only purged.
    if (bound.load(std::memory_order_acquire))
      purge_arena(index);
    else
      ctl_run(arena_key(index, "destroy"));
    delete this;
  }
};

bool jemalloc_available() { return linked(); }

std::string jemalloc_version() {
  const char* v = nullptr;
  return ctl_read("version", v) && v ? std::string(v) : std::string();
}

int arena_alloc_flags(unsigned index, std::size_t align) {
  return static_cast<int>((index + 1) << arena_shift) | tcache_none | static_cast<int>(lg2(align));
}

int tcache_none_flag() { return tcache_none; }

std::optional<arena_stats> read_arena_stats(unsigned index) {
  if (!refresh_epoch()) return std::nullopt;
  const std::string prefix = "stats.arenas." + std::to_string(index) + ".";
  std::size_t pactive = 0, pdirty = 0, pmuzzy = 0, retained = 0, small = 0, large = 0;
  uint64_t dirty_purged = 0;
  if (!ctl_read(prefix + "pactive", pactive) || !ctl_read(prefix + "pdirty", pdirty) ||
      !ctl_read(prefix + "pmuzzy", pmuzzy))
    return std::nullopt;
  ctl_read(prefix + "retained", retained);
  ctl_read(prefix + "small.allocated", small);
  ctl_read(prefix + "large.allocated", large);
  ctl_read(prefix + "dirty_purged", dirty_purged);
  const uint64_t page = page_bytes();
  arena_stats s;
  s.active = pactive * page;
  s.dirty = pdirty * page;
  s.muzzy = pmuzzy * page;
  s.retained = retained;
  s.allocated = small + large;
  s.purged = dirty_purged * page;
  return s;
}

bool purge_arena(unsigned index) { return ctl_run(arena_key(index, "purge")); }

bool purge_all_arenas() {
  // MALLCTL_ARENAS_ALL: every arena at once.
  return ctl_run("arena.4096.purge");
}

std::optional<unsigned> arena_of(const void* p) {
  if (!linked() || !p) return std::nullopt;
  unsigned index = 0;
  std::size_t len = sizeof(index);
  if (mallctl("arenas.lookup", &index, &len, const_cast<void**>(&p), sizeof(p)) != 0)
    return std::nullopt;
  return index;
}

uint64_t thread_allocated_bytes() {
  uint64_t n = 0;
  return linked() && ctl_read("thread.allocated", n) ? n : 0;
}

unsigned automatic_arenas() {
  unsigned n = 0;
  return ctl_read("opt.narenas", n) ? n : 0;
}

arena arena::create() {
  unsigned index = 0;
  if (!ctl_read("arenas.create", index)) return arena();
  if (index > max_arena_index) {  // cannot be named in mallocx flags
    ctl_run(arena_key(index, "destroy"));
    return arena();
  }
  // -1: never purge on a timer or inside free(); only arena.<i>.purge does.
  ssize_t never = -1;
  if (!ctl_write(arena_key(index, "dirty_decay_ms"), never) ||
      !ctl_write(arena_key(index, "muzzy_decay_ms"), never)) {
    ctl_run(arena_key(index, "destroy"));
    return arena();
  }
  auto* c = new core;
  c->index = index;
  return arena(c);
}

arena::arena(arena&& o) noexcept : core_(std::exchange(o.core_, nullptr)) {}

arena& arena::operator=(arena&& o) noexcept {
  if (this != &o) {
    if (core_) core_->unref();
    core_ = std::exchange(o.core_, nullptr);
  }
  return *this;
}

arena::~arena() {
  if (core_) core_->unref();
}

int arena::index() const noexcept { return core_ ? static_cast<int>(core_->index) : -1; }

source arena::buffers() const {
  if (!core_) return heap_source();
  source s;
  s.ctx = core_;
  s.arena = static_cast<int>(core_->index);
  s.allocate = [](std::size_t bytes, std::size_t align, void* ctx) -> void* {
    auto* c = static_cast<core*>(ctx);
    void* p = mallocx(bytes ? bytes : 1, arena_alloc_flags(c->index, align));
    if (p) c->ref();
    return p;
  };
  s.release = [](void* p, std::size_t, void* ctx) {
    dallocx(p, tcache_none);
    static_cast<core*>(ctx)->unref();
  };
  return s;
}

bool arena::bind_current_thread() {
  if (!core_) return false;
  if (!ctl_write("thread.arena", core_->index)) return false;
  core_->bound.store(true, std::memory_order_release);
  return true;
}

bool arena::purge() const { return core_ && purge_arena(core_->index); }

std::optional<arena_stats> arena::stats() const {
  if (!core_) return std::nullopt;
  return read_arena_stats(core_->index);
}

}  // namespace proofline::memory
