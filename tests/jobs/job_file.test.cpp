// Job files: every schema rule, each with the message a user reads.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "jobs/job_file.hpp"

using namespace proofline;
using proofline::jobs::job_file_error;
using proofline::jobs::parse_job_file;
using proofline::jobs::read_job_file;

namespace {

/// Parses `text` as "jobs.json" in directory "dir" (out root "root").
std::vector<job_spec> parse(const std::string& text) {
  return parse_job_file(text, "jobs.json", "dir", "root");
}

/// The message a rejected file gets.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const job_file_error& e) {
    return e.what();
  }
  return "(accepted)";
}

/// One job object with `fields` inside the jobs array.
std::string one(const std::string& fields) { return R"({"jobs": [{)" + fields + "}]}"; }

const std::string good_a = R"("id": "a", "zkey": "c.zkey", "witness": "w.wtns", "out": "out/a")";

}  // namespace

TEST_CASE("a valid job file gives one spec per job with resolved paths") {
  auto specs = parse(R"({"jobs": [
    {"id": "a", "zkey": "circuit.zkey", "witness": "w.wtns", "out": "out/a"},
    {"id": "b", "zkey": "/abs/circuit.zkey", "witnesses": ["w0.wtns", "sub/../w1.wtns"],
     "out": "out/b/", "priority": "high"}]})");
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].id == "a");
  CHECK(specs[0].zkey == "dir/circuit.zkey");
  CHECK(specs[0].witnesses == std::vector<std::string>{"dir/w.wtns"});
  CHECK(specs[0].single);
  CHECK(specs[0].out == "root/out/a");
  CHECK(specs[0].prio == priority::normal);
  CHECK(specs[1].zkey == "/abs/circuit.zkey");
  CHECK(specs[1].witnesses == std::vector<std::string>{"dir/w0.wtns", "dir/w1.wtns"});
  CHECK_FALSE(specs[1].single);
  CHECK(specs[1].out == "root/out/b");
  CHECK(specs[1].prio == priority::high);
}

TEST_CASE("every priority name is accepted") {
  for (auto [name, p] :
       {std::pair{"low", priority::low}, std::pair{"normal", priority::normal},
        std::pair{"high", priority::high}, std::pair{"critical", priority::critical}}) {
    auto specs = parse(one(good_a + R"(, "priority": ")" + name + "\""));
    CHECK(specs[0].prio == p);
  }
}

TEST_CASE("a file that is not valid JSON is rejected with the parser's position") {
  CHECK(error_of(R"({"jobs": [)") ==
        "jobs.json: invalid JSON: parse error at line 1, column 11: syntax error while parsing "
        "value - unexpected end of input; expected '[', '{', or a literal");
}

TEST_CASE("the top level must be an object with exactly a non-empty jobs array") {
  CHECK(error_of("[]") == R"(jobs.json: expected an object {"jobs": [...]}, got an array)");
  CHECK(error_of("{}") == R"(jobs.json: missing field "jobs")");
  CHECK(error_of(R"({"jobs": [], "extra": 1})") ==
        R"(jobs.json: unknown field "extra" (the top level has only "jobs"))");
  CHECK(error_of(R"({"jobs": {}})") ==
        R"(jobs.json: field "jobs": expected an array of jobs, got an object)");
  CHECK(error_of(R"({"jobs": []})") == R"(jobs.json: field "jobs": the list is empty)");
  CHECK(error_of(R"({"jobs": ["a"]})") ==
        "jobs.json: jobs[0]: expected a job object, got a string");
}

