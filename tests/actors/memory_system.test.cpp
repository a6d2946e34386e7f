// The memory system at the actor level: purges by message (coalesced, timed,
// on the memory manager's thread and never on a GPU worker's), the pinned
// pool (blocks granted with partitions and back when their buffers are gone),
// proving keys in the budget, cancellation of queued requests, an older job
// never starved by newer ones, memory released on failure, and peak RSS under
// a backlog of partitions that allocate real memory.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include "actors/memory_manager.hpp"
#include "memory/arena.hpp"
#include "memory/process.hpp"
#include "memory/size.hpp"
#include "tests/actors/fixture.hpp"
#include "tests/support/memory_manager.hpp"
#include "gpu/synthetic.hpp"
#include "zk/curves.hpp"

using namespace proofline;
using namespace proofline::test;

namespace {

constexpr uint64_t mib = uint64_t(1) << 20;

std::vector<std::string> names(const std::vector<grant>& gs) {
  std::vector<std::string> out;
  for (const auto& g : gs) out.push_back(g.part.witness());
  return out;
}

}  // namespace

TEST_CASE("a burst of purge requests for one arena makes one timed purge on the manager's thread") {
  memory_manager_config c{1000};
  c.purge_delay = std::chrono::milliseconds(0);
  mm_world w(c);
  auto a = memory::arena::create();
  REQUIRE(a.valid());
  {
    memory::buffer<unsigned char> b(4 * mib, a.buffers());
    std::memset(b.data(), 1, b.bytes());
  }  // freed: 4 MiB dirty in the arena
  for (int i = 0; i < 5; ++i) w.self->send(w.mm, purge_atom::value, a.index());
  w.self->send(w.mm, purge_atom::value, -1);  // the heap: counted, nothing to purge
  w.sched.run();
  REQUIRE(w.purges.size() == 1);
  CHECK(w.purges[0].arena == a.index());
  CHECK(w.purges[0].requests == 5);
  CHECK(w.purges[0].bytes >= 4 * mib);
  CHECK(w.purges[0].ms >= 0);
  CHECK(w.purges[0].thread_id == memory::thread_id());  // undetached: the test's thread
  CHECK(a.stats()->dirty == 0);
  auto s = w.stats();
  CHECK(s.purges == 6);
  CHECK(s.purges_run == 1);
  CHECK(s.purged_bytes >= 4 * mib);
  CHECK(s.purge_thread_ids == std::vector<uint64_t>{memory::thread_id()});
}

TEST_CASE("purge requests coalesce within the window and a later one schedules a new purge") {
  memory_manager_config c{1000};
  c.purge_delay = std::chrono::milliseconds(20);
  mm_world w(c);
  auto a = memory::arena::create();
  auto b = memory::arena::create();
  for (int i = 0; i < 3; ++i) w.self->send(w.mm, purge_atom::value, a.index());
  w.self->send(w.mm, purge_atom::value, b.index());
  w.sched.run();
  CHECK(w.purges.empty());  // nothing before the window ends
  w.sched.advance_time(std::chrono::milliseconds(20));
  w.sched.run();
  REQUIRE(w.purges.size() == 2);  // one per arena
  CHECK(w.purges[0].requests + w.purges[1].requests == 4);
  w.self->send(w.mm, purge_atom::value, a.index());
  w.sched.run();
  w.sched.advance_time(std::chrono::milliseconds(20));
  w.sched.run();
  REQUIRE(w.purges.size() == 3);
  CHECK(w.purges[2].arena == a.index());
  CHECK(w.purges[2].requests == 1);
}

TEST_CASE("with purging off, requests are counted and nothing is purged") {
  memory_manager_config c{1000};
  c.purge = false;
  c.purge_delay = std::chrono::milliseconds(0);
  mm_world w(c);
  auto a = memory::arena::create();
  w.self->send(w.mm, purge_atom::value, a.index());
  w.sched.run();
  CHECK(w.purges.empty());
  CHECK(w.stats().purges == 1);
  CHECK(w.stats().purges_run == 0);
}

