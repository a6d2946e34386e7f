#include "actors/key_cache.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <caf/sec.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>

#include "actors/key_loader.hpp"
#include "memory/size.hpp"

namespace proofline {

std::optional<file_identity> identify_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  file_identity id;
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.device = static_cast<uint64_t>(st.st_dev);
  return id;
}

uint64_t key_host_bytes(const zk::groth16::proving_key_base& key) {
  return zk::visit_curve(key.info.curve, [&](auto curve) -> uint64_t {
    using C = decltype(curve);
    auto* typed = dynamic_cast<const zk::groth16::proving_key<C>*>(&key);
    return typed ? typed->bytes() : 0;
  });
}

namespace {

/// One version of the key at a path.
struct cached_key {
  zk::groth16::key_ptr key;  ///< null while loading
  std::optional<file_identity> identity;
  key_loader_actor loader;  ///< held until it answers
  std::vector<caf::typed_response_promise<key_load_result>> waiting;  ///< users to come
  std::vector<caf::typed_response_promise<key_load_result>> preloads;  ///< no users
  uint32_t users = 0;
  bool adopted = false;  ///< taken whole (adopt_atom), not read from `path`
  uint64_t bytes = 0;
  double load_start_ms = 0;
  double last_use_ms = 0;  ///< run clock
  uint64_t last_use = 0;   ///< key_cache_state::tick then: orders least recently used
};

class key_cache_state {
 public:
  static inline const char* name = "key_cache";
  using pointer = key_cache_actor::stateful_pointer<key_cache_state>;

  explicit key_cache_state(pointer self) : self(self) {}

  key_cache_actor::behavior_type make_behavior(key_cache_config config);

 private:
  // ---- handlers
  /// Answers a request for `path` now or once it has loaded.
  caf::result<key_load_result> request(const std::string& path, bool preload);
  /// Takes `key` under `name` with one user (adopt_atom).
  caf::result<key_load_result> adopt(const std::string& name, const zk::groth16::key_ptr& key);
  void add_users(const zk::groth16::key_ptr& key, int32_t delta);
  /// Bytes freed by evicting idle keys, least recently used first, until `bytes`.
  uint64_t evict_idle(uint64_t bytes);
  /// Evicts the idle key at `path`: its bytes, or the error saying why not.
  caf::result<uint64_t> evict_one(const std::string& path);
  std::vector<warm_key> list() const;
  /// A device prepared `key`: added to its load's record.
  void on_prepared(const zk::groth16::key_ptr& key, const key_preparation& p);

  // ---- helpers
  void start_loading(const std::string& path);
  void on_loaded(const std::string& path, const key_load_result& r);
  /// The key at `path` is in (loaded or adopted): recorded, logged, told to
  /// the memory manager and handed to the backends.
  void take_in(const std::string& path, cached_key& k, const zk::groth16::key_ptr& key);
  /// Drops the current key at `path` (idle), telling the backends.
  void drop(const std::string& path);
  /// Tells the memory manager the bytes and idleness at `path`, as they are now.
  void tell_memory(const std::string& path);

