// Reservation handles: stepwise release, exactly one final release, and the
// automatic release when the last handle drops.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "gpu/footprint.hpp"
#include "memory/estimate.hpp"
#include "memory/reservation.hpp"

using proofline::memory::reservation;

namespace {

struct call {
  uint64_t id, bytes;
  bool final;
  bool operator==(const call& o) const {
    return id == o.id && bytes == o.bytes && final == o.final;
  }
};

}  // namespace

TEST_CASE("a reservation releases in steps and ends exactly once") {
  std::vector<call> calls;
  {
    auto r = std::make_shared<reservation>(7, 100, [&](uint64_t id, uint64_t b, bool f) {
      calls.push_back({id, b, f});
    });
    CHECK(r->release(30) == 30);
    CHECK(r->held() == 70);
    CHECK(r->release(500) == 70);  // clamped
    CHECK(r->release(1) == 0);     // nothing left: no call
    r->release_all();
    r->release_all();
    CHECK(r->release(1) == 0);
  }
  CHECK(calls == std::vector<call>{{7, 30, false}, {7, 70, false}, {7, 0, true}});
}

TEST_CASE("the last handle to drop returns what is still held") {
  std::vector<call> calls;
  auto r = std::make_shared<reservation>(3, 64, [&](uint64_t id, uint64_t b, bool f) {
    calls.push_back({id, b, f});
  });
  auto copy = r;
  r->release(16);
  r.reset();
  CHECK(calls.size() == 1);  // another handle is alive
  copy.reset();
  CHECK(calls == std::vector<call>{{3, 16, false}, {3, 48, true}});
}

TEST_CASE("concurrent releases never give back more than was granted") {
  std::atomic<uint64_t> returned{0};
  std::atomic<int> finals{0};
  {
    auto r = std::make_shared<reservation>(1, 1'000'000, [&](uint64_t, uint64_t b, bool f) {
      returned += b;
      finals += f;
    });
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([r] {
        for (int i = 0; i < 100'000; ++i) r->release(3);
        r->release_all();
      });
    for (auto& t : ts) t.join();
  }
  CHECK(returned == 1'000'000);
  CHECK(finals == 1);
}

TEST_CASE("the partition estimate counts witness, a, b, c and the backend's copies") {
  // BN254: n8r = 32; 1000 variables over a 1024 domain, CPU backend.
  auto e = proofline::memory::estimate_partition(1000, 1024, 32,
                                                 proofline::gpu::cpu_backend_footprint);
  CHECK(e.witness == 32000);
  CHECK(e.inputs == 3 * 1024 * 32);
  CHECK(e.working == 4 * 1024 * 32 + 32000);
  CHECK(e.total() == 2 * 32000 + 7 * 1024 * 32);
  CHECK(e.bulk() == 3 * 1024 * 32);
}
