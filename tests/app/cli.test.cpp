// The command line: options, help, version and exit codes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>
#include <vector>

#include "app/cli.hpp"

using namespace proofline::app;

namespace {

struct outcome {
  std::optional<int> code;
  run_options opts;
  std::string out, err;
};

outcome parse(std::vector<const char*> args) {
  args.insert(args.begin(), "proofline");
  outcome o;
  std::ostringstream out, err;
  o.code = parse_command_line(static_cast<int>(args.size()), args.data(), o.opts, out, err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

}  // namespace

TEST_CASE("run takes every option") {
  auto o = parse({"run", "jobs.json", "--backend", "cpu", "--synthesizers", "3", "--finalizers",
                  "4", "--cpu-threads", "5", "--synthesis-ahead", "1", "--memory-budget", "1.5G",
                  "--log-level", "debug", "--out-root", "outs", "--quiet", "--pinned-pool",
                  "--max-partitions", "7", "--synthesis-model", "lc-keep"});
  REQUIRE_FALSE(o.code);
  CHECK(o.opts.job_file == std::string("jobs.json"));
  CHECK(o.opts.backend == "cpu");
  CHECK(o.opts.synthesizers == 3);
  CHECK(o.opts.finalizers == 4);
  CHECK(o.opts.cpu_threads == 5);
  CHECK(o.opts.synthesis_ahead == 1);
  CHECK(o.opts.memory_budget == 3ull << 29);
  CHECK(o.opts.log_level == "debug");
  CHECK(o.opts.log_level_given);
  CHECK(o.opts.out_root == std::string("outs"));
  CHECK(o.opts.quiet);
  CHECK(o.opts.pinned_pool);
  CHECK(o.opts.max_partitions == 7);
  CHECK(o.opts.synthesis_model == "lc-keep");
  CHECK(parse({"run", "--synthesis-model", "lc"}).opts.synthesis_model == "lc");
  auto resident = parse({"run", "--resident-pool"});
  REQUIRE_FALSE(resident.code);
  CHECK(resident.opts.resident_pool);
  CHECK_FALSE(resident.opts.pinned_pool);
  CHECK(parse({"run", "--resident-pool", "--pinned-pool"}).code == 2);  // one pool or the other
}

TEST_CASE("run without arguments uses the defaults and the bundled example") {
  auto o = parse({"run"});
  REQUIRE_FALSE(o.code);
  CHECK_FALSE(o.opts.job_file);
  CHECK_FALSE(o.opts.out_root);
  CHECK(o.opts.backend == "auto");
  CHECK(o.opts.synthesizers == 0);  // automatic: app/backend_choice.hpp
  CHECK(o.opts.finalizers == 2);
  CHECK(o.opts.memory_budget == 0);
  CHECK(o.opts.synthesis_ahead == 0);
  CHECK_FALSE(o.opts.log_level_given);
  CHECK_FALSE(o.opts.pinned_pool);
  CHECK_FALSE(o.opts.resident_pool);
  CHECK(o.opts.max_partitions == 100000);
  CHECK(o.opts.synthesis_model == "plain");
}

TEST_CASE("usage errors exit 2 with a message on stderr") {
  for (auto args :
       std::vector<std::vector<const char*>>{{},                           // no subcommand
                                             {"frobnicate"},               // unknown subcommand
                                             {"run", "--backend", "gpu"},  // not a backend
                                             {"run", "--memory-budget", "8X"},  // not a size
                                             {"run", "--synthesizers", "300"},  // out of range
                                             {"run", "--gpu-lanes", "0"},       // out of range
                                             {"run", "--gpus", "0", "--gpu-memory", "lots"},
                                             {"run", "--gpus", "0,1", "--gpu-memory", "40G,lots"},
                                             {"run", "--log-level", "loud"},
                                             {"run", "--synthesis-model", "bellman"},
                                             {"run", "a.json", "b.json"},  // one job file
                                             {"run", "--no-such-option"}}) {
    auto o = parse(args);
    REQUIRE(o.code);
    CHECK(*o.code == exit_usage);
    CHECK_FALSE(o.err.empty());
  }
  CHECK(parse({"run", "--memory-budget", "8X"}).err.find("expected a size") != std::string::npos);
}

TEST_CASE("--gpu-memory takes one size for every GPU or one per GPU") {
  auto one = parse({"run", "--gpus", "0,1", "--gpu-memory", "40G"});
  CHECK_FALSE(one.code);
  CHECK(one.opts.gpu_memory == "40G");
  auto each = parse({"run", "--gpus", "0,1", "--gpu-memory", "40G,512M"});
  CHECK_FALSE(each.code);
  CHECK(each.opts.gpu_memory == "40G,512M");
  CHECK(parse({"run", "--gpu-memory", "40G,"}).err.find("one per GPU") != std::string::npos);
}

TEST_CASE("help and version exit 0 and print on stdout") {
  auto top = parse({"--help"});
  REQUIRE(top.code);
  CHECK(*top.code == exit_ok);
  CHECK(top.out.find("run") != std::string::npos);
  CHECK(top.out.find("Exit codes") != std::string::npos);

  auto run = parse({"run", "--help"});
  REQUIRE(run.code);
  CHECK(*run.code == exit_ok);
  for (const char* needle :
       {"JOB FILE", "\"witnesses\"", "result.json", "proof_<i>.json", "EXIT CODES",
        "--memory-budget", "--backend", "--out-root", "proofline-out", "70% of physical memory"})
    CHECK_MESSAGE(run.out.find(needle) != std::string::npos, needle);

  auto v = parse({"--version"});
  REQUIRE(v.code);
  CHECK(*v.code == exit_ok);
  CHECK(v.out == version_text() + "\n");
  CHECK(version_text().rfind("proofline ", 0) == 0);

  auto after = parse({"run", "--backend", "cpu", "--version"});  // after a subcommand too
  REQUIRE(after.code);
  CHECK(*after.code == exit_ok);
  CHECK(after.out == version_text() + "\n");
}

TEST_CASE("the default memory budget is 70% of physical memory minus 1 GiB") {
  uint64_t total = physical_memory();
  REQUIRE(total > 0);
  uint64_t expected = total / 10 * 7 - (1ull << 30);
  if (total / 10 * 7 <= (1ull << 30) + (256ull << 20)) expected = 256ull << 20;
  CHECK(default_memory_budget() == expected);
}

TEST_CASE("--config FILE: the file's keys are options, the command line wins, bad keys are refused") {
  auto path = (std::filesystem::temp_directory_path() /
               ("proofline-config-" + std::to_string(::getpid()) + ".json"))
                  .string();
  {
    std::ofstream f(path);
    f << R"({"backend": "cpu", "quiet": true, "memory-budget": "1G", "finalizers": 3,
             "log-format": "json", "no-verify": false})";
  }
  auto o = parse({"run", "jobs.json", "--config", path.c_str(), "--backend", "cuda"});
  CHECK_FALSE(o.code);
  CHECK(o.opts.backend == "cuda");  // the command line wins
  CHECK(o.opts.quiet);               // the file over the default
  CHECK(o.opts.memory_budget == (1ull << 30));
  CHECK(o.opts.finalizers == 3);
  CHECK(o.opts.log_format == "json");
  CHECK_FALSE(o.opts.no_verify);
  CHECK(o.opts.job_file == std::optional<std::string>("jobs.json"));