  // ---- data
  pointer self;
  key_cache_config cfg;
  std::map<std::string, cached_key> keys;  ///< the current version by path
  /// Older versions still used by jobs (their file changed since).
  std::multimap<std::string, cached_key> retired;
  uint64_t tick = 0;  ///< counts uses
  std::map<std::string, bool> told_idle;       ///< what the memory manager was last told, by path
  std::map<std::string, uint64_t> told_bytes;  ///< likewise
  /// Every load and its preparations (run reports), and the key of each.
  std::vector<key_startup> history;
  std::vector<std::weak_ptr<const zk::groth16::proving_key_base>> history_keys;
};

key_cache_actor::behavior_type key_cache_state::make_behavior(key_cache_config config) {
  cfg = std::move(config);
  return {
      [this](key_atom, const std::string& path) { return request(path, false); },
      [this](key_users_atom, const zk::groth16::key_ptr& key, int32_t delta) {
        add_users(key, delta);
      },
      [this](preload_atom, const std::string& path) { return request(path, true); },
      [this](adopt_atom, const std::string& name, const zk::groth16::key_ptr& key) {
        return adopt(name, key);
      },
      [this](evict_bytes_atom, uint64_t bytes) { return evict_idle(bytes); },
      [this](evict_path_atom, const std::string& path) { return evict_one(path); },
      [this](warm_keys_atom) { return list(); },
      [this](prepared_atom, const zk::groth16::key_ptr& key, const key_preparation& p) {
        on_prepared(key, p);
      },
      [this](startup_atom) { return history; },
  };
}

caf::result<key_load_result> key_cache_state::request(const std::string& path, bool preload) {
  auto identity = cfg.identify(path);
  auto it = keys.find(path);
  if (it != keys.end() && !it->second.key) {  // loading: wait for it
    auto rp = self->make_response_promise<key_load_result>();
    (preload ? it->second.preloads : it->second.waiting).push_back(rp);
    return rp;
  }
  if (it != keys.end()) {
    cached_key& k = it->second;
    if (k.adopted || k.identity == identity) {
      if (!preload) {
        ++k.users;
        k.last_use_ms = cfg.clock.now_ms();
        k.last_use = ++tick;
        tell_memory(path);
      }
      spdlog::debug("key {} is loaded ({}, {} user(s))", path, memory::format_bytes(k.bytes),
                    k.users);
      return key_load_result{k.key, {}};
    }
    // The file changed (or cannot be read any more): its jobs keep the version
    // they hold, later ones get the file as it is now.
    spdlog::info("key {} changed on disk since it was loaded: loading it again", path);
    if (k.users > 0) {
      retired.emplace(path, std::move(k));
      keys.erase(it);
    } else {
      drop(path);
    }
  }
  cached_key& k = keys[path];
  k.identity = identity;
  auto rp = self->make_response_promise<key_load_result>();
  (preload ? k.preloads : k.waiting).push_back(rp);
  start_loading(path);
  return rp;
}

caf::result<key_load_result> key_cache_state::adopt(const std::string& name,
                                                    const zk::groth16::key_ptr& key) {
  if (!key) return caf::make_error(caf::sec::invalid_argument, name + ": no key to adopt");
  if (keys.count(name) || retired.count(name))
    return caf::make_error(caf::sec::invalid_argument, name + ": a key of that name is loaded");
  cached_key& k = keys[name];
  k.adopted = true;
  k.users = 1;
  k.load_start_ms = cfg.clock.now_ms();
  take_in(name, k, key);
  return key_load_result{key, {}};
}

void key_cache_state::start_loading(const std::string& path) {
  cached_key& k = keys[path];
  k.load_start_ms = cfg.clock.now_ms();
  k.loader = spawn_key_loader(self->system(), cfg.load, cfg.detach_loaders);
  spdlog::info("loading key {}", path);
  auto me = self;
  self->request(k.loader, caf::infinite, load_atom::value, path)
      .then([=](const key_load_result& r) { me->state.on_loaded(path, r); },
            [=](caf::error& e) {
              me->state.on_loaded(
                  path, {nullptr, {path, path + ": key loader failed: " + me->system().render(e)}});
            });
}

void key_cache_state::on_loaded(const std::string& path, const key_load_result& r) {
  auto it = keys.find(path);
  if (it == keys.end()) return;
  cached_key& k = it->second;
  k.loader = nullptr;
  auto waiting = std::move(k.waiting);
  auto preloads = std::move(k.preloads);
  k.waiting.clear();
  k.preloads.clear();
  if (!r.key) {
    // Not cached: a later job naming the same file tries again.
    keys.erase(it);
    spdlog::error("{}", r.error.message);
    for (auto& rp : waiting) rp.deliver(r);
    for (auto& rp : preloads) rp.deliver(r);
    return;
  }
  k.users = static_cast<uint32_t>(waiting.size());
  // The memory manager hears of the key before its jobs' reservations.
  take_in(path, k, r.key);
  for (auto& rp : waiting) rp.deliver(r);
  for (auto& rp : preloads) rp.deliver(r);
  if (k.users == 0 && !cfg.keep_warm) drop(path);
}

void key_cache_state::take_in(const std::string& path, cached_key& k,
                              const zk::groth16::key_ptr& key) {
  k.key = key;
  k.bytes = key_host_bytes(*key);
  k.last_use_ms = cfg.clock.now_ms();
  k.last_use = ++tick;
  key_startup record;
  record.path = path;
  record.bytes = k.bytes;
  record.read = {k.load_start_ms, k.last_use_ms};
  history.push_back(std::move(record));
  history_keys.push_back(key);
  const auto& info = key->info;
  spdlog::info("key {}: {}, {} variables, {} public, domain 2^{}", path,
               zk::to_string(info.curve), info.n_vars, info.n_public, info.log_domain);
  tell_memory(path);
  if (cfg.key_ready) cfg.key_ready(key);
}

void key_cache_state::add_users(const zk::groth16::key_ptr& key, int32_t delta) {
  if (!key || delta == 0) return;
  auto apply = [&](cached_key& k) {
    int64_t users = static_cast<int64_t>(k.users) + delta;
    k.users = static_cast<uint32_t>(std::max<int64_t>(0, users));
    k.last_use_ms = cfg.clock.now_ms();
    k.last_use = ++tick;
  };
  for (auto it = keys.begin(); it != keys.end(); ++it) {
    if (it->second.key != key) continue;
    apply(it->second);
    if (it->second.users == 0 && (!cfg.keep_warm || it->second.adopted))
      drop(it->first);
    else
      tell_memory(it->first);
    return;
  }
  for (auto it = retired.begin(); it != retired.end(); ++it) {
    if (it->second.key != key) continue;
    apply(it->second);
    if (it->second.users > 0) return;
    std::string path = it->first;
    retired.erase(it);
    if (cfg.key_evicted) cfg.key_evicted(key);
    tell_memory(path);
    return;
  }
}

uint64_t key_cache_state::evict_idle(uint64_t bytes) {
  std::vector<std::pair<uint64_t, std::string>> idle;
  for (const auto& [path, k] : keys)
    if (k.key && k.users == 0) idle.emplace_back(k.last_use, path);
  std::sort(idle.begin(), idle.end());
  uint64_t freed = 0;
  for (const auto& [last_use, path] : idle) {
    if (freed >= bytes) break;
    const cached_key& k = keys[path];
    uint64_t held = k.bytes;
    spdlog::info("key {} evicted ({}, idle {:.1f} s): the memory budget needs room", path,
                 memory::format_bytes(held), (cfg.clock.now_ms() - k.last_use_ms) / 1000.0);
    freed += held;
    drop(path);
  }
  return freed;
}

caf::result<uint64_t> key_cache_state::evict_one(const std::string& path) {
  auto it = keys.find(path);
  if (it == keys.end() || !it->second.key)
    return caf::make_error(caf::sec::invalid_argument, path + ": not loaded");
  if (it->second.users > 0)
    return caf::make_error(caf::sec::invalid_argument,
                           path + ": in use by " + std::to_string(it->second.users) +
                               " job(s); evict it once they end");
  const uint64_t held = it->second.bytes;
  spdlog::info("key {} evicted ({}): asked for", path, memory::format_bytes(held));
  drop(path);
  return held;
}

void key_cache_state::drop(const std::string& which) {
  // A copy: callers pass the map's own key, which erase() frees.
  const std::string path = which;
  auto it = keys.find(path);
  if (it == keys.end()) return;
  auto key = std::move(it->second.key);
  keys.erase(it);
  tell_memory(path);
  if (key && cfg.key_evicted) cfg.key_evicted(key);
}

void key_cache_state::tell_memory(const std::string& path) {
  uint64_t bytes = 0;
  bool idle = false;
  if (auto it = keys.find(path); it != keys.end() && it->second.key) {
    bytes += it->second.bytes;
    idle = it->second.users == 0 && cfg.keep_warm;
  }
  auto [first, last] = retired.equal_range(path);
  for (auto r = first; r != last; ++r) {
    bytes += r->second.bytes;
    idle = false;  // an older version is still in use
  }
  auto told = told_idle.find(path);
  bool was_known = told != told_idle.end();
  bool was_idle = was_known && told->second;
  if (!was_known || bytes == 0 || told_bytes[path] != bytes)
    self->send(cfg.memory, key_memory_atom::value, path, bytes);
  if (bytes == 0) {
    told_idle.erase(path);
    told_bytes.erase(path);
    return;
  }
  told_bytes[path] = bytes;
  if (!was_known || was_idle != idle) self->send(cfg.memory, key_idle_atom::value, path, idle);
  told_idle[path] = idle;
}

void key_cache_state::on_prepared(const zk::groth16::key_ptr& key, const key_preparation& p) {
  for (size_t i = history.size(); i-- > 0;)
    if (history_keys[i].lock() == key) {
      // The same preparation again (its tables were built later) replaces
      // the first report of it.
      for (auto& d : history[i].devices)
        if (d.gpu == p.gpu && d.prepare.start == p.prepare.start &&
            d.prepare.end == p.prepare.end) {
          d = p;
          return;
        }
      history[i].devices.push_back(p);
      return;
    }
}

std::vector<warm_key> key_cache_state::list() const {
  const double now = cfg.clock.now_ms();
  std::vector<warm_key> out;
  auto add = [&](const std::string& path, const cached_key& k) {
    if (!k.key) return;
    warm_key w;
    w.path = path;
    w.bytes = k.bytes;
    w.users = k.users;
    w.last_use_ms = k.last_use_ms;
    w.idle_ms = k.users ? 0 : now - k.last_use_ms;
    out.push_back(std::move(w));
  };
  for (const auto& [path, k] : keys) add(path, k);
  for (const auto& [path, k] : retired) add(path, k);
  std::stable_sort(out.begin(), out.end(), [](const warm_key& a, const warm_key& b) {
    return a.last_use_ms < b.last_use_ms;
  });
  return out;
}

}  // namespace

key_cache_actor spawn_key_cache(caf::actor_system& sys, key_cache_config cfg) {
  return spawn_stateful<key_cache_state>(sys, std::move(cfg));
}

}  // namespace proofline