TEST_CASE("cancel drops a job's queued partitions, answers how many, and the next job moves up") {
  mm_world w(memory_manager_config{250, 4, 4});
  auto j1 = queued_job(1, 3);
  auto j2 = queued_job(2, 2);
  CHECK(w.reserve(orders_of(j1, 100)).empty());
  CHECK(w.reserve(orders_of(j2, 100)).empty());
  w.pull(4);
  auto first = w.grants();
  CHECK(names(first) == std::vector<std::string>{"j1_0", "j1_1"});  // 200 of 250
  w.self->send(w.mm, drop_queued_atom::value, uint64_t{1});
  w.sched.run();
  uint64_t dropped = 0;
  w.self->receive([&](uint64_t n) { dropped = n; });
  CHECK(dropped == 1);  // j1_2; the two granted ones go back through their reservations
  CHECK(w.stats().queued == 2);
  CHECK(w.stats().cancelled == 1);
  first.clear();  // the stages drop the cancelled job's partitions
  w.sched.run();
  CHECK(names(w.grants()) == std::vector<std::string>{"j2_0", "j2_1"});
  w.self->send(w.mm, drop_queued_atom::value, uint64_t{7});  // nothing queued for it
  w.sched.run();
  w.self->receive([&](uint64_t n) { dropped = n; });
  CHECK(dropped == 0);
}

TEST_CASE("an older job is never starved by a stream of newer ones that would fit") {
  mm_world w(memory_manager_config{300, 8, 8});
  auto old_job = queued_job(1, 3);
  CHECK(w.reserve(orders_of(old_job, 200)).empty());
  w.pull(8);
  auto g = w.grants();
  REQUIRE(names(g) == std::vector<std::string>{"j1_0"});  // 200 of 300
  // Newer small jobs keep arriving; each would fit in the 100 left.
  std::vector<grant> later;
  for (uint64_t seq = 2; seq < 8; ++seq) {
    CHECK(w.reserve(orders_of(queued_job(seq, 1), 50)).empty());
    auto more = w.grants();
    CHECK(more.empty());  // j1_1 is the head and waits; nobody overtakes it
  }
  g.clear();  // j1_0 finishes
  w.sched.run();
  auto next = w.grants();
  REQUIRE(next.size() >= 1);
  CHECK(next[0].part.witness() == "j1_1");
  for (size_t i = 1; i < next.size(); ++i) CHECK(next[i].part.job->seq == 1);
}

TEST_CASE("a pooled partition gets a block with its grant; the head waits for the pool in order") {
  memory_manager_config c{64 * mib, 8, 8};
  c.pool_bytes = 16 * mib;
  mm_world w(c);
  auto before = w.stats();
  CHECK(before.pool == 16 * mib);
  CHECK_FALSE(before.pool_pinned);  // no pinner: ordinary pages
  CHECK(before.reserved == 16 * mib);  // counted once, at start
  auto j = queued_job(1, 4);
  // 6 MiB blocks: two fit in the pool at once; working copies of 1 MiB each.
  CHECK(w.reserve(orders_of(j, 7 * mib, 0, 6 * mib, 1 * mib)).empty());
  w.pull(4);
  auto g = w.grants();
  REQUIRE(names(g) == std::vector<std::string>{"j1_0", "j1_1"});
  REQUIRE(g[0].block);
  CHECK(g[0].block->bytes() == 6 * mib);
  CHECK(g[0].reservation->granted() == 1 * mib);  // only the pageable working copies
  CHECK(g[0].bulk == 0);  // nothing goes back before the buffers do
  auto s = w.stats();
  CHECK(s.reserved == 18 * mib);
  CHECK(s.pool_used == 12 * mib);

  // The synthesizer carves w, a, b, c from the block; the grant's handle goes.
  auto buf = std::make_unique<memory::buffer<uint64_t>>(1024, g[0].block->buffers());
  g[0].block.reset();
  g[0].reservation.reset();
  w.sched.run();
  CHECK(w.grants().empty());  // the block still holds buf: no room for j1_2 yet
  buf.reset();                // the finalizer drops the partition
  w.sched.run();
  auto g2 = w.grants();
  REQUIRE(names(g2) == std::vector<std::string>{"j1_2"});
  CHECK(g2[0].block->offset() == 0);  // the freed block, reused
}

