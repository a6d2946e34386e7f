#include "bench/memory_bench.hpp"
#include "base/text.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/runtime.hpp"
#include "actors/detail/system_setup.hpp"
#include "bench/registry.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/footprint.hpp"
#include "gpu/pinning.hpp"
#include "memory/arena.hpp"
#include "memory/estimate.hpp"
#include "memory/pinned_pool.hpp"
#include "memory/process.hpp"
#include "memory/size.hpp"
#include "zk/curves.hpp"

#include "bench/memory_bench_detail.hpp"

namespace proofline::bench {

using base::fixed;

namespace {

using namespace memory_detail;
using memory::format_bytes;
constexpr double gib = double(uint64_t(1) << 30);

std::string describe_machine() {
  std::string m = std::to_string(std::thread::hardware_concurrency()) + " cores";
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      m += " (" + line.substr(line.find(':') + 2) + ")";
      break;
    }
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemTotal:") {
      m += ", " + format_bytes(kib * 1024) + " RAM";
      break;
    }
  m += ", jemalloc " + std::string(memory::jemalloc_available() ? memory::jemalloc_version() : "absent");
  return m;
}

// ---------------------------------------------------------------- purge vs trim

/// The heap shape in one jemalloc arena: allocated and touched on a worker
/// thread, freed here (as a finalizer frees a synthesizer's buffers), purged.
heap_figures jemalloc_heap(uint64_t bytes, uint64_t chunk, uint64_t keep_every) {
  heap_figures f;
  f.allocator = "jemalloc";
  f.release = "arena.<i>.purge";
  f.bytes = bytes;
  f.chunk = chunk;
  f.keep_every = keep_every;
  auto a = memory::arena::create();
  if (!a.valid()) {
    f.error = "jemalloc is not linked into this program";
    return f;
  }
  const std::size_t n = static_cast<std::size_t>(bytes / chunk);
  std::vector<memory::buffer<unsigned char>> blocks;
  blocks.reserve(n);
  std::thread([&] {
    f.alloc_ms = time_ms([&] {
      for (std::size_t i = 0; i < n; ++i) {
        blocks.emplace_back(chunk, a.buffers());
        std::memset(blocks.back().data(), 1, chunk);
      }
    });
  }).join();
  f.rss_allocated = memory::current_rss();
  f.free_ms = time_ms([&] {
    for (std::size_t i = 0; i < n; ++i)
      if (!keep_every || i % keep_every) blocks[i] = memory::buffer<unsigned char>();
  });
  f.rss_freed = memory::current_rss();
  f.release_ms = time_ms([&] { a.purge(); });
  f.rss_released = memory::current_rss();
  blocks.clear();
  a.purge();
  return f;
}

/// The baseline beside this executable (both land in the build root).
std::string default_trim_baseline() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "proofline-trim-baseline";
  return (exe.parent_path() / "proofline-trim-baseline").string();
}

/// The same heap on glibc, in the child process built without jemalloc.
heap_figures glibc_heap(const std::string& baseline, uint64_t bytes, uint64_t chunk,
                        uint64_t keep_every) {
  heap_figures f;
  f.allocator = "glibc";
  f.release = "glibc trim";  // replaced by the name the baseline reports
  f.bytes = bytes;
  f.chunk = chunk;
  f.keep_every = keep_every;
  if (access(baseline.c_str(), X_OK) != 0) {
    f.error = baseline + ": not found (build the proofline-trim-baseline target)";
    return f;
  }
  std::string cmd = "'" + baseline + "' --bytes " + std::to_string(bytes) + " --chunk " +
                    std::to_string(chunk) + " --keep-every " + std::to_string(keep_every);
  std::string text;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[1024];
    while (std::fgets(buf, sizeof(buf), p)) text += buf;
    if (pclose(p) != 0) f.error = baseline + " failed";
  } else {
    f.error = baseline + ": cannot start";
  }
  if (!f.error.empty()) return f;
  try {
    auto j = nlohmann::json::parse(text);
    if (j.at("jemalloc_linked").get<bool>()) {
      f.error = baseline + " links jemalloc: it must not";
      return f;
    }
    f.alloc_ms = j.at("alloc_ms");
    f.free_ms = j.at("free_ms");
    f.release_ms = j.at("trim_ms");
    f.release = j.at("release").get<std::string>();
    f.rss_allocated = j.at("rss_allocated");
    f.rss_freed = j.at("rss_freed");
    f.rss_released = j.at("rss_trimmed");
  } catch (const std::exception& e) {
    f.error = baseline + ": unreadable output (" + e.what() + ")";
  }
  return f;
}

// ---------------------------------------------------------------- bandwidth

