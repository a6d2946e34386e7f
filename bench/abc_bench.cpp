// a, b, c of one partition on the GPU (gpu/cuda/abc) against the CPU's
// synthesize_abc on the same key and witness: the figure behind moving
// synthesis's sparse products to the device.
//
//   proofline-abc-bench --zkey KEY --witness WTNS [--runs N] [--warmup K]
//                       [--threads T] [--device D]
//
// Prints one JSON object: the key's size and terms, the matrices' device
// bytes, the layout's build time (once per key, host), the GPU passes'
// median (CUDA events around the two passes, witness already resident),
// the witness upload from pinned memory, the CPU's median on T threads, and
// whether the GPU's a, b, c equal the CPU's bit for bit.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/cuda/abc/device.cuh"
#include "gpu/cuda/abc/matrix.hpp"
#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/check.cuh"
#include "zk/curves.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/prover.hpp"

using namespace proofline;
namespace abc = gpu::cuda::abc;
namespace cu = gpu::cuda;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct options {
  std::string zkey, witness;
  unsigned runs = 10, warmup = 2, threads = 0;
  int device = 0;
};

template <class C>
nlohmann::json run(const options& o, const zk::groth16::proving_key<C>& key) {
  using F = typename C::fr;
  using S = typename C::scalar;
  const auto& info = key.info;
  const std::size_t n = info.domain_size;
  std::vector<S> w(info.n_vars);
  zk::formats::read_witness<C>(o.witness, key, w.data());
  const unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());

  nlohmann::json j;
  j["curve"] = C::name;
  j["domain"] = n;
  j["n_vars"] = info.n_vars;
  j["terms_a"] = key.coefs_a.size();
  j["terms_b"] = key.coefs_b.size();

  double t0 = now_ms();
  const auto ha = abc::build_matrix<C>(key.coefs_a, info, "A");
  const auto hb = abc::build_matrix<C>(key.coefs_b, info, "B");
  j["layout_build_ms"] = now_ms() - t0;
  j["device_bytes"] = ha.bytes() + hb.bytes();
  j["segments"] = ha.segments() + hb.segments();

  CUDA_OK(cudaSetDevice(o.device));
  cu::stream st;
  const cudaStream_t s = st.get();
  t0 = now_ms();
  const auto A = abc::upload(ha, s);
  const auto B = abc::upload(hb, s);
  CUDA_OK(cudaStreamSynchronize(s));
  j["layout_upload_ms"] = now_ms() - t0;

  cu::pinned_buffer<S> pw(w.size());
  std::memcpy(pw.get(), w.data(), w.size() * sizeof(S));
  cu::device_buffer<S> dw(w.size());
  cu::device_buffer<F> da(n), db(n), dc(n);
  cu::device_buffer<char> scratch(abc::scratch_bytes(A.view(), B.view()) + 1);
  cu::event e0, e1, e2;
  std::vector<double> upload_ms, gpu_ms;
  for (unsigned r = 0; r < o.warmup + o.runs; ++r) {
    e0.record(s);
    CUDA_OK(cudaMemcpyAsync(dw.get(), pw.get(), w.size() * sizeof(S), cudaMemcpyHostToDevice, s));
    e1.record(s);
    abc::compute_on(A.view(), B.view(), dw.get(), scratch.get(), da.get(), db.get(), dc.get(), s);
    e2.record(s);
    e2.synchronize();
    if (r < o.warmup) continue;
    upload_ms.push_back(e1.since(e0));
    gpu_ms.push_back(e2.since(e1));
  }
  j["witness_upload_ms"] = median(upload_ms);
  j["gpu_ms"] = median(gpu_ms);

  std::vector<F> a(n), b(n), c(n);
  std::vector<double> cpu_ms;
  for (unsigned r = 0; r < o.warmup + o.runs; ++r) {
    t0 = now_ms();
    zk::groth16::synthesize_abc<C>(key, w.data(), a.data(), b.data(), c.data(), threads);
    if (r >= o.warmup) cpu_ms.push_back(now_ms() - t0);
  }
  j["cpu_threads"] = threads;
  j["cpu_ms"] = median(cpu_ms);

  std::vector<F> ga(n), gb(n), gc(n);
  CUDA_OK(cudaMemcpy(ga.data(), da.get(), n * sizeof(F), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(gb.data(), db.get(), n * sizeof(F), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(gc.data(), dc.get(), n * sizeof(F), cudaMemcpyDeviceToHost));
  j["equal_to_cpu"] = ga == a && gb == b && gc == c;
  j["runs"] = o.runs;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "proofline-abc-bench: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--zkey") o.zkey = next();
    else if (arg == "--witness") o.witness = next();
    else if (arg == "--runs") o.runs = unsigned(std::stoul(next()));
    else if (arg == "--warmup") o.warmup = unsigned(std::stoul(next()));
    else if (arg == "--threads") o.threads = unsigned(std::stoul(next()));
    else if (arg == "--device") o.device = std::stoi(next());
    else {
      std::fprintf(stderr,
                   "usage: proofline-abc-bench --zkey KEY --witness WTNS [--runs N] [--warmup K] [--threads T] "
                   "[--device D]\n");
      return 2;
    }
  }
  if (o.zkey.empty() || o.witness.empty() || o.runs == 0) {
    std::fprintf(stderr, "proofline-abc-bench: --zkey and --witness are required, --runs at least 1\n");
    return 2;
  }
  try {
    const auto kp = zk::formats::load_zkey(o.zkey);
    nlohmann::json j;
    zk::visit_curve(kp->info.curve, [&](auto c) {
      using C = decltype(c);
      j = run<C>(o, zk::groth16::typed<C>(*kp));
    });
    std::printf("%s\n", j.dump().c_str());
    return j.value("equal_to_cpu", false) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "proofline-abc-bench: %s\n", e.what());
    return 1;
  }
}