TEST_CASE("a partition larger than the pool is pageable, reserved whole") {
  memory_manager_config c{64 * mib, 8, 8};
  c.pool_bytes = 4 * mib;
  mm_world w(c);
  CHECK(w.reserve(orders_of(queued_job(1, 1), 7 * mib, 0, 6 * mib, 1 * mib)).empty());
  w.pull(1);
  auto g = w.grants();
  REQUIRE(g.size() == 1);
  CHECK_FALSE(g[0].block);
  CHECK(g[0].reservation->granted() == 7 * mib);
}

TEST_CASE("keys are charged when loaded, hold back grants, and refuse partitions that never fit") {
  mm_world w(memory_manager_config{1000, 8, 8});
  w.self->send(w.mm, key_memory_atom::value, std::string("k.zkey"), uint64_t{600});
  w.sched.run();
  CHECK(w.stats().keys == 600);
  CHECK(w.stats().reserved == 600);

  auto refused = w.reserve(orders_of(queued_job(1, 1), 500));
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].error.file == "k.zkey");
  CHECK(refused[0].error.message ==
        "k.zkey: partition needs 500 B beside its proving key (600 B), the memory budget is 1000 B");

  CHECK(w.reserve(orders_of(queued_job(2, 2), 300)).empty());
  w.pull(2);
  auto g = w.grants();
  CHECK(names(g) == std::vector<std::string>{"j2_0"});  // 600 + 300; the second waits
  w.self->send(w.mm, key_memory_atom::value, std::string("k.zkey"), uint64_t{0});  // key dropped
  w.sched.run();
  CHECK(names(w.grants()) == std::vector<std::string>{"j2_1"});
  CHECK(w.stats().keys == 0);
  CHECK(w.stats().peak_keys == 600);
}

TEST_CASE("other jobs' keys never deadlock the queue: with nothing in flight the head goes over") {
  mm_world w(memory_manager_config{1000, 8, 8});
  w.self->send(w.mm, key_memory_atom::value, std::string("a.zkey"), uint64_t{500});
  w.self->send(w.mm, key_memory_atom::value, std::string("b.zkey"), uint64_t{400});
  w.sched.run();
  // 300 fits beside its own key (500), not beside both keys: b's job waits
  // behind this one, so b's key would never be released.
  CHECK(w.reserve(orders_of(queued_job(1, 1, priority::normal, "a.zkey"), 300)).empty());
  w.pull(1);
  auto g = w.grants();
  REQUIRE(names(g) == std::vector<std::string>{"j1_0"});
  CHECK(w.stats().reserved == 1200);
  CHECK(w.stats().peak_reserved == 1200);
}

// ---------------------------------------------------------------- the pipeline

namespace {

using curve = zk::bn254;

/// A world whose partitions allocate and touch real memory: witness and a, b,
/// c from the synthesizer's source, and the backend's working copies (four
/// domain vectors, the CPU backend's footprint) on the GPU worker's thread.
struct heavy_world : std::enable_shared_from_this<heavy_world> {
  uint32_t log_domain = 16;  // 2 MiB per domain vector
  uint32_t n_vars = 4096;
  /// Proving slower than synthesis: without a budget partitions would pile up.
  std::chrono::milliseconds prove_delay{15};
  std::mutex mtx;  // tests may lock; the rule covers actors/, messages/, memory/
  std::set<uint64_t> gpu_threads;
  std::vector<bool> pinned_seen;
  std::vector<int> arena_seen;
  std::atomic<uint64_t> over_budget{0};

  prover_ops ops() {
    auto self = shared_from_this();
    prover_ops ops;
    ops.load_key = [self](const std::string& path) -> zk::groth16::key_ptr {
      return gpu::synthetic_key(path, self->n_vars, self->log_domain);
    };
    ops.synthesize = [](const zk::groth16::key_ptr& key, const synthesis_request& req,
                        synthesis_timing&) -> gpu::partition_ptr {
      auto p = gpu::synthetic_partition(key, req.buffers);
      for (auto* b : {static_cast<void*>(p->a.data()), static_cast<void*>(p->b.data()),
                      static_cast<void*>(p->c.data())})
        std::memset(b, 3, p->a.bytes());
      std::memset(p->witness.data(), 0, p->witness.bytes());
      return p;
    };
    ops.finalize = [](const zk::groth16::key_ptr&, const gpu::partition_ptr&,
                      const gpu::result_ptr&) { return finalized_files{"{}", "[]", false, false, 0, {}}; };
    ops.write_file = [](const std::string&, std::string_view) {};
    return ops;
  }

