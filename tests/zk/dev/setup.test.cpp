// The setup directory (zk/dev/setup.hpp): the files it writes, their
// INSECURE labels, the job file, atomic writes, and the options and
// directories it refuses.
#include <doctest/doctest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "zk/dev/keygen.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"

using namespace proofline;
using namespace proofline::zk::dev;
using proofline::test::temp_dir;
namespace fs = std::filesystem;

namespace {

setup_options options(const std::string& dir) {
  setup_options o;
  o.curve = zk::curve_id::bn254;
  o.constraints = 100;
  o.witnesses = 3;
  o.n_public = 1;
  o.seed = 1;
  o.threads = 2;
  o.out_dir = dir;
  return o;
}

/// The message check_setup throws, or "" when it accepts.
std::string refusal(const setup_options& o) {
  try {
    check_setup(o);
  } catch (const setup_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a setup directory holds the key, K witnesses, keys, job file and INSECURE labels") {
  temp_dir dir;
  const std::string out = dir / "bench";
  const auto res = run_setup(options(out));
  const std::vector<std::string> expected = {
      "circuit.zkey",          "witness_0.wtns", "witness_1.wtns",   "witness_2.wtns",
      "verification_key.json", "jobs.json",      "toxic_waste.json", "README.txt"};
  CHECK(res.files == expected);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    ++entries;
    CHECK_MESSAGE(e.path().filename().string().find(".tmp-") == std::string::npos,
                  "temporary file left behind: " << e.path());
  }
  CHECK(entries == expected.size());

  const auto jobs = nlohmann::json::parse(test::read_text(out + "/jobs.json"));
  REQUIRE(jobs["jobs"].size() == 1);
  const auto& job = jobs["jobs"][0];
  CHECK(job["zkey"] == "circuit.zkey");
  CHECK(job["out"] == "out");
  CHECK(job["witnesses"] == nlohmann::json({"witness_0.wtns", "witness_1.wtns", "witness_2.wtns"}));

  const std::string readme = test::read_text(out + "/README.txt");
  CHECK(readme.find("INSECURE") != std::string::npos);
  CHECK(readme.find("--seed 1") != std::string::npos);
  CHECK(readme.find("proofline run jobs.json") != std::string::npos);
  CHECK(test::read_text(out + "/toxic_waste.json").find("INSECURE") != std::string::npos);

  // The zkey's section 10 carries the banner and a contribution named INSECURE.
  const std::string zkey = test::read_text(out + "/circuit.zkey");
  const auto [offset, size] = test::find_section(zkey, 10);
  const std::string section = zkey.substr(offset, size);
  CHECK(section.compare(0, std::strlen(insecure_banner), insecure_banner) == 0);
  CHECK(section.find(insecure_contribution_name) != std::string::npos);

  // Witness files read back with the format reader, of the key's length.
  const auto key = zk::formats::load_zkey(out + "/circuit.zkey", 1);
  CHECK(key->info.n_vars == res.n_vars);
  const auto w = zk::formats::read_wtns_info(out + "/witness_2.wtns");
  CHECK(w.count == res.n_vars);
  CHECK(w.n8 == 32);
}

TEST_CASE("the same seed writes the same key; another seed another") {
  temp_dir dir;
  auto a = options(dir / "a"), b = options(dir / "b"), c = options(dir / "c");
  c.seed = 2;
  b.witnesses = 1;  // K does not change the circuit or the key
  run_setup(a);
  run_setup(b);
  run_setup(c);
  CHECK(test::read_text(dir / "a/circuit.zkey") == test::read_text(dir / "b/circuit.zkey"));
  CHECK(test::read_text(dir / "a/witness_0.wtns") == test::read_text(dir / "b/witness_0.wtns"));
  CHECK(test::read_text(dir / "a/circuit.zkey") != test::read_text(dir / "c/circuit.zkey"));
}

TEST_CASE("setup refuses bad sizes and unusable or non-empty directories") {
  temp_dir dir;
  auto o = options(dir / "fresh");
  o.constraints = 0;
  CHECK(refusal(o) == "--constraints must be at least 1");
  o = options(dir / "fresh");
  o.witnesses = 0;
  CHECK(refusal(o) == "--witnesses must be at least 1");
  o = options(dir / "fresh");
  o.constraints = 1u << 27;  // 2^27 + 2 rows: a 2^28 domain, BN254's 2-adicity
  CHECK(refusal(o).find("support up to 2^27") != std::string::npos);

  // A regular file where the directory should be, or above it.
  test::write_bytes(dir / "file", "x");
  o = options(dir / "file");
  CHECK(refusal(o).find("exists and is not a directory") != std::string::npos);
  o = options(dir / "file/sub");
  CHECK(refusal(o).find("cannot create the output directory") != std::string::npos);

  // Non-empty: refused, unless --force.
  fs::create_directories(dir.path / "full");
  test::write_bytes(dir / "full/keep.txt", "mine");
  o = options(dir / "full");
  CHECK(refusal(o).find("not empty") != std::string::npos);
  o.force = true;
  CHECK(refusal(o) == "");
  run_setup(o);
  CHECK(test::read_text(dir / "full/keep.txt") == "mine");
  CHECK(fs::exists(dir.path / "full/circuit.zkey"));
  CHECK(refusal(options(dir / "fresh")) == "");  // created, empty, writable
  CHECK(fs::is_directory(dir.path / "fresh"));
}

TEST_CASE("setup refuses a directory it cannot write to") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: root writes to any mode-0555 directory");
    return;
  }
  temp_dir dir;
  fs::create_directories(dir.path / "locked");
  fs::permissions(dir.path / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  CHECK(refusal(options(dir / "locked")).find("not writable") != std::string::npos);
  fs::permissions(dir.path / "locked", fs::perms::owner_all);
}
