// libproofline's C API (include/proofline/proofline.h), driven as a program
// linking libproofline.so drives it: every proof checked by snarkjs.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proofline/proofline.h"
#include "tests/lib/support.hpp"

using namespace proofline::test;

namespace {

const char* const cpu_options = R"({"backend": "cpu", "cpu-threads": 2, "memory-budget": "2G"})";

struct opened {
  proofline_runtime* rt = nullptr;
  char err[512] = {};
  explicit opened(const char* options = cpu_options) {
    REQUIRE_MESSAGE(proofline_open(options, &rt, err, sizeof err) == PROOFLINE_OK, err);
  }
  ~opened() { proofline_close(rt); }
  proofline_key* load(const std::string& path) {
    proofline_key* key = nullptr;
    REQUIRE_MESSAGE(proofline_key_load_file(rt, path.c_str(), &key, err, sizeof err) ==
                        PROOFLINE_OK,
                    err);
    return key;
  }
};

std::string expected_public(const std::string& dir, int i) {
  auto b = bytes_of(fixture(dir + "/public_" + std::to_string(i) + ".json"));
  return {b.begin(), b.end()};
}

std::string witness_path(const std::string& dir, int i) {
  return fixture(dir + "/witness_" + std::to_string(i) + ".wtns");
}

}  // namespace

TEST_CASE("a witness given as bytes comes back as a proof snarkjs accepts, on both curves") {
  opened h;
  for (const std::string dir : {"bn254/small", "bls12_381/small"}) {
    CAPTURE(dir);
    snarkjs_batch batch(fixture(dir + "/verification_key.json"), scratch_dir("lib-curves"));
    proofline_key* key = h.load(fixture(dir + "/circuit.zkey"));
    CHECK(std::string(proofline_key_curve(key)) == (dir[1] == 'n' ? "bn128" : "bls12381"));
    for (int i = 0; i < 4; ++i) {
      auto w = bytes_of(witness_path(dir, i));
      proofline_proof* p = nullptr;
      REQUIRE(proofline_prove(key, w.data(), w.size(), &p) == PROOFLINE_OK);
      CHECK(proofline_proof_verified(p));
      CHECK(std::string(proofline_proof_backend(p)) == "cpu:0");
      CHECK(std::string(proofline_proof_error(p)).empty());
      // The public signals are the witness's, byte for byte as snarkjs writes them.
      CHECK(std::string(proofline_proof_public_json(p)) == expected_public(dir, i));
      batch.add(proofline_proof_json(p), proofline_proof_public_json(p));
      proofline_proof_free(p);
    }
    proofline_key_release(key);
    std::string report;
    CHECK_MESSAGE(batch.verified(&report) == batch.size(), report);
  }
}

TEST_CASE("a key loaded from a buffer proves after the buffer is gone") {
  opened h;
  proofline_key* key = nullptr;
  {
    auto zkey = bytes_of(fixture("bn254/small/circuit.zkey"));
    REQUIRE_MESSAGE(proofline_key_load(h.rt, zkey.data(), zkey.size(), &key, h.err,
                                       sizeof h.err) == PROOFLINE_OK,
                    h.err);
    std::memset(zkey.data(), 0xff, zkey.size());  // the library holds its own copy
  }
  CHECK(proofline_key_public_count(key) == 5);
  auto w = bytes_of(witness_path("bn254/small", 1));
  CHECK(proofline_key_witness_count(key) > 0);
  proofline_proof* p = nullptr;
  REQUIRE(proofline_prove(key, w.data(), w.size(), &p) == PROOFLINE_OK);
  snarkjs_batch batch(fixture("bn254/small/verification_key.json"), scratch_dir("lib-buffer"));
  batch.add(proofline_proof_json(p), proofline_proof_public_json(p));
  CHECK(batch.verified() == 1);
  proofline_proof_free(p);
  proofline_key_release(key);
}