  class backend final : public gpu::backend {
   public:
    explicit backend(std::shared_ptr<heavy_world> w) : w_(std::move(w)) {}
    const char* kind() const override { return "heavy"; }
    std::string describe() const override { return "heavy fake backend"; }
    gpu::result_ptr prove(const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                          const gpu::prove_hooks& hooks) override {
      const auto& p = static_cast<const gpu::partition<curve>&>(*part);
      {
        std::lock_guard<std::mutex> g(w_->mtx);
        w_->gpu_threads.insert(memory::thread_id());
        w_->pinned_seen.push_back(p.a.origin().pinned);
        w_->arena_seen.push_back(p.a.origin().arena);
      }
      // The CPU backend's footprint: 4 domain vectors and a witness copy,
      // allocated and freed here, on the GPU worker's thread.
      std::vector<memory::buffer<curve::fr>> work;
      for (int i = 0; i < 4; ++i) {
        work.emplace_back(key->info.domain_size);
        std::memcpy(work.back().data(), p.a.data(), p.a.bytes());
      }
      memory::buffer<curve::scalar> w(key->info.n_vars);
      std::memcpy(w.data(), p.witness.data(), w.bytes());
      if (hooks.inputs_consumed) hooks.inputs_consumed();
      std::this_thread::sleep_for(w_->prove_delay);
      return std::make_shared<gpu::result<curve>>();
    }

   private:
    std::shared_ptr<heavy_world> w_;
  };
};

struct backlog_result {
  job_state state = job_state::queued;
  memory_stats stats;
  uint64_t baseline_rss = 0;
  uint64_t peak_rss = 0;
};

/// Proves `jobs` × `parts` heavy partitions on the real scheduler, detached.
/// await_pinned: submit only once the memory manager reports its pool
/// pinned (pinning runs on a thread of its own, and partitions granted
/// before it is done use ordinary pages by design).
backlog_result run_backlog(const std::shared_ptr<heavy_world>& world, runtime_config rc, int jobs,
                           int parts, bool await_pinned = false) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system sys(cfg);
  rc.detach = true;
  uint64_t budget = rc.memory_budget;
  rc.on_grant = [world, budget](const grant_event& e) {
    if (e.reserved_after > budget) ++world->over_budget;
  };
  backlog_result out;
  memory::reset_peak_rss();
  out.baseline_rss = memory::current_rss();
  out.state = job_state::done;
  {
    runtime rt(sys, rc, world->ops(), {std::make_shared<heavy_world::backend>(world)});
    caf::scoped_actor self(sys);
    for (int i = 0; await_pinned && i < 2000; ++i) {
      bool pinned = false;
      self->request(rt.memory(), std::chrono::seconds(10), stats_atom::value)
          .receive([&](memory_stats& s) { pinned = s.pool_pinned; }, [&](caf::error& e) { FAIL(sys.render(e)); });
      if (pinned) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::vector<uint64_t> seqs;
    for (int j = 0; j < jobs; ++j) {
      std::vector<std::string> ws;
      for (int i = 0; i < parts; ++i) ws.push_back("w" + std::to_string(j) + "_" + std::to_string(i));
      auto spec = make_job("job" + std::to_string(j), ws);
      self->request(rt.registry(), std::chrono::seconds(30), submit_atom::value, spec)
          .receive([&](uint64_t s) { seqs.push_back(s); }, [&](caf::error& e) { FAIL(sys.render(e)); });
    }
    for (auto seq : seqs)
      self->request(rt.registry(), std::chrono::seconds(60), await_atom::value, seq)
          .receive([&](job_report& r) {
                     if (r.state != job_state::done) out.state = r.state;
                   },
                   [&](caf::error& e) { FAIL(sys.render(e)); });
    // Let the last purge requests (coalesced, 5 ms) run before the stats.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    self->request(rt.memory(), std::chrono::seconds(10), stats_atom::value)
        .receive([&](memory_stats& s) { out.stats = s; }, [&](caf::error& e) { FAIL(sys.render(e)); });
  }
  out.peak_rss = memory::peak_rss();
  return out;
}

}  // namespace

