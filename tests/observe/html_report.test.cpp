// app/html_report: utilization bins, escaping, and a page that carries its
// data safely. (Rendering in a browser is tests/e2e/observability.sh.)
#include "observe/html_report.hpp"
#include "tests/support/job_reports.hpp"

#include <doctest/doctest.h>

#include <chrono>

#include <nlohmann/json.hpp>

using namespace proofline;
using namespace proofline::observe;
using namespace proofline::test;

TEST_CASE("busy bins hold the covered fraction of each stretch of time") {
  // [0, 40) in 4 bins of 10 ms; busy 5..15 and 30..40.
  auto b = busy_series({{5, 15}, {30, 40}}, 0, 40, 4);
  REQUIRE(b.size() == 4);
  CHECK(b[0] == doctest::Approx(0.5));
  CHECK(b[1] == doctest::Approx(0.5));
  CHECK(b[2] == doctest::Approx(0.0));
  CHECK(b[3] == doctest::Approx(1.0));
}

TEST_CASE("busy bins clip intervals to the window") {
  auto b = busy_series({{-10, 5}, {18, 100}}, 0, 20, 2);
  REQUIRE(b.size() == 2);
  CHECK(b[0] == doctest::Approx(0.5));
  CHECK(b[1] == doctest::Approx(0.2));
  CHECK(busy_series({{0, 1}}, 5, 5, 3) == std::vector<double>{0, 0, 0});
}

TEST_CASE("HTML escaping covers text and attribute values") {
  CHECK(html_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(html_escape("plain") == "plain");
}

TEST_CASE("the page is self-contained and a hostile job id cannot end its data script") {
  run_record rec;
  rec.wall_ms = 10;
  rec.synthesizers = 1;
  rec.finalizers = 1;
  rec.backends.push_back({"cpu", "CPU backend, 2 threads", -1, 1});
  job_report j;
  j.id = "</script><script>alert(1)</script>";
  j.state = job_state::done;
  partition_report p;
  p.state = partition_state::done;
  p.spans.synthesize = {0, 1};
  p.spans.prove = {1, 8};
  p.spans.device = {{"msm_h", 2, 7}};
  p.spans.gpu = 0;
  p.spans.lane = 0;
  p.spans.synthesizer = 3;
  p.spans.finalizer = 4;
  p.spans.finalize = {8, 9};
  j.partitions.push_back(p);
  rec.jobs.push_back(j);
  std::string page = html_report(rec, build_report(rec));

  // No external assets: nothing is fetched from anywhere (the SVG namespace
  // URI in the script is a name, never fetched).
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href=") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("url(") == std::string::npos);
  CHECK(page.find("@import") == std::string::npos);
  // Exactly the two scripts of the page, so the job id did not open a third.
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1))
    ++scripts;
  CHECK(scripts == 2);

  // The data parses back, with the job id intact.
  const std::string open = "<script type=\"application/json\" id=\"proofline-data\">";
  auto from = page.find(open);
  REQUIRE(from != std::string::npos);
  from += open.size();
  auto to = page.find("</script>", from);
  auto data = nlohmann::json::parse(page.substr(from, to - from));
  CHECK(data["wall_ms"].get<double>() == doctest::Approx(10));
  bool found = false;
  for (const auto& lane : data["lanes"])
    for (const auto& s : lane["spans"])
      if (s[4] == "</script><script>alert(1)</script>/0") found = true;
  CHECK(found);
  REQUIRE(data["util"].size() == 1);
  CHECK(data["util"][0]["group"] == "CPU backend");
  CHECK(data["util"][0]["busy_fraction"].get<double>() == doctest::Approx(1.0));
}

TEST_CASE("the page and the report list every job with status, partitions and error, the job file and the date") {
  run_record rec;
  rec.job_file = "/data/jobs.json";
  rec.started_at = iso8601_utc(std::chrono::system_clock::time_point{} +
                               std::chrono::milliseconds(1764590684123));
  rec.wall_ms = 10;
  rec.backends.push_back({"cpu", "CPU backend, 2 threads", -1, 1});
  job_report ok = job_with("fine", job_state::done, {partition_state::done, partition_state::done});
  job_report bad = failed_job("broken", {partition_state::failed}, "w.wtns",
                              "w.wtns: 1520 witness values, c.zkey expects 1521");
  rec.jobs = {ok, bad};
  auto report = build_report(rec);
  CHECK(report.started_at == "2025-12-01T12:04:44.123Z");

  auto page = html_report(rec, report);
  CHECK(page.find("<tr><th>job file</th><td>/data/jobs.json</td></tr>") != std::string::npos);
  CHECK(page.find("<tr><th>started</th><td>2025-12-01T12:04:44.123Z</td></tr>") != std::string::npos);
  CHECK(page.find("<tr class=\"job-done\"><td>fine</td><td>done</td><td>2/2</td><td>out/fine</td><td></td></tr>") !=
        std::string::npos);
  CHECK(page.find("<tr class=\"job-failed\"><td>broken</td><td>failed</td><td>0/1</td><td>out/broken</td>"
                  "<td>w.wtns: 1520 witness values, c.zkey expects 1521</td></tr>") != std::string::npos);

  auto j = nlohmann::json::parse(report_json(report));
  CHECK(j["job_file"] == "/data/jobs.json");
  CHECK(j["started_at"] == "2025-12-01T12:04:44.123Z");
  REQUIRE(j["job_table"].size() == 2);
  CHECK(j["job_table"][0]["id"] == "fine");
  CHECK(j["job_table"][0]["error"].is_null());
  CHECK(j["job_table"][1]["status"] == "failed");
  CHECK(j["job_table"][1]["partitions"]["done"] == 0);
  CHECK(j["job_table"][1]["partitions"]["total"] == 1);
  CHECK(j["job_table"][1]["error"]["file"] == "w.wtns");
}