TEST_CASE("eight threads proving on one handle at once all get their own valid proofs") {
  opened h;
  proofline_key* key = h.load(fixture("bn254/small/circuit.zkey"));
  std::vector<std::vector<char>> witnesses;
  for (int i = 0; i < 4; ++i) witnesses.push_back(bytes_of(witness_path("bn254/small", i)));
  constexpr int threads = 8, each = 3;
  std::vector<std::string> proofs(threads * each), publics(threads * each);
  std::vector<int> codes(threads * each, -1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int k = 0; k < each; ++k) {
        const int slot = t * each + k;
        const auto& w = witnesses[slot % 4];
        proofline_proof* p = nullptr;
        codes[slot] = proofline_prove(key, w.data(), w.size(), &p);
        if (codes[slot] == PROOFLINE_OK) {
          proofs[slot] = proofline_proof_json(p);
          publics[slot] = proofline_proof_public_json(p);
        }
        proofline_proof_free(p);
      }
    });
  for (auto& t : pool) t.join();
  snarkjs_batch batch(fixture("bn254/small/verification_key.json"), scratch_dir("lib-threads"));
  for (int slot = 0; slot < threads * each; ++slot) {
    CAPTURE(slot);
    REQUIRE(codes[slot] == PROOFLINE_OK);
    CHECK(publics[slot] == expected_public("bn254/small", slot % 4));  // nobody got another's proof
    batch.add(proofs[slot], publics[slot]);
  }
  std::string report;
  CHECK_MESSAGE(batch.verified(&report) == batch.size(), report);
  proofline_key_release(key);
}

namespace {

struct callback_log {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, std::string>> got;  // status, public json
  static void on_proof(proofline_proof* p, void* user) {
    auto* self = static_cast<callback_log*>(user);
    {
      std::lock_guard<std::mutex> g(self->mu);
      self->got.emplace_back(proofline_proof_status(p), proofline_proof_public_json(p)
                                                            ? proofline_proof_public_json(p)
                                                            : proofline_proof_error(p));
    }
    self->cv.notify_all();
    proofline_proof_free(p);
  }
};

}  // namespace

TEST_CASE("submissions complete through a callback or a wait, copied or borrowed") {
  opened h;
  proofline_key* key = h.load(fixture("bn254/small/circuit.zkey"));
  callback_log log;
  std::vector<proofline_job*> jobs;
  {
    // Copied: the buffers may go as soon as the submission returns.
    for (int i = 0; i < 4; ++i) {
      auto w = bytes_of(witness_path("bn254/small", i));
      REQUIRE(proofline_submit(key, w.data(), w.size(), PROOFLINE_PRIORITY_HIGH,
                               &callback_log::on_proof, &log, nullptr) == PROOFLINE_OK);
      std::memset(w.data(), 0, w.size());
    }
  }
  auto borrowed = bytes_of(witness_path("bn254/small", 2));
  for (int i = 0; i < 2; ++i) {
    proofline_job* job = nullptr;
    REQUIRE(proofline_submit(key, borrowed.data(), borrowed.size(), PROOFLINE_SUBMIT_BORROW,
                             nullptr, nullptr, &job) == PROOFLINE_OK);
    jobs.push_back(job);
  }
  for (auto* job : jobs) {
    proofline_proof* p = nullptr;
    CHECK(proofline_wait(job, &p) == PROOFLINE_OK);
    CHECK(std::string(proofline_proof_public_json(p)) == expected_public("bn254/small", 2));
    proofline_proof_free(p);
  }
  std::unique_lock<std::mutex> g(log.mu);
  REQUIRE(log.cv.wait_for(g, std::chrono::seconds(60), [&] { return log.got.size() == 4; }));
  std::vector<std::string> seen;
  for (const auto& [code, pub] : log.got) {
    CHECK(code == PROOFLINE_OK);
    seen.push_back(pub);
  }
  for (int i = 0; i < 4; ++i)
    CHECK(std::count(seen.begin(), seen.end(), expected_public("bn254/small", i)) == 1);
  g.unlock();
  // Neither both a callback and a job, nor neither.
  proofline_job* job = nullptr;
  CHECK(proofline_submit(key, borrowed.data(), borrowed.size(), 0, &callback_log::on_proof, &log,
                         &job) == PROOFLINE_ERROR_ARGUMENT);
  CHECK(proofline_submit(key, borrowed.data(), borrowed.size(), 0, nullptr, nullptr, nullptr) ==
        PROOFLINE_ERROR_ARGUMENT);
  proofline_key_release(key);
}

