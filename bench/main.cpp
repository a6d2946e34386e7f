// proofline-bench: the kernel and proof benchmarks of bench/kernels.hpp from
// the command line, for the GPU host (scripts/gpu-host.sh) until
// `proofline bench` carries them.
//
//   proofline-bench msm --curve bn254 --log-n 16 --log-n-to 24 --step 2 --backend cuda --json out.jsonl
//
// Prints a table (one row per size) and appends one JSON object per size to
// --json (JSON lines). Exit 0 on success, 1 when a benchmark failed, 2 on
// usage errors.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "bench/kernels.hpp"
#if PROOFLINE_HAVE_CUDA
#include "bench/cuda/testing.hpp"
#endif

int main(int argc, char** argv) {
  using namespace proofline;
  CLI::App app{"proofline kernel and proof benchmarks (median of --runs after --warmup)"};
  bench::request req;
  std::string curve = "bn254", json;
  unsigned log_to = 0, step = 1;
  app.add_option("what", req.what, "msm | msm_g2 | ntt | ntt_coset | prove | field")->required();
  app.add_option("--curve", curve, "bn254 | bls12_381")->capture_default_str();
  app.add_option("--log-n", req.log_n, "size 2^log_n")->capture_default_str();
  app.add_option("--log-n-to", log_to, "sweep sizes up to 2^log_n_to");
  app.add_option("--step", step, "sweep step in log2 size")->capture_default_str();
  app.add_option("--backend", req.backend, "cuda | cpu")->capture_default_str();
  app.add_option("--runs", req.runs, "timed runs")->capture_default_str();
  app.add_option("--warmup", req.warmup, "untimed runs first")->capture_default_str();
  app.add_option("--device", req.device, "CUDA device")->capture_default_str();
  app.add_option("--threads", req.threads, "CPU threads (0 = all)")->capture_default_str();
  app.add_option("--seed", req.seed, "input seed")->capture_default_str();
  app.add_option("--window", req.window, "MSM window bits on the GPU (0 = planner's choice)")->capture_default_str();
  bool plain = false;
  app.add_flag("--plain", plain, "cuda: no precomputed window multiples (plain resident points)");
  bool untiled = false;
  app.add_flag("--untiled", untiled, "cuda: NTTs with register passes only (--ntt-kernel registers)");
  app.add_option("--ntt-kernel", req.ntt_kernel,
                 "cuda NTTs: registers | tiled | fused[:tT][:cC][:rR][:bB][:lL][:uU][:sS] (default: PROOFLINE_NTT_KERNEL, else "
                 "fused:t10:c1:r2:b128:l1:u1:s9)");
  app.add_option("--json", json, "append one JSON object per size to this file");
  for (auto* opt : app.get_options()) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  try {
    app.parse(argc, argv);
    req.curve = bench::parse_curve(curve);
    req.fixed_base = !plain;
    if (untiled) req.ntt_kernel = "registers";
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "proofline-bench: {}\n", e.what());
    return 2;
  }
  if (req.what == "field") {  // device field-product variants (bench/cuda/field_bench.cu)
#if PROOFLINE_HAVE_CUDA
    try {
      for (const auto& r : gpu::cuda::testing::field_bench(req.device))
        fmt::print("{:<28} {:>9.3f} ms {:>8.2f} Gmul/s  mismatches {}\n", r.name, r.ms, r.gops, r.mismatches);
      return 0;
    } catch (const std::exception& e) {
      fmt::print(stderr, "proofline-bench: field: {}\n", e.what());
      return 1;
    }
#else
    fmt::print(stderr, "proofline-bench: field needs CUDA\n");
    return 2;
#endif
  }
  if (log_to < req.log_n) log_to = req.log_n;
  if (step == 0) step = 1;
  bool header = false;
  int rc = 0;
  for (unsigned k = req.log_n; k <= log_to; k += step) {
    bench::request r = req;
    r.log_n = k;
    try {
      bench::result res = bench::run(r);
      if (!header) fmt::print("{}\n", bench::result::header());
      header = true;
      fmt::print("{}\n", res.row());
      for (const auto& [name, ms] : res.breakdown_ms) fmt::print("    {:<10} {:>10.3f} ms\n", name, ms);
      std::fflush(stdout);
      if (!json.empty()) {
        std::ofstream out(json, std::ios::app);
        out << res.json() << "\n";
        if (!out) throw std::runtime_error(json + ": cannot write");
      }
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "proofline-bench: {}\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      fmt::print(stderr, "proofline-bench: {} 2^{} on {}: {}\n", r.what, k, r.backend, e.what());
      rc = 1;
    }
  }
  return rc;
}