TEST_CASE("each required field is named when missing") {
  CHECK(error_of(one(R"("zkey": "c.zkey", "witness": "w", "out": "o")")) ==
        R"(jobs.json: jobs[0]: missing field "id")");
  CHECK(error_of(one(R"("id": "a", "witness": "w", "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): missing field "zkey")");
  CHECK(error_of(one(R"("id": "a", "zkey": "c.zkey", "witness": "w")")) ==
        R"(jobs.json: job "a" (jobs[0]): missing field "out")");
  CHECK(
      error_of(one(R"("id": "a", "zkey": "c.zkey", "out": "o")")) ==
      R"(jobs.json: job "a" (jobs[0]): missing field "witness" or "witnesses" (give exactly one))");
}

TEST_CASE("string fields must be non-empty strings") {
  CHECK(error_of(one(R"("id": 7, "zkey": "c", "witness": "w", "out": "o")")) ==
        R"(jobs.json: jobs[0]: field "id": expected a non-empty string, got a number)");
  CHECK(error_of(one(R"("id": "", "zkey": "c", "witness": "w", "out": "o")")) ==
        R"(jobs.json: jobs[0]: field "id": expected a non-empty string, got "")");
  CHECK(error_of(one(R"("id": "a", "zkey": ["c"], "witness": "w", "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): field "zkey": expected a non-empty string, got an array)");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness": "w", "out": null)")) ==
        R"(jobs.json: job "a" (jobs[0]): field "out": expected a non-empty string, got null)");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness": "", "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): field "witness": expected a non-empty string, got "")");
}

TEST_CASE("a job has exactly one of witness and witnesses") {
  CHECK(
      error_of(one(R"("id": "a", "zkey": "c", "witness": "w", "witnesses": ["w"], "out": "o")")) ==
      R"(jobs.json: job "a" (jobs[0]): fields "witness" and "witnesses" are both given; give exactly one)");
}

TEST_CASE("witnesses must be a non-empty array of non-empty strings") {
  const std::string prefix =
      R"(jobs.json: job "a" (jobs[0]): field "witnesses": expected a non-empty array of non-empty strings)";
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witnesses": "w", "out": "o")")) ==
        prefix + ", got a string");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witnesses": [], "out": "o")")) ==
        prefix + ", got []");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witnesses": ["w", 3], "out": "o")")) ==
        prefix + "; element 1 is a number");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witnesses": [""], "out": "o")")) ==
        prefix + "; element 0 is \"\"");
}

TEST_CASE("priority must be one of the four names") {
  CHECK(
      error_of(one(good_a + R"(, "priority": "urgent")")) ==
      R"(jobs.json: job "a" (jobs[0]): field "priority": expected one of low, normal, high, critical, got "urgent")");
  CHECK(
      error_of(one(good_a + R"(, "priority": 3)")) ==
      R"(jobs.json: job "a" (jobs[0]): field "priority": expected one of low, normal, high, critical, got a number)");
}

TEST_CASE("an unknown key in a job is rejected, naming it") {
  CHECK(
      error_of(one(good_a + R"(, "witnes": "x")")) ==
      R"(jobs.json: job "a" (jobs[0]): unknown field "witnes" (a job has id, zkey, out, witness or witnesses, or witness_generator with input or inputs, priority, r1cs))");
}

TEST_CASE("a job with a witness generator names input files instead of witnesses") {
  auto specs = parse(R"({"jobs": [
      {"id": "a", "zkey": "c.zkey", "witness_generator": "c.so", "input": "i.json", "out": "oa"},
      {"id": "b", "zkey": "c.zkey", "witness_generator": "c.so", "inputs": ["i0.json", "i1.json"], "out": "ob"}]})");
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].witness_generator == "dir/c.so");
  CHECK(specs[0].single);
  CHECK(specs[0].witnesses == std::vector<std::string>{"dir/i.json"});
  CHECK_FALSE(specs[1].single);
  CHECK(specs[1].witnesses == std::vector<std::string>{"dir/i0.json", "dir/i1.json"});
  CHECK_FALSE(specs[0].keep_witness);
}

TEST_CASE("a job's r1cs is resolved like its key, and must be a non-empty string") {
  auto specs = parse(R"({"jobs": [
      {"id": "a", "zkey": "c.zkey", "r1cs": "c.r1cs", "witness": "w.wtns", "out": "oa"},
      {"id": "b", "zkey": "c.zkey", "witness": "w.wtns", "out": "ob"}]})");
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].r1cs == "dir/c.r1cs");
  CHECK(specs[1].r1cs.empty());
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "r1cs": "", "witness": "w", "out": "o")")).find(
            R"(field "r1cs")") != std::string::npos);
}