TEST_CASE("under a backlog no purge runs on a GPU worker's thread and peak RSS stays in budget") {
  // Each partition: 6 MiB of a, b, c + 128 KiB witness; the backend's 8 MiB
  // + 128 KiB of copies; estimate 14.25 MiB. A 32 MiB budget holds two. The
  // backend is slower than synthesis, so without the budget all 20 would be
  // synthesized ahead (~130 MiB).
  auto world = std::make_shared<heavy_world>();
  runtime_config rc;
  rc.memory_budget = 32 * mib;
  rc.synthesizers = 2;
  rc.finalizers = 2;
  rc.pacing = 20;  // only the budget limits how many partitions are in flight
  auto r = run_backlog(world, rc, 2, 10);
  REQUIRE(r.state == job_state::done);
  INFO("baseline RSS " << r.baseline_rss / mib << " MiB, peak " << r.peak_rss / mib << " MiB");

  // Purges ran, on the memory manager's thread, never on the GPU worker's.
  CHECK(r.stats.purges_run > 0);
  CHECK(r.stats.purged_bytes > 0);
  REQUIRE(world->gpu_threads.size() == 1);
  for (auto id : r.stats.purge_thread_ids) CHECK(world->gpu_threads.count(id) == 0);
  CHECK(r.stats.purge_threads == std::vector<std::string>{"pl.memory"});
  // Partition buffers came from the synthesizers' arenas, never the heap.
  for (int a : world->arena_seen) CHECK(a >= static_cast<int>(memory::automatic_arenas()));

  // The budget held: reservations never above it, RSS within it (+ 1 GiB,
  // the bound; and the growth over the baseline within the budget
  // plus a few in-flight buffers the bulk release lets go early).
  CHECK(world->over_budget == 0);
  CHECK(r.stats.peak_reserved <= rc.memory_budget);
  CHECK(r.stats.reserved == 0);
  CHECK(r.peak_rss <= rc.memory_budget + (uint64_t(1) << 30));
  CHECK(r.peak_rss - r.baseline_rss <= rc.memory_budget + 16 * mib);
}

TEST_CASE("with a pool the synthesizers write into pool blocks and the budget still holds") {
  auto world = std::make_shared<heavy_world>();
  runtime_config rc;
  rc.memory_budget = 48 * mib;
  rc.pinned_pool = 16 * mib;  // two partitions' witness and a, b, c (6.2 MiB each)
  rc.pinner.name = "fakeRegister";
  rc.pinner.pin = [](void*, std::size_t, std::string*) { return true; };
  rc.pinner.unpin = [](void*) {};
  rc.synthesizers = 2;
  rc.pacing = 20;
  auto r = run_backlog(world, rc, 1, 8, /*await_pinned=*/true);
  REQUIRE(r.state == job_state::done);
  CHECK(r.stats.pool == 16 * mib);
  CHECK(r.stats.pool_pinned);
  CHECK(r.stats.pool_used == 0);  // every block came back
  CHECK(r.stats.reserved == 16 * mib);  // the pool alone, counted once
  REQUIRE(world->pinned_seen.size() == 8);
  for (bool pinned : world->pinned_seen) CHECK(pinned);  // what the CUDA backend checks
  for (int a : world->arena_seen) CHECK(a == -1);        // pool memory: never purged
  CHECK(world->over_budget == 0);
  CHECK(r.peak_rss - r.baseline_rss <= rc.memory_budget + 16 * mib);
}

