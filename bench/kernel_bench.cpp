// `proofline bench msm|msm_g2|ntt|ntt_coset|prove`: the kernel and proof
// benchmarks of bench/kernels.hpp, one subcommand each, sharing one set of
// options. Every figure is the median of --runs timed runs after --warmup
// untimed ones; on the GPU timed with CUDA events.
#include <CLI/CLI.hpp>

#include <array>
#include <fstream>
#include <memory>
#include <ostream>

#include <spdlog/spdlog.h>

#include "bench/registry.hpp"
#include "bench/kernels.hpp"
#include "gpu/cuda/factory.hpp"

namespace proofline::bench {

namespace {

struct kernel_bench_options {
  bench::request req;
  std::string curve = "bn254";
  unsigned log_to = 0;  ///< sweep up to 2^log_to (0: only --log-n)
  unsigned step = 2;
  std::string backend = "auto";
  bool plain = false;
  std::string json;  ///< JSON lines, one object per size
};

/// What each benchmark measures, for --help.
struct kernel_bench_kind {
  const char* name;
  const char* summary;
};

constexpr std::array<kernel_bench_kind, 5> kinds{{
    {"msm", "G1 multi-scalar multiplication: points resident on the GPU (with precomputed window "
            "multiples, as for proving keys), scalars uploaded from pinned memory every run"},
    {"msm_g2", "G2 multi-scalar multiplication, as msm"},
    {"ntt", "Forward NTT over Fr, data resident, natural order in and out"},
    {"ntt_coset", "The proof's odd-coset step on one vector (inverse NTT, coset shift, NTT)"},
    {"prove", "A whole partition on a synthetic key: upload, three odd-coset NTTs, h, five "
              "MSMs, download; device time from the spans and wall time"},
}};

int run_kernel_bench(const kernel_bench_options& o, std::ostream& out, std::ostream& err) {
  bench::request req = o.req;
  try {
    req.curve = bench::parse_curve(o.curve);
  } catch (const std::exception& e) {
    err << "proofline bench " << req.what << ": " << e.what() << "\n";
    return exit_usage;
  }
  req.fixed_base = !o.plain;
  req.backend = o.backend;
  if (o.backend == "auto") {
    std::string why;
    req.backend = gpu::cuda_device_count(&why) > 0 ? "cuda" : "cpu";
    if (req.backend == "cpu")
      err << "proofline bench " << req.what << ": no CUDA device (" << why
          << "): measuring the CPU backend\n";
  }
  std::ofstream json;
  if (!o.json.empty()) {
    json.open(o.json, std::ios::trunc);
    if (!json) {
      err << "proofline bench " << req.what << ": cannot write " << o.json << "\n";
      return exit_usage;
    }
  }
  unsigned last = std::max(o.log_to, req.log_n);
  int rc = exit_ok;
  bool header = false;
  for (unsigned k = req.log_n; k <= last; k += std::max(1u, o.step)) {
    bench::request r = req;
    r.log_n = k;
    try {
      bench::result res = bench::run(r);
      if (!header) out << bench::result::header() << "\n";
      header = true;
      out << res.row() << "\n";
      for (const auto& [name, ms] : res.breakdown_ms)
        out << "    " << name << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << ms
            << " ms\n";
      out.flush();
      if (json) json << res.json() << "\n" << std::flush;
    } catch (const std::invalid_argument& e) {
      err << "proofline bench " << r.what << ": " << e.what() << "\n";
      return exit_usage;
    } catch (const std::exception& e) {
      err << "proofline bench " << r.what << " 2^" << k << " on " << r.backend << ": " << e.what()
          << "\n";
      rc = exit_failed;
    }
  }
  if (json && !json.good()) {
    err << "proofline bench " << req.what << ": writing " << o.json << " failed\n";
    return exit_failed;
  }
  return rc;
}

}  // namespace

void add_kernel_benches(registry& benches) {
  for (const auto& kind : kinds) {
    auto o = std::make_shared<kernel_bench_options>();
    o->req.what = kind.name;
    CLI::App& app = benches.add(kind.name, kind.summary, [o](std::ostream& out, std::ostream& err) {
      spdlog::set_level(spdlog::level::warn);  // the table says it all
      return run_kernel_bench(*o, out, err);
    });
    app.add_option("--curve", o->curve, "bn254 | bls12_381")
        ->check(CLI::IsMember({"bn254", "bn128", "bls12_381", "bls12381"}))
        ->capture_default_str();
    app.add_option("--log-n", o->req.log_n, "Size 2^N (points, elements, or the proof's domain)")
        ->check(CLI::Range(1u, 28u))
        ->capture_default_str();
    app.add_option("--log-n-to", o->log_to, "Sweep sizes from --log-n up to 2^N")
        ->check(CLI::Range(1u, 28u));
    app.add_option("--step", o->step, "Sweep step in log2 size")
        ->check(CLI::Range(1u, 8u))
        ->capture_default_str();
    app.add_option("--backend", o->backend,
                   "auto (CUDA when a GPU is visible), cuda or cpu (the CPU backend)")
        ->check(CLI::IsMember({"auto", "cuda", "cpu"}))
        ->capture_default_str();
    app.add_option("--runs", o->req.runs, "Timed runs; the figure is their median")
        ->check(CLI::Range(1u, 100000u))
        ->capture_default_str();
    app.add_option("--warmup", o->req.warmup, "Untimed runs first")->capture_default_str();
    app.add_option("--device", o->req.device, "CUDA device")->capture_default_str();
    app.add_option("--threads", o->req.threads, "CPU backend threads (0 = all)")
        ->capture_default_str();
    app.add_option("--seed", o->req.seed, "Input seed")->capture_default_str();
    app.add_option("--ntt-kernel", o->req.ntt_kernel,
                   "cuda NTTs: registers | tiled | fused[:tT][:cC][:rR][:bB][:lL][:uU][:sS] (default: "
                   "PROOFLINE_NTT_KERNEL, else fused:t10:c1:r2:b128:l1:u1:s9)");
    app.add_flag("--plain", o->plain,
                 "cuda MSMs: plain resident points, no precomputed window multiples");
    app.add_option("--json", o->json, "Write one JSON object per size (JSON lines) to FILE")
        ->type_name("FILE");
  }
}

}  // namespace proofline::bench
