// proofline-library-bench: proofs through rapidsnark's C ABI from a library
// loaded by path, so that the same calls time proofline's libproofline.so
// and rapidsnark's own librapidsnark.so side by side.
//
//   proofline-library-bench --library LIB --zkey ZKEY --witness W [--witness W ...]
//                           [--threads T] [--proofs N] [--warmup K] [--out DIR]
//
// It makes one prover object from the key's bytes, read first and kept
// (groth16_prover_create, timed: with proofline the key's checks and its
// preparation on the GPUs; rapidsnark's groth16_prover_create_zkey_file
// unmaps the file when it returns, so its prover objects from a path do not
// prove), proves K
// warm-up witnesses, then N witnesses (the given ones in turn) from T
// threads at once, every call on the one prover object, and prints one JSON
// line: the key load, each call's latency from the call to its returned
// proof (median, p90, max), the wall time of the N and their proofs/s. With
// --out DIR the last proof of each witness is written there (proof_<i>.json,
// public_<i>.json) for snarkjs. Exit 1 when any call failed.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

using ull = unsigned long long;
using create_fn = int (*)(void**, const void*, ull, char*, ull);
using prove_fn = int (*)(void*, const void*, ull, char*, ull*, char*, ull*, char*, ull);
using destroy_fn = void (*)(void*);

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "library-bench: %s: cannot open\n", path.c_str());
    std::exit(2);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class F>
F symbol(void* lib, const char* name) {
  void* s = dlsym(lib, name);
  if (!s) {
    std::fprintf(stderr, "library-bench: the library has no %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(s);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  std::string library, zkey, out;
  std::vector<std::string> witness_files;
  int threads = 1, proofs = 8, warmup = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "library-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--library") library = next();
    else if (a == "--zkey") zkey = next();
    else if (a == "--witness") witness_files.push_back(next());
    else if (a == "--threads") threads = std::atoi(next().c_str());
    else if (a == "--proofs") proofs = std::atoi(next().c_str());
    else if (a == "--warmup") warmup = std::atoi(next().c_str());
    else if (a == "--out") out = next();
    else {
      std::fprintf(stderr,
                   "usage: proofline-library-bench --library LIB --zkey ZKEY --witness W... "
                   "[--threads T] [--proofs N] [--warmup K] [--out DIR]\n");
      return 2;
    }
  }
  if (library.empty() || zkey.empty() || witness_files.empty() || threads < 1 || proofs < 1) {
    std::fprintf(stderr, "library-bench: --library, --zkey and --witness are required\n");
    return 2;
  }
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "library-bench: %s\n", dlerror());
    return 2;
  }
  auto create = symbol<create_fn>(lib, "groth16_prover_create");
  auto prove = symbol<prove_fn>(lib, "groth16_prover_prove");
  auto destroy = symbol<destroy_fn>(lib, "groth16_prover_destroy");
  std::vector<std::vector<char>> witnesses;
  for (const auto& w : witness_files) witnesses.push_back(read_file(w));

  char err[1024] = {};
  void* prover = nullptr;
  const std::vector<char> zkey_bytes = read_file(zkey);  // kept: rapidsnark proves from it
  const auto t_load = clock_type::now();
  if (create(&prover, zkey_bytes.data(), zkey_bytes.size(), err, sizeof err) != 0) {
    std::fprintf(stderr, "library-bench: %s: %s\n", zkey.c_str(), err);
    return 1;
  }
  const double load_ms = ms_since(t_load);

  constexpr ull buffer_bytes = 1 << 20;  // far above any proof or public signals of a bench key
  std::vector<std::string> last_proof(witnesses.size()), last_public(witnesses.size());
  std::atomic<int> failures{0};
  auto one = [&](std::size_t w, double* latency) {
    std::vector<char> proof(buffer_bytes), pub(buffer_bytes);
    ull proof_size = buffer_bytes, public_size = buffer_bytes;
    char e[1024] = {};
    const auto t0 = clock_type::now();
    const int rc = prove(prover, witnesses[w].data(), witnesses[w].size(), proof.data(),
                         &proof_size, pub.data(), &public_size, e, sizeof e);
    if (latency) *latency = ms_since(t0);
    if (rc != 0) {
      std::fprintf(stderr, "library-bench: %s: code %d: %s\n", witness_files[w].c_str(), rc, e);
      ++failures;
      return;
    }
    last_proof[w].assign(proof.data(), proof_size);
    last_public[w].assign(pub.data(), public_size);
  };
  std::vector<double> warm;
  for (int k = 0; k < warmup; ++k) {
    double l = 0;
    one(static_cast<std::size_t>(k) % witnesses.size(), &l);
    warm.push_back(l);
  }

  std::vector<double> latencies(static_cast<std::size_t>(proofs));
  std::atomic<int> next{0};
  const auto t_run = clock_type::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int k; (k = next.fetch_add(1)) < proofs;)
        one(static_cast<std::size_t>(k) % witnesses.size(), &latencies[static_cast<std::size_t>(k)]);
    });
  for (auto& t : pool) t.join();
  const double wall_ms = ms_since(t_run);
  destroy(prover);

  if (!out.empty())
    for (std::size_t w = 0; w < witnesses.size(); ++w) {
      if (last_proof[w].empty()) continue;
      std::ofstream(out + "/proof_" + std::to_string(w) + ".json") << last_proof[w];
      std::ofstream(out + "/public_" + std::to_string(w) + ".json") << last_public[w];
    }
  std::printf(
      "{\"library\": \"%s\", \"threads\": %d, \"proofs\": %d, \"warmup\": %d, \"failures\": %d, "
      "\"key_load_ms\": %.3f, \"first_proof_ms\": %.3f, \"latency_ms\": {\"median\": %.3f, "
      "\"p90\": %.3f, \"max\": %.3f}, \"wall_s\": %.6f, \"proofs_per_s\": %.4f}\n",
      library.c_str(), threads, proofs, warmup, failures.load(), load_ms,
      warm.empty() ? 0.0 : warm.front(), quantile(latencies, 0.5), quantile(latencies, 0.9),
      quantile(latencies, 1.0), wall_ms / 1000, proofs / (wall_ms / 1000));
  return failures ? 1 : 0;
}