TEST_CASE("partitions proceed from ordinary pool pages while a slow pinner has pinned nothing yet") {
  auto world = std::make_shared<heavy_world>();
  runtime_config rc;
  rc.memory_budget = 48 * mib;
  rc.pinned_pool = 16 * mib;
  rc.pinner.name = "slowRegister";
  // Pinning takes longer than the first partitions: they must not wait for it.
  rc.pinner.pin = [](void*, std::size_t, std::string*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return true;
  };
  rc.pinner.unpin = [](void*) {};
  rc.synthesizers = 2;
  rc.pacing = 20;
  auto r = run_backlog(world, rc, 1, 8);
  REQUIRE(r.state == job_state::done);
  REQUIRE(world->pinned_seen.size() == 8);
  CHECK_FALSE(world->pinned_seen.front());  // proved from ordinary pages, staged by the backend
  CHECK(r.stats.pool_used == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a failed partition gives back its reservation and its pool block") {
  runtime_config rc;
  rc.memory_budget = 4 * mib;
  rc.pinned_pool = 1 * mib;
  rc.synthesizers = 2;
  start(rc);
  world->fail_prove.insert("f1.wtns");
  auto seq = submit(make_job("f", {"f0.wtns", "f1-bad.wtns", "f1.wtns", "f2.wtns"}));
  auto r = report(seq);
  CHECK(r.state == job_state::failed);
  CHECK(r.partitions[0].state == partition_state::done);
  CHECK(r.partitions[1].state == partition_state::failed);  // synthesis failed
  CHECK(r.partitions[2].state == partition_state::failed);  // the backend failed
  CHECK(r.partitions[3].state == partition_state::done);
  auto m = memory();
  CHECK(m.pool == 1 * mib);
  CHECK(m.pool_used == 0);
  CHECK(m.reserved == 1 * mib);  // the pool alone
  CHECK(m.reservations == 1);    // the pool's charge
  CHECK(m.queued == 0);
}

TEST_CASE_FIXTURE(det_fixture, "a loaded key is charged with its real bytes and released after its jobs") {
  runtime_config rc;
  rc.memory_budget = 1 * mib;
  rc.detach = false;
  auto ops = world->ops();
  uint64_t key_bytes = 0;
  std::weak_ptr<const zk::groth16::proving_key_base> loaded;
  ops.load_key = [&key_bytes, &loaded](const std::string& path) -> zk::groth16::key_ptr {
    auto key = gpu::synthetic_key<zk::groth16::proving_key<curve>>(path, 8, 4);
    key->points_h.resize(1000);  // points a typed key really holds
    key->points_b2.resize(100);
    key_bytes = key->bytes();
    loaded = key;
    return key;
  };
  rt.emplace(sys, rc, ops, std::vector<std::shared_ptr<gpu::backend>>{world->backend()});
  sched.run();
  auto seqs = submit_all({make_job("a", {"a0.wtns", "a1.wtns"}), make_job("b", {"b0.wtns"})});
  REQUIRE(key_bytes >= 1000 * sizeof(curve::g1_affine) + 100 * sizeof(curve::g2_affine));
  for (auto seq : seqs) CHECK(report(seq).state == job_state::done);
  auto m = memory();
  CHECK(m.peak_keys == key_bytes);
  CHECK(m.keys == 0);  // no live job uses it any more
  CHECK(loaded.expired());  // and its memory is really gone, not only uncounted
  CHECK(m.reserved == 0);
  CHECK(m.peak_reserved >= key_bytes + fake_partition_bytes);  // a partition beside the key
  CHECK(m.budget == 1 * mib);
}

TEST_CASE("a pool sized by its first partitions is made once, for that many of them, capped") {
  memory_manager_config c{256 * mib, 8, 8};
  c.pool_bytes = 64 * mib;   // the ceiling
  c.pool_partitions = 3;     // room for three partitions in flight
  mm_world w(c);
  CHECK(w.stats().pool == 0);  // nothing yet: no partition has asked
  CHECK(w.reserve(orders_of(queued_job(1, 2), 6 * mib, 0, 5 * mib, 1 * mib)).empty());
  auto s = w.stats();
  CHECK(s.pool == 15 * mib);  // 3 × 5 MiB
  CHECK(s.reserved >= 15 * mib);
  // A later, larger key does not grow it (pinned once): its partitions fit
  // three blocks no more, one at most, and larger ones become pageable.
  CHECK(w.reserve(orders_of(queued_job(2, 1), 40 * mib, 0, 20 * mib, 20 * mib)).empty());
  CHECK(w.stats().pool == 15 * mib);
  w.pull(3);
  auto g = w.grants();
  REQUIRE(names(g) == std::vector<std::string>{"j1_0", "j1_1", "j2_0"});
  CHECK(g[0].block);
  CHECK(g[1].block);
  CHECK_FALSE(g[2].block);  // 20 MiB does not fit a 15 MiB pool
  CHECK(g[2].reservation->granted() == 40 * mib);
}
