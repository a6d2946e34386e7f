// observe/trace: the lanes of a run and the Chrome trace-event JSON built from
// them (what Perfetto opens).
#include "observe/trace.hpp"
#include "tests/support/job_reports.hpp"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace proofline;
using namespace proofline::observe;
using namespace proofline::test;
using json = nlohmann::json;

namespace {

/// One GPU with two worker lanes, two synthesizers, one finalizer and a purge.
run_record small_run() {
  job_report j = job_with("job", job_state::done, {});
  // Device spans t0..t0+10 on GPU 0, all partitions through finalizer 40.
  auto part = [](uint32_t index, int lane, uint64_t synth, double t0) {
    return proved(index, 0, lane,
                  {{"upload", t0, t0 + 2}, {"ntt_a", t0 + 2, t0 + 6}, {"msm_h", t0 + 6, t0 + 10}},
                  synth, 40);
  };
  j.partitions = {part(0, 0, 7, 5), part(1, 1, 8, 13), part(2, 0, 7, 30)};
  run_record rec = one_gpu_run(50, 0, 2, 2, 1, {j});
  rec.purges.push_back({20, 20.5, 3, 4096, "pl.memory"});
  rec.queues = {{0, 1, 2, 0, 0}, {10, 0, 0, 0, 0}};
  return rec;
}

const lane* find_lane(const std::vector<lane>& lanes, const std::string& group,
                      const std::string& name) {
  for (const auto& l : lanes)
    if (l.group == group && l.name == name) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("a run has a lane per synthesizer, per GPU-worker lane, per finalizer and for purges") {
  auto lanes = build_lanes(small_run());
  const lane* s0 = find_lane(lanes, "synthesizers", "synthesizer 0");
  const lane* s1 = find_lane(lanes, "synthesizers", "synthesizer 1");
  REQUIRE(s0);
  REQUIRE(s1);
  CHECK(s0->spans.size() == 2);  // partitions 0 and 2 (actor 7)
  CHECK(s1->spans.size() == 1);
  CHECK(s1->spans[0].name == "job/1");
  CHECK(s1->spans[0].category == "synthesize");

  const lane* d0 = find_lane(lanes, "GPU 0", "lane 0 device");
  const lane* d1 = find_lane(lanes, "GPU 0", "lane 1 device");
  REQUIRE(d0);
  REQUIRE(d1);
  CHECK(d0->spans.size() == 6);
  CHECK(d1->spans.size() == 3);
  CHECK(d1->spans[0].category == "transfer");  // the upload
  CHECK(d1->spans[1].category == "device");
  CHECK(d1->spans[1].partition == 1);
  REQUIRE(find_lane(lanes, "GPU 0", "lane 1 prove()"));

  const lane* f0 = find_lane(lanes, "finalizers", "finalizer 0");
  REQUIRE(f0);
  CHECK(f0->spans.size() == 3);
  const lane* purges = find_lane(lanes, "memory manager", "purges");
  REQUIRE(purges);
  REQUIRE(purges->spans.size() == 1);
  CHECK(purges->spans[0].name == "purge arena 3");
}

TEST_CASE("the GPU's busy lane is the union of its device spans, so gaps show") {
  auto lanes = build_lanes(small_run());
  const lane* busy = find_lane(lanes, "GPU 0", "busy");
  REQUIRE(busy);
  // Device spans 5..15 and 13..23 overlap into 5..23; 30..40 stands apart.
  REQUIRE(busy->spans.size() == 2);
  CHECK(busy->spans[0].start_ms == 5);
  CHECK(busy->spans[0].end_ms == 23);
  CHECK(busy->spans[1].start_ms == 30);
  CHECK(busy->spans[1].end_ms == 40);
}

TEST_CASE("a key's upload and table build show on its GPU's key preparation lane") {
  auto rec = small_run();
  CHECK_FALSE(find_lane(build_lanes(rec), "GPU 0", "key preparation"));  // no key work: no lane
  key_startup k;
  k.path = "circuit.zkey";
  key_preparation d;
  d.gpu = 0;
  d.prepare = {1, 4};
  d.spans = {{"key_upload", 1, 3}, {"key_tables", 16, 28}};
  k.devices.push_back(d);
  key_preparation other = d;
  other.gpu = 1;  // another device's preparation stays off GPU 0's lane
  k.devices.push_back(other);
  rec.keys.push_back(k);
  auto lanes = build_lanes(rec);
  const lane* keys = find_lane(lanes, "GPU 0", "key preparation");
  REQUIRE(keys);
  REQUIRE(keys->spans.size() == 2);
  CHECK(keys->spans[0].name == "key_upload");
  CHECK(keys->spans[0].category == "key");
  CHECK(keys->spans[1].name == "key_tables");
  CHECK(keys->spans[1].start_ms == 16);
  CHECK(keys->spans[1].end_ms == 28);
  // The partitions' busy lane is unchanged by key work.
  const lane* busy = find_lane(lanes, "GPU 0", "busy");
  REQUIRE(busy);
  CHECK(busy->spans.size() == 2);
  const lane* other_keys = find_lane(lanes, "GPU 1", "key preparation");
  REQUIRE(other_keys);
  CHECK(other_keys->spans.size() == 2);
  // And the trace names the lane and carries both spans.
  auto trace = json::parse(trace_json(rec));
  int tid = -1, pid = -1, found = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "key preparation" &&
        pid < 0) {
      pid = e["pid"];
      tid = e["tid"];
    }
  REQUIRE(tid >= 0);
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid && e["cat"] == "key") ++found;
  CHECK(found == 2);
}

