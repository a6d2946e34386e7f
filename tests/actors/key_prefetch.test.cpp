// key_prefetch: keys read while the backends start are handed to the key
// cache's loader once, re-read when the file changed, and a failed read
// reaches the loader as its own failure would.
#include "actors/detail/key_prefetch.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

using proofline::key_prefetch;
using proofline::keys_to_prefetch;

namespace {

/// A loader that counts its calls per path and returns a fresh object each
/// time. The prefetch calls it from one thread per path, so the counters are
/// atomic and made up front for every path the cases load: the map itself is
/// only read while loads may run.
struct counting_loader {
  using counters = std::map<std::string, std::atomic<int>>;
  std::shared_ptr<counters> calls = make_counters();
  static std::shared_ptr<counters> make_counters() {
    auto c = std::make_shared<counters>();
    for (const char* path : {"a.zkey", "b.zkey", "c.zkey"}) c->emplace(path, 0);
    return c;
  }
  std::function<std::shared_ptr<int>(const std::string&)> fn() {
    auto c = calls;
    return [c](const std::string& path) {
      if (path == "missing.zkey") throw std::runtime_error("missing.zkey: No such file or directory");
      static std::atomic<int> serial{0};
      ++c->at(path);
      return std::make_shared<int>(++serial);
    };
  }
};

}  // namespace

TEST_CASE("a prefetched key is read once and handed to the first load of its path") {
  counting_loader l;
  auto version = std::make_shared<int>(1);
  auto identify = [version](const std::string&) -> std::optional<int> { return *version; };
  key_prefetch<std::shared_ptr<int>, int> pre(l.fn(), identify, {"a.zkey", "a.zkey", "b.zkey"});
  CHECK(pre.size() == 2);
  auto load = pre.loader();
  auto a1 = load("a.zkey");
  CHECK((*l.calls)["a.zkey"] == 1);  // the prefetch's read, nothing more
  auto a2 = load("a.zkey");          // taken already: a fresh read
  CHECK((*l.calls)["a.zkey"] == 2);
  CHECK(*a1 != *a2);
  load("c.zkey");  // never prefetched: read on demand
  CHECK((*l.calls)["c.zkey"] == 1);
}

TEST_CASE("a file replaced after its prefetch is read again") {
  counting_loader l;
  auto version = std::make_shared<int>(1);
  auto identify = [version](const std::string&) -> std::optional<int> { return *version; };
  key_prefetch<std::shared_ptr<int>, int> pre(l.fn(), identify, {"a.zkey"});
  auto load = pre.loader();
  *version = 2;  // the file changed between the prefetch and the load
  load("a.zkey");
  CHECK((*l.calls)["a.zkey"] == 2);
}

TEST_CASE("a failed prefetch reaches the loader as the read's own error") {
  counting_loader l;
  auto identify = [](const std::string&) -> std::optional<int> { return 0; };
  key_prefetch<std::shared_ptr<int>, int> pre(l.fn(), identify, {"missing.zkey"});
  auto load = pre.loader();
  CHECK_THROWS_WITH_AS(load("missing.zkey"), "missing.zkey: No such file or directory",
                       std::runtime_error);
}

TEST_CASE("the loader outlives the prefetch object") {
  counting_loader l;
  auto identify = [](const std::string&) -> std::optional<int> { return 0; };
  std::function<std::shared_ptr<int>(const std::string&)> load;
  {
    key_prefetch<std::shared_ptr<int>, int> pre(l.fn(), identify, {"a.zkey"});
    load = pre.loader();
  }
  const bool loaded = load("a.zkey") != nullptr;
  CHECK(loaded);
  CHECK((*l.calls)["a.zkey"] == 1);
}

TEST_CASE("keys to prefetch: distinct, highest priority first, then file order, at most the limit") {
  CHECK(keys_to_prefetch({}, 2).empty());
  CHECK(keys_to_prefetch({{1, "a"}, {1, "a"}, {1, "b"}, {1, "c"}}, 2) ==
        std::vector<std::string>{"a", "b"});
  CHECK(keys_to_prefetch({{1, "a"}, {3, "c"}, {1, "b"}, {3, "d"}}, 3) ==
        std::vector<std::string>{"c", "d", "a"});
  CHECK(keys_to_prefetch({{1, "a"}, {2, "b"}}, 0).empty());
}