bandwidth_figures measure_bandwidth(const memory_bench_options& o) {
  bandwidth_figures b;
  b.bytes = o.bytes;
  std::string why;
  memory::pinned_pool pool(o.bytes, gpu::cuda_pinner());
  b.pool_pinned = pool.pinned();
  b.pin_ms = pool.pin_ms();
  if (!pool.pinned()) b.note = pool.pin_error();
  {
    auto block = pool.take(o.bytes, nullptr);
    memory::buffer<unsigned char> from_pool(o.bytes, block->buffers());
    std::memset(from_pool.data(), 1, from_pool.bytes());
    b.pool_gbps = gpu::h2d_gbps(from_pool.data(), o.bytes, int(o.repeats), o.device, &why);
  }
  {
    auto a = memory::arena::create();
    memory::buffer<unsigned char> pageable(o.bytes, a.buffers());
    std::memset(pageable.data(), 1, pageable.bytes());
    b.pageable_gbps = gpu::h2d_gbps(pageable.data(), o.bytes, int(o.repeats), o.device, &why);
  }
  b.host_alloc_gbps = gpu::h2d_gbps_host_alloc(o.bytes, int(o.repeats), o.device, &why);
  if (!why.empty()) b.note += (b.note.empty() ? "" : "; ") + why;
  return b;
}

// ---------------------------------------------------------------- output

nlohmann::json to_json(const heap_figures& h) {
  nlohmann::json j = {{"allocator", h.allocator},
                      {"release", h.release},
                      {"bytes", h.bytes},
                      {"chunk", h.chunk},
                      {"keep_every", h.keep_every}};
  if (!h.error.empty()) {
    j["error"] = h.error;
    return j;
  }
  j.update({{"alloc_ms", h.alloc_ms},
            {"free_ms", h.free_ms},
            {"release_ms", h.release_ms},
            {"rss_allocated", h.rss_allocated},
            {"rss_freed", h.rss_freed},
            {"rss_released", h.rss_released},
            {"returned_in_free", h.returned_in_free()},
            {"returned_by_release", h.returned_by_release()},
            {"release_ms_per_gib", h.ms_per_gib()}});
  return j;
}

nlohmann::json to_json(const backlog_figures& b) {
  nlohmann::json j = {{"mode", b.mode},
                      {"partitions", b.partitions},
                      {"ok", b.ok},
                      {"wall_ms", b.wall_ms},
                      {"handoff_gap_ms", {{"p50", b.gap_p50_ms}, {"p99", b.gap_p99_ms}, {"max", b.gap_max_ms}}},
                      {"purges", b.purges},
                      {"purge_ms", b.purge_ms},
                      {"purge_max_ms", b.purge_max_ms},
                      {"purge_on_gpu_thread_ms", b.purge_on_gpu_thread_ms},
                      {"purge_on_memory_manager_ms", b.purge_on_manager_ms},
                      {"threads", b.threads},
                      {"budget_bytes", b.budget},
                      {"peak_reserved_bytes", b.peak_reserved},
                      {"peak_rss_bytes", b.peak_rss},
                      {"baseline_rss_bytes", b.baseline_rss}};
  if (!b.error.empty()) j["error"] = b.error;
  return j;
}

std::string shape_name(const heap_figures& h) {
  return h.keep_every ? "1 in " + std::to_string(h.keep_every) + " kept" : "all freed";
}

}  // namespace

double heap_figures::ms_per_gib() const {
  uint64_t r = returned_by_release();
  return r ? release_ms / (double(r) / gib) : 0;
}