TEST_CASE("closing a handle cancels what is in flight and hands every borrowed buffer back") {
  auto* h = new opened();
  proofline_key* key = h->load(fixture("bn254/small/circuit.zkey"));
  constexpr int n = 24;
  std::vector<std::vector<char>> buffers;
  for (int i = 0; i < n; ++i) buffers.push_back(bytes_of(witness_path("bn254/small", i % 4)));
  std::vector<proofline_job*> jobs(n);
  for (int i = 0; i < n; ++i)
    REQUIRE(proofline_submit(key, buffers[i].data(), buffers[i].size(), PROOFLINE_SUBMIT_BORROW,
                             nullptr, nullptr, &jobs[i]) == PROOFLINE_OK);
  std::thread closer([&] { delete h; });  // proofline_close while the jobs run
  int done = 0, cancelled = 0;
  for (int i = 0; i < n; ++i) {
    proofline_proof* p = nullptr;
    const int rc = proofline_wait(jobs[i], &p);
    CHECK((rc == PROOFLINE_OK || rc == PROOFLINE_ERROR_CANCELLED));
    done += rc == PROOFLINE_OK;
    cancelled += rc == PROOFLINE_ERROR_CANCELLED;
    proofline_proof_free(p);
    // Its outcome is out, so the runtime reads the buffer no more: free it
    // (AddressSanitizer runs of this test catch a late read).
    std::vector<char>().swap(buffers[i]);
  }
  closer.join();
  CHECK(done + cancelled == n);
  CHECK(cancelled > 0);  // 24 proofs on 2 cores take far longer than the close
  // A key outliving its runtime can only be released.
  auto w = bytes_of(witness_path("bn254/small", 0));
  proofline_proof* p = nullptr;
  CHECK(proofline_prove(key, w.data(), w.size(), &p) == PROOFLINE_ERROR_STATE);
  proofline_proof_free(p);
  proofline_key_release(key);
}

TEST_CASE("bad input gets a status and a message naming the problem") {
  opened h;
  proofline_key* key = h.load(fixture("bn254/small/circuit.zkey"));
  auto w = bytes_of(witness_path("bn254/small", 0));
  proofline_proof* p = nullptr;

  SUBCASE("a witness of the wrong length") {
    // One value fewer: the count in the header and the section shrink together.
    std::vector<char> shorter = w;
    uint32_t count = 0;
    const std::size_t n8 = 32, count_at = 12 + 12 + 4 + n8;  // file header, section header, n8, prime
    std::memcpy(&count, shorter.data() + count_at, 4);
    --count;
    std::memcpy(shorter.data() + count_at, &count, 4);
    uint64_t size = 0;
    const std::size_t values_size_at = 12 + 12 + 4 + n8 + 4 + 4;
    std::memcpy(&size, shorter.data() + values_size_at, 8);
    size -= n8;
    std::memcpy(shorter.data() + values_size_at, &size, 8);
    shorter.resize(shorter.size() - n8);
    CHECK(proofline_prove(key, shorter.data(), shorter.size(), &p) == PROOFLINE_ERROR_INPUT);
    const std::string msg = proofline_proof_error(p);
    CHECK(msg == "witness: " + std::to_string(count) + " witness values, " +
                     fixture("bn254/small/circuit.zkey") + " expects " +
                     std::to_string(count + 1));
    CHECK(proofline_proof_json(p) == nullptr);
  }
  SUBCASE("a truncated witness") {
    CHECK(proofline_prove(key, w.data(), w.size() - 5, &p) == PROOFLINE_ERROR_INPUT);
    CHECK(std::string(proofline_proof_error(p)).find("witness: truncated") == 0);
  }
  SUBCASE("a witness of the other curve") {
    auto other = bytes_of(witness_path("bls12_381/small", 0));
    CHECK(proofline_prove(key, other.data(), other.size(), &p) == PROOFLINE_ERROR_INPUT);
    CHECK(std::string(proofline_proof_error(p)).find("witness: witness is for") == 0);
  }
  SUBCASE("a NULL witness") {
    CHECK(proofline_prove(key, nullptr, 10, &p) == PROOFLINE_ERROR_ARGUMENT);
    CHECK(std::string(proofline_proof_error(p)) == "witness: NULL");
  }
  proofline_proof_free(p);
  proofline_key_release(key);
}