TEST_CASE("inputs without a generator, and witnesses beside one, are rejected") {
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "input": "i.json", "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): field "input" needs "witness_generator" (the object `proofline witness build` makes))");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness_generator": "c.so", "witness": "w", "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): field "witness" beside "witness_generator": a job with a generator takes "input" or "inputs" (input.json files))");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness_generator": "c.so", "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): missing field "input" or "inputs" (give exactly one))");
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness_generator": "c.so", "inputs": [], "out": "o")")) ==
        R"(jobs.json: job "a" (jobs[0]): field "inputs": expected a non-empty array of non-empty strings, got [])");
}

TEST_CASE("ids and out directories are unique") {
  CHECK(error_of(R"({"jobs": [
      {"id": "a", "zkey": "c", "witness": "w", "out": "o1"},
      {"id": "b", "zkey": "c", "witness": "w", "out": "o2"},
      {"id": "a", "zkey": "c", "witness": "w", "out": "o3"}]})") ==
        R"(jobs.json: job "a" (jobs[2]): field "id": duplicate id, also used by jobs[0])");
  // The same directory spelled differently is still the same directory.
  CHECK(
      error_of(R"({"jobs": [
      {"id": "a", "zkey": "c", "witness": "w", "out": "out/x"},
      {"id": "b", "zkey": "c", "witness": "w", "out": "./out/y/../x/"}]})") ==
      R"(jobs.json: job "b" (jobs[1]): field "out": "root/out/x" is also the out directory of job "a" (jobs[0]))");
}

TEST_CASE("reading a job file resolves paths against its directory, or out against the out root") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("proofline-jobfile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto file = (dir / "jobs.json").string();
  std::ofstream(file) << one(good_a);

  auto specs = read_job_file(file);
  CHECK(specs[0].zkey == (dir / "c.zkey").string());
  CHECK(specs[0].out == (dir / "out/a").string());
  auto rooted = read_job_file(file, std::string("elsewhere"));
  CHECK(rooted[0].zkey == (dir / "c.zkey").string());
  CHECK(rooted[0].out == "elsewhere/out/a");

  CHECK_THROWS_WITH_AS(
      read_job_file((dir / "none.json").string()),
      ((dir / "none.json").string() + ": cannot open: No such file or directory").c_str(),
      job_file_error);
  CHECK_THROWS_WITH_AS(read_job_file(dir.string()),
                       (dir.string() + ": is a directory, not a job file").c_str(), job_file_error);
  fs::remove_all(dir);
}

TEST_CASE("a NUL character in a path or id rejects the file, naming the field") {
  // "circuit.zkey\u0000.x" would otherwise open circuit.zkey.
  CHECK(
      error_of(one(R"("id": "a", "zkey": "c.zkey\u0000.x", "witness": "w.wtns", "out": "out/a")")) ==
      R"(jobs.json: job "a" (jobs[0]): field "zkey": contains a NUL character (\u0000), which no path or id may hold)");
  CHECK(error_of(one(R"("id": "a\u0000b", "zkey": "c", "witness": "w", "out": "o")")).find(
            R"(field "id": contains a NUL character)") != std::string::npos);
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness": "w\u0000", "out": "o")")).find(
            R"(field "witness": contains a NUL character)") != std::string::npos);
  CHECK(error_of(one(R"("id": "a", "zkey": "c", "witness": "w", "out": "o\u0000/x")")).find(
            R"(field "out": contains a NUL character)") != std::string::npos);
  CHECK(
      error_of(one(R"("id": "a", "zkey": "c", "witnesses": ["w0", "w1\u0000"], "out": "o")")) ==
      R"(jobs.json: job "a" (jobs[0]): field "witnesses": element 1 contains a NUL character (\u0000), which no path may hold)");
}