  auto d = parse({"run", "--config", path.c_str()});
  CHECK_FALSE(d.code);
  CHECK(d.opts.backend == "cpu");
  CHECK(d.opts.finalizers == 3);

  {
    std::ofstream f(path);
    f << R"({"lisen": "127.0.0.1:1"})";
  }
  auto bad = parse({"run", "--config", path.c_str()});
  REQUIRE(bad.code);
  CHECK(*bad.code == exit_usage);
  CHECK(bad.err.find(path + ": key \"lisen\": `run` has no option --lisen") != std::string::npos);
  {
    std::ofstream f(path);
    f << R"({"quiet": "yes"})";
  }
  auto kind = parse({"run", "--config", path.c_str()});
  REQUIRE(kind.code);
  CHECK(kind.err.find("key \"quiet\": expected true or false") != std::string::npos);
  // A list where one value is taken, and a value CLI11 refuses: exit 2
  // naming the file and the key.
  {
    std::ofstream f(path);
    f << R"({"backend": ["cpu"]})";
  }
  auto list = parse({"run", "--config", path.c_str()});
  REQUIRE(list.code);
  CHECK(*list.code == exit_usage);
  CHECK(list.err.find(path + ": key \"backend\": --backend takes one value") != std::string::npos);
  {
    std::ofstream f(path);
    f << R"({"synthesizers": "two"})";
  }
  auto value = parse({"run", "--config", path.c_str()});
  REQUIRE(value.code);
  CHECK(*value.code == exit_usage);
  CHECK(value.err.find(path + ": key \"synthesizers\": --synthesizers:") != std::string::npos);
  std::filesystem::remove(path);
  auto missing = parse({"run", "--config", path.c_str()});
  REQUIRE(missing.code);
  CHECK(missing.err.find(path + ": cannot open") != std::string::npos);
}

TEST_CASE("an unknown option or command suggests the nearest known one") {
  auto typo = parse({"run", "jobs.json", "--bakend", "cpu"});
  REQUIRE(typo.code);
  CHECK(*typo.code == exit_usage);
  CHECK(typo.err.find("there is no option --bakend; did you mean --backend?") != std::string::npos);
  auto eq = parse({"run", "jobs.json", "--finalizer=2"});
  CHECK(eq.err.find("did you mean --finalizers?") != std::string::npos);
  auto far = parse({"run", "jobs.json", "--zzzzzz"});
  REQUIRE(far.code);
  CHECK(far.err.find("did you mean") == std::string::npos);
  auto command = parse({"rn", "jobs.json"});
  REQUIRE(command.code);
  CHECK(command.err.find("there is no command rn; did you mean run?") != std::string::npos);
}