TEST_CASE("a key that cannot be read is refused naming the file and the problem") {
  opened h;
  const std::string dir = scratch_dir("lib-keys");
  auto zkey = bytes_of(fixture("bn254/small/circuit.zkey"));
  write_text(dir + "/cut.zkey", std::string(zkey.begin(), zkey.begin() + zkey.size() / 2));
  proofline_key* key = nullptr;
  CHECK(proofline_key_load_file(h.rt, (dir + "/cut.zkey").c_str(), &key, h.err, sizeof h.err) ==
        PROOFLINE_ERROR_INPUT);
  CHECK(key == nullptr);
  CHECK(std::string(h.err).find(dir + "/cut.zkey: truncated") == 0);
  CHECK(proofline_key_load(h.rt, zkey.data(), zkey.size() / 2, &key, h.err, sizeof h.err) ==
        PROOFLINE_ERROR_INPUT);
  CHECK(std::string(h.err).find("zkey buffer: truncated") == 0);
  CHECK(proofline_key_load_file(h.rt, (dir + "/none.zkey").c_str(), &key, h.err, sizeof h.err) ==
        PROOFLINE_ERROR_INPUT);
  CHECK(std::string(h.err).find("cannot open") != std::string::npos);
  CHECK(proofline_key_load_file(nullptr, "x", &key, h.err, sizeof h.err) ==
        PROOFLINE_ERROR_ARGUMENT);
  // A message cut to the buffer stays NUL-terminated.
  char small[8];
  CHECK(proofline_key_load_file(h.rt, (dir + "/none.zkey").c_str(), &key, small, sizeof small) ==
        PROOFLINE_ERROR_INPUT);
  CHECK(std::strlen(small) == sizeof small - 1);
}

TEST_CASE("options that are not understood are refused naming the key") {
  proofline_runtime* rt = nullptr;
  char err[512];
  CHECK(proofline_open(R"({"backend": "gpu"})", &rt, err, sizeof err) == PROOFLINE_ERROR_ARGUMENT);
  CHECK(std::string(err).find("\"backend\": expected one of auto, cpu, cuda") != std::string::npos);
  CHECK(proofline_open(R"({"bakend": "cpu"})", &rt, err, sizeof err) == PROOFLINE_ERROR_ARGUMENT);
  CHECK(std::string(err).find("unknown key \"bakend\"") != std::string::npos);
  CHECK(proofline_open(R"({"memory-budget": "lots"})", &rt, err, sizeof err) ==
        PROOFLINE_ERROR_ARGUMENT);
  CHECK(proofline_open("[1, 2]", &rt, err, sizeof err) == PROOFLINE_ERROR_ARGUMENT);
  CHECK(proofline_open(R"({"log": "loud"})", &rt, err, sizeof err) == PROOFLINE_ERROR_ARGUMENT);
  CHECK(rt == nullptr);
  CHECK(proofline_open(cpu_options, nullptr, err, sizeof err) == PROOFLINE_ERROR_ARGUMENT);
}

namespace {

struct nested {
  proofline_key* key;
  std::vector<char> w;
  std::atomic<int> inner{-1};
  std::atomic<bool> done{false};
  static void on_proof(proofline_proof* p, void* user) {
    auto* self = static_cast<nested*>(user);
    proofline_proof* q = nullptr;
    self->inner = proofline_prove(self->key, self->w.data(), self->w.size(), &q);
    proofline_proof_free(q);
    proofline_proof_free(p);
    self->done = true;
  }
};

}  // namespace

TEST_CASE("a blocking prove inside a callback is refused instead of waiting for itself") {
  opened h;
  nested n;
  n.key = h.load(fixture("bn254/small/circuit.zkey"));
  n.w = bytes_of(witness_path("bn254/small", 0));
  REQUIRE(proofline_submit(n.key, n.w.data(), n.w.size(), 0, &nested::on_proof, &n, nullptr) ==
          PROOFLINE_OK);
  for (int i = 0; i < 600 && !n.done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(n.done);
  CHECK(n.inner == PROOFLINE_ERROR_STATE);
  proofline_key_release(n.key);
}