std::string memory_bench_report::json() const {
  nlohmann::json j;
  j["machine"] = machine;
  j["gpu"] = gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(gpu);
  if (gpu.empty()) j["gpu_why"] = gpu_why;
  j["purge_vs_trim"] = nlohmann::json::array();
  for (const auto& h : heaps) j["purge_vs_trim"].push_back(to_json(h));
  j["backlog"] = {{"backend", backend}, {"modes", nlohmann::json::array()}};
  for (const auto& b : backlog) j["backlog"]["modes"].push_back(to_json(b));
  if (bandwidth) {
    auto opt = [](const std::optional<double>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    j["bandwidth"] = {{"bytes", bandwidth->bytes},
                      {"pool_pinned", bandwidth->pool_pinned},
                      {"pin_ms", bandwidth->pin_ms},
                      {"pool_gbps", opt(bandwidth->pool_gbps)},
                      {"pageable_gbps", opt(bandwidth->pageable_gbps)},
                      {"host_alloc_gbps", opt(bandwidth->host_alloc_gbps)},
                      {"note", bandwidth->note}};
    if (bandwidth->pool_gbps && bandwidth->host_alloc_gbps && *bandwidth->host_alloc_gbps > 0)
      j["bandwidth"]["pool_vs_pinned"] = *bandwidth->pool_gbps / *bandwidth->host_alloc_gbps;
  } else {
    j["bandwidth"] = nullptr;
  }
  return j.dump(2);
}

bool memory_bench_report::ok() const {
  for (const auto& h : heaps)
    if (!h.error.empty()) return false;
  for (const auto& b : backlog)
    if (!b.ok) return false;
  return true;
}

memory_bench_report run_memory_bench(const memory_bench_options& o, std::ostream& log) {
  memory_bench_report r;
  r.machine = describe_machine();
  int devices = gpu::cuda_device_count(&r.gpu_why);
  if (devices > 0) r.gpu = "CUDA device " + std::to_string(o.device) + " of " + std::to_string(devices);

  // 1. purge vs trim, two heap shapes
  std::string baseline = o.trim_baseline.empty() ? default_trim_baseline() : o.trim_baseline;
  for (uint64_t keep : {uint64_t(0), uint64_t(16)}) {
    log << "purge vs trim: " << format_bytes(o.bytes) << " in " << format_bytes(o.chunk)
        << " blocks, " << (keep ? "1 in 16 kept" : "all freed") << "\n";
    r.heaps.push_back(jemalloc_heap(o.bytes, o.chunk, keep));
    r.heaps.push_back(glibc_heap(baseline, o.bytes, o.chunk, keep));
  }

  // 2. backlog, three purge modes
  bool upload = o.backend == "cuda-upload" || (o.backend == "auto" && devices > 0);
  auto est = memory::estimate_partition((uint64_t(1) << o.log_domain) / 2, uint64_t(1) << o.log_domain,
                                        32, gpu::cpu_backend_footprint);
  r.backend = fmt::format(
      "{}{} ms of simulated kernels); {} partitions of a 2^{} domain ({} of witness and a, b, c{}){}",
      upload ? "cuda-upload (witness, a, b, c copied to the GPU for real, "
             : "cpu-like (the CPU backend's 4 working copies allocated and written on the "
               "worker's thread, ",
      o.prove_ms, o.partitions, o.log_domain, format_bytes(est.witness + est.inputs),
      upload ? "" : ", " + format_bytes(est.working) + " of working copies",
      o.pool ? ", pool " + format_bytes(o.pool) : ", pageable");
  for (const char* mode : {"off", "message", "inline"}) {
    log << "backlog: purges " << mode << "\n";
    r.backlog.push_back(run_backlog(o, mode, upload));
  }

  // 3. bandwidth (GPU only)
  if (devices > 0) {
    log << "upload bandwidth: " << format_bytes(o.bytes) << "\n";
    r.bandwidth = measure_bandwidth(o);
  }
  return r;
}

void print_memory_bench(std::ostream& out, const memory_bench_report& r) {
  out << "proofline bench memory\n  machine: " << r.machine << "\n  GPU: "
      << (r.gpu.empty() ? "none (" + r.gpu_why + ")" : r.gpu) << "\n\n";

  out << "Purge vs trim: the same heap freed from another thread, then returned to the kernel\n";
  out << "  heap           allocator  free ms  in free()   release call      release ms  returned   ms/GiB\n";
  for (const auto& h : r.heaps) {
    out << fmt::format("  {:<15}{:<11}", shape_name(h), h.allocator);
    if (!h.error.empty()) {
      out << "not measured: " << h.error << "\n";
      continue;
    }
    out << fmt::format("{:>7.1f}  {:>9}   {:<17}{:>10.1f}  {:>9}{:>9}\n", h.free_ms,
                       format_bytes(h.returned_in_free()), h.release, h.release_ms,
                       format_bytes(h.returned_by_release()),
                       h.returned_by_release() ? fixed(h.ms_per_gib(), 0) : std::string("-"));
  }
  out << "  jemalloc purges one arena, on the thread that asks (proofline: the memory manager's);\n"
         "  glibc's trim walks every arena of the process, on the caller's thread.\n\n";

  out << "Hand-off gaps under a backlog: " << r.backend << "\n";
  out << "  purges    gap p50 ms  p99 ms  max ms   purges  purge ms (max)   on GPU worker  ran on"
         "               peak RSS   wall ms\n";
  for (const auto& b : r.backlog) {
    out << fmt::format("  {:<9}", b.mode);
    if (!b.ok) {
      out << "failed: " << b.error << "\n";
      continue;
    }
    std::string threads;
    for (const auto& t : b.threads) threads += (threads.empty() ? "" : ",") + t;
    out << fmt::format("{:>10.2f}{:>8.2f}{:>8.2f}{:>9}{:>10.1f} ({:>5.1f}){:>12.1f} ms  {:<18}"
                       "{:>11}{:>10.0f}\n",
                       b.gap_p50_ms, b.gap_p99_ms, b.gap_max_ms, b.purges, b.purge_ms,
                       b.purge_max_ms, b.purge_on_gpu_thread_ms, threads.empty() ? "-" : threads,
                       format_bytes(b.peak_rss), b.wall_ms);
  }
  out << "  gap: end of one partition's kernels to the start of the next's on the GPU worker.\n"
         "  off: purge requests only counted; message: the memory manager purges the named arena\n"
         "  on its own thread (blocking its mailbox and that arena's allocations, never the worker);\n"
         "  inline: the worker purges every arena after each partition (the trim this replaces).\n";

  if (r.bandwidth) {
    const auto& b = *r.bandwidth;
    auto gbps = [](const std::optional<double>& v) { return v ? fixed(*v, 1) + " GB/s" : std::string("-"); };
    out << "\nUpload bandwidth, " << format_bytes(b.bytes) << " host to device:\n"
        << "  pool block (" << (b.pool_pinned ? "pinned in " + fixed(b.pin_ms) + " ms" : "NOT pinned")
        << "): " << gbps(b.pool_gbps) << "\n  pageable arena buffer: " << gbps(b.pageable_gbps)
        << "\n  cudaHostAlloc (pinned reference): " << gbps(b.host_alloc_gbps) << "\n";
    if (b.pool_gbps && b.host_alloc_gbps && *b.host_alloc_gbps > 0)
      out << "  pool / pinned = " << fixed(100 * *b.pool_gbps / *b.host_alloc_gbps, 0)
          << "% (target >= 80%)\n";
    if (!b.note.empty()) out << "  note: " << b.note << "\n";
  }
}

void add_memory_bench(registry& benches) {
  auto o = std::make_shared<memory_bench_options>();
  auto sizes = std::make_shared<std::array<std::string, 3>>();  // bytes, chunk, pool
  CLI::App& app = benches.add(
      "memory",
      "Purge time per GiB of one jemalloc arena vs glibc's trim of every arena, hand-off gaps with "
      "purges off / by message / inline under a backlog, and (GPU) upload bandwidth",
      [o, sizes](std::ostream& out, std::ostream& err) {
        auto size = [&](const std::string& text, uint64_t& into) {
          if (!text.empty()) into = *memory::parse_size(text);
        };
        size((*sizes)[0], o->bytes);
        size((*sizes)[1], o->chunk);
        size((*sizes)[2], o->pool);
        spdlog::set_level(spdlog::level::warn);  // the tables say it all
        if (o->chunk > o->bytes) {
          err << "proofline bench memory: --chunk is larger than --bytes\n";
          return exit_usage;
        }
        auto report = run_memory_bench(*o, err);
        print_memory_bench(out, report);
        if (!o->json.empty()) {
          std::ofstream j(o->json);
          j << report.json() << "\n";
          if (!j) {
            err << "proofline bench memory: cannot write " << o->json << "\n";
            return exit_failed;
          }
        }
        return report.ok() ? exit_ok : exit_failed;
      });
  CLI::Validator size_check(
      [](std::string& s) -> std::string {
        return memory::parse_size(s) ? std::string() : "expected a size (64K, 128M, 4G), got " + s;
      },
      "SIZE", "size");
  app.add_option("--bytes", (*sizes)[0],
                 "Heap for purge vs trim, and the upload size on a GPU (default 128M; 4G on the "
                 "GPU host)")
      ->check(size_check);
  app.add_option("--chunk", (*sizes)[1], "Block size of that heap (default 64K)")->check(size_check);
  app.add_option("--partitions", o->partitions, "Backlog length")
      ->check(CLI::Range(2u, 100000u))
      ->capture_default_str();
  app.add_option("--log-domain", o->log_domain, "Backlog partition size: a 2^N domain")
      ->check(CLI::Range(4u, 28u))
      ->capture_default_str();
  app.add_option("--prove-ms", o->prove_ms, "Simulated kernel time per partition, ms")
      ->check(CLI::Range(0u, 60000u))
      ->capture_default_str();
  app.add_option("--backend", o->backend,
                 "Backlog backend: auto (cuda-upload when a GPU is visible, else cpu-like), "
                 "cpu-like, cuda-upload")
      ->check(CLI::IsMember({"auto", "cpu-like", "cuda-upload"}))
      ->capture_default_str();
  app.add_option("--pool", (*sizes)[2],
                 "Pinned pool for the backlog's witness and a, b, c (default: none, pageable)")
      ->check(size_check);
  app.add_option("--device", o->device, "CUDA device")->capture_default_str();
  app.add_option("--repeats", o->repeats, "Timed copies per bandwidth figure (median)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  app.add_option("--trim-baseline", o->trim_baseline,
                 "The glibc helper (default: proofline-trim-baseline beside this executable)");
  app.add_option("--json", o->json, "Write the figures as JSON to this file")->type_name("FILE");
}

}  // namespace proofline::bench