TEST_CASE("a number too large for any type is a schema error naming its field") {
  CHECK(error_of(one(good_a + R"(, "priority": 1e999999)")) ==
        R"(jobs.json: field "priority": number overflow parsing '1e999999')");
  CHECK(error_of(R"({"jobs": [{"id": -1e400}]})") ==
        R"(jobs.json: field "id": number overflow parsing '-1e400')");
}

TEST_CASE("a job file that is not a regular file or is too large is refused without reading it") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("proofline-jobfile-x-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SUBCASE("a FIFO is refused at once, not waited on") {
    auto fifo = (dir / "jobs.fifo").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH_AS(read_job_file(fifo), (fifo + ": not a regular file (a FIFO)").c_str(),
                         job_file_error);
  }
  SUBCASE("a device such as /dev/zero is refused") {
    CHECK_THROWS_WITH_AS(read_job_file("/dev/zero"), "/dev/zero: not a regular file (a device)",
                         job_file_error);
  }
  SUBCASE("a file over the limit is refused by its size") {
    auto big = (dir / "big.json").string();
    {
      std::ofstream out(big);
      out << one(good_a);
    }
    fs::resize_file(big, proofline::jobs::max_job_file_bytes + 1);
    auto msg = big + ": " + std::to_string(proofline::jobs::max_job_file_bytes + 1) +
               " bytes, more than the " + std::to_string(proofline::jobs::max_job_file_bytes) +
               " this file may hold";
    CHECK_THROWS_WITH_AS(read_job_file(big), msg.c_str(), job_file_error);
  }
  fs::remove_all(dir);
}

TEST_CASE("a job file naming more partitions than the limit is refused before jobs are built") {
  std::string three = R"({"jobs": [{"id": "a", "zkey": "c", "witnesses": ["w0", "w1"], "out": "o1"},
                                   {"id": "b", "zkey": "c", "witness": "w", "out": "o2"}]})";
  CHECK(parse_job_file(three, "jobs.json", "dir", "root", 3).size() == 2);
  CHECK_THROWS_WITH_AS(parse_job_file(three, "jobs.json", "dir", "root", 2),
                       "jobs.json: names 3 partitions, more than the limit of 2 (split the file, "
                       "or raise the limit: run --max-partitions)",
                       job_file_error);
}

TEST_CASE("job-file text nested too deep, too long or of too many values is refused as it is read") {
  // The server parses what clients send with this reader: its own limits
  // apply whoever read the file first.
  std::string deep(2'000'000, '[');
  CHECK(error_of(deep) == "jobs.json: nested deeper than 6 arrays and objects");
  // Seven levels: one more than any job file needs (it needs four).
  CHECK(error_of(R"({"jobs": [{"id": "a", "zkey": "c", "out": "o", "witnesses": [[[["w"]]]]}]})") ==
        "jobs.json: nested deeper than 6 arrays and objects");

  std::string many = R"({"jobs": [{"id": "a", "zkey": "c", "out": "o", "witnesses": [)";
  for (int i = 0; i < 40; ++i) many += "\"w\",";
  many += "\"w\"]}]}";
  CHECK(parse_job_file(many, "jobs.json", "dir", "root", 41).size() == 1);
  // 41 partitions' worth of values is 12 * 41 + 16; a limit of 2 allows 40.
  CHECK_THROWS_WITH_AS(parse_job_file(many, "jobs.json", "dir", "root", 2),
                       "jobs.json: more than 40 JSON values (keys, containers and scalars), more "
                       "than jobs of at most 2 partitions take (split the file, or raise the "
                       "limit: run --max-partitions)",
                       job_file_error);

  std::string huge(proofline::jobs::max_job_file_bytes + 1, ' ');
  CHECK(error_of(huge) == "jobs.json: " + std::to_string(huge.size()) + " bytes, more than the " +
                              std::to_string(proofline::jobs::max_job_file_bytes) +
                              " a job file may hold");
}
