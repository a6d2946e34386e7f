// Reading the first proving keys while the GPU driver starts.
//
// `run` creates its CUDA backends (driver start, context creation, device
// queries) before the actor system exists, and the key cache reads a key
// only when the first job asks for it. The two are independent, so `run`
// starts reading the keys its first jobs need on plain threads, then creates
// the backends, and hands the key cache a load function that takes each
// prefetched key instead of reading the file again.
//
// The load function runs in a detached key loader, which would block on the
// read anyway: waiting for the prefetch thread instead is the same wait,
// shorter. A key is taken once; a later load of the same path reads the
// file (the cache asks again only after the first key was dropped or the
// file changed). The file's identity is taken before the read and compared
// when the key is taken, so a file replaced in between is read again. A read
// that failed is rethrown to the loader, which fails the jobs of that key
// naming the file, as a load of its own would.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace proofline {

template <class Key, class Identity>
class key_prefetch {
 public:
  using load_fn = std::function<Key(const std::string&)>;
  using identify_fn = std::function<std::optional<Identity>(const std::string&)>;

  /// Starts one thread per path in `paths` (duplicates read once).
  key_prefetch(load_fn load, identify_fn identify, const std::vector<std::string>& paths)
      : shared_(std::make_shared<state>()) {
    shared_->load = std::move(load);
    shared_->identify = std::move(identify);
    for (const auto& p : paths) {
      if (shared_->entries.count(p)) continue;
      auto e = std::make_unique<entry>();
      e->identity = shared_->identify(p);
      e->key = std::async(std::launch::async, shared_->load, p);
      shared_->entries.emplace(p, std::move(e));
    }
  }

  /// The last holder of the state (this object or a loader function) waits
  /// for reads still running; keys nobody took are dropped.
  ~key_prefetch() = default;

  key_prefetch(const key_prefetch&) = delete;
  key_prefetch& operator=(const key_prefetch&) = delete;

  /// The load function for the key cache. It holds the prefetch's state, so
  /// it stays valid after this object is gone. The map of entries is fixed
  /// at construction, so loaders of different paths may look it up at once;
  /// the first loader of a path takes its key (an atomic exchange).
  load_fn loader() const {
    auto s = shared_;
    return [s](const std::string& path) -> Key {
      auto it = s->entries.find(path);
      if (it == s->entries.end() || it->second->taken.exchange(true)) return s->load(path);
      entry& e = *it->second;
      Key k = e.key.get();  // rethrows the read's error
      if (!e.identity || s->identify(path) != e.identity) return s->load(path);
      return k;
    };
  }

  /// Paths prefetched (for the log).
  std::size_t size() const { return shared_->entries.size(); }

 private:
  struct entry {
    std::optional<Identity> identity;
    std::future<Key> key;
    std::atomic<bool> taken{false};
  };
  struct state {
    load_fn load;
    identify_fn identify;
    std::map<std::string, std::unique_ptr<entry>> entries;
  };
  std::shared_ptr<state> shared_;
};

/// The keys to read ahead: the distinct zkeys of the jobs in the order the
/// scheduler will serve them (priority first, then file order), at most
/// `limit`. `jobs` is (priority rank, zkey path) in file order; a higher
/// rank is served first.
std::vector<std::string> keys_to_prefetch(const std::vector<std::pair<int, std::string>>& jobs,
                                          std::size_t limit);

}  // namespace proofline