TEST_CASE("spans that overlap on one lane move to an extra track") {
  auto rec = small_run();
  rec.jobs[0].partitions[1].spans.lane = 0;  // now lanes 0's partitions overlap (5..15, 13..23)
  auto lanes = build_lanes(rec);
  const lane* main = find_lane(lanes, "GPU 0", "lane 0 device");
  const lane* extra = find_lane(lanes, "GPU 0", "lane 0 device #2");
  REQUIRE(main);
  REQUIRE(extra);
  for (const lane* l : {main, extra})
    for (size_t i = 1; i < l->spans.size(); ++i)
      CHECK(l->spans[i].start_ms >= l->spans[i - 1].end_ms);
  CHECK(main->spans.size() + extra->spans.size() == 9);
}

TEST_CASE("the trace is trace-event JSON with named threads and complete events in microseconds") {
  auto trace = json::parse(trace_json(small_run()));
  REQUIRE(trace.contains("traceEvents"));
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name")
      processes[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
    else if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
  std::set<std::string> groups;
  for (const auto& [pid, name] : processes) groups.insert(name);
  CHECK(groups ==
        std::set<std::string>{"synthesizers", "GPU 0", "finalizers", "memory manager", "pipeline"});

  // The msm_h span of partition 1 (19..23 ms) on GPU 0's lane 1 device thread.
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["name"] != "msm_h" || !e.contains("args") ||
        e["args"]["partition"] != 1)
      continue;
    found = true;
    CHECK(processes[e["pid"].get<int>()] == "GPU 0");
    CHECK(threads[{e["pid"].get<int>(), e["tid"].get<int>()}] == "lane 1 device");
    CHECK(e["ts"].get<double>() == doctest::Approx(19000));
    CHECK(e["dur"].get<double>() == doctest::Approx(4000));
    CHECK(e["cat"] == "device");
    CHECK(e["args"]["job"] == "job");
  }
  CHECK(found);

  int counters = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C" && e["name"] == "queued partitions") {
      ++counters;
      CHECK(processes[e["pid"].get<int>()] == "pipeline");
    }
  CHECK(counters == 2);
}

TEST_CASE("the union of intervals merges overlapping and touching ones") {
  auto u = union_of({{5, 7}, {0, 2}, {2, 3}, {6, 9}, {12, 13}});
  REQUIRE(u.size() == 3);
  CHECK(u[0] == std::pair<double, double>{0, 3});
  CHECK(u[1] == std::pair<double, double>{5, 9});
  CHECK(u[2] == std::pair<double, double>{12, 13});
}
