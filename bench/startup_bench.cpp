// `proofline bench key-read ZKEY... [--witness WTNS]`: how fast proving keys
// and witnesses are read, the host part of start-up. Each key is loaded with
// zk::formats::load_zkey (every point checked, as `run` loads it) --runs
// times after --warmup untimed loads, so the file comes from the page cache;
// the figure is the median, in seconds and in GB/s of file bytes; one key is
// in memory at a time. A witness of the last key is read with read_witness
// on --threads threads and on one, into a freshly allocated buffer each run,
// as a synthesizer reads it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/parallel.hpp"
#include "bench/registry.hpp"
#include "zk/curves.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"

namespace proofline::bench {

namespace {

struct key_read_options {
  std::vector<std::string> keys;
  std::string witness;  ///< read against the last key
  unsigned threads = 0;
  unsigned runs = 3;
  unsigned warmup = 1;
  std::string json;  ///< JSON lines, one object per file
};

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

/// Median seconds of `runs` calls of f after `warmup` untimed ones.
template <class F>
double time_median(unsigned warmup, unsigned runs, F&& f) {
  for (unsigned i = 0; i < warmup; ++i) f();
  std::vector<double> s;
  for (unsigned i = 0; i < runs; ++i) {
    auto t0 = clock_type::now();
    f();
    s.push_back(seconds_since(t0));
  }
  return median(s);
}

/// Seconds to read `path` as a witness of `key` on `threads` threads.
double time_witness(const key_read_options& o, const zk::groth16::key_ptr& key, unsigned threads) {
  return zk::visit_curve(key->info.curve, [&](auto curve) {
    using C = decltype(curve);
    using scalar = typename C::scalar;
    return time_median(o.warmup, o.runs, [&] {
      // new[] of a trivial type leaves the pages untouched, as a fresh
      // partition buffer is.
      std::unique_ptr<scalar[]> out(new scalar[key->info.n_vars]);
      zk::formats::read_witness<C>(o.witness, *key, out.get(), threads);
    });
  });
}

int run_key_read(const key_read_options& o, std::ostream& out, std::ostream& err) {
  const unsigned threads = o.threads ? o.threads : base::hardware_threads();
  std::ofstream json;
  if (!o.json.empty()) {
    json.open(o.json, std::ios::trunc);
    if (!json) {
      err << "proofline bench key-read: cannot write " << o.json << "\n";
      return exit_failed;
    }
  }
  out << "key read: " << threads << " threads, median of " << o.runs << " runs after " << o.warmup
      << " warm-up\n";
  zk::groth16::key_ptr last;
  try {
    for (const auto& path : o.keys) {
      const uint64_t bytes = file_bytes(path);
      zk::groth16::key_ptr key;
      last.reset();  // one key in memory at a time
      std::vector<double> times;
      for (unsigned i = 0; i < o.warmup + o.runs; ++i) {
        key.reset();  // freed outside the timed load
        const auto t0 = clock_type::now();
        key = zk::formats::load_zkey(path, threads);
        if (i >= o.warmup) times.push_back(seconds_since(t0));
      }
      const double s = median(times);
      const double gbps = bytes / s / 1e9;
      out << "  " << path << ": " << bytes << " bytes, 2^" << key->info.log_domain << " "
          << zk::to_string(key->info.curve) << ", " << s << " s, " << gbps << " GB/s\n";
      if (json)
        json << nlohmann::json{{"what", "key-read"}, {"file", path}, {"bytes", bytes},
                               {"log_domain", key->info.log_domain},
                               {"curve", zk::to_string(key->info.curve)}, {"threads", threads},
                               {"seconds", s}, {"gb_per_s", gbps}}
                    .dump()
             << "\n";
      last = key;
    }
    if (!o.witness.empty() && last) {
      const uint64_t bytes = file_bytes(o.witness);
      for (unsigned t : {threads, 1u}) {
        const double s = time_witness(o, last, t);
        out << "  " << o.witness << ": " << bytes << " bytes on " << t << " thread"
            << (t == 1 ? "" : "s") << ", " << s * 1e3 << " ms, " << bytes / s / 1e9 << " GB/s\n";
        if (json)
          json << nlohmann::json{{"what", "witness-read"}, {"file", o.witness}, {"bytes", bytes},
                                 {"threads", t}, {"seconds", s}, {"gb_per_s", bytes / s / 1e9}}
                      .dump()
               << "\n";
        if (t == 1) break;
      }
    }
  } catch (const std::exception& e) {
    err << "proofline bench key-read: " << e.what() << "\n";
    return exit_failed;
  }
  if (json && !json.good()) {
    err << "proofline bench key-read: writing " << o.json << " failed\n";
    return exit_failed;
  }
  return exit_ok;
}

}  // namespace

void add_startup_bench(registry& benches) {
  auto o = std::make_shared<key_read_options>();
  CLI::App& app = benches.add(
      "key-read",
      "Reading proving keys (every point checked, as run loads them) and a witness, from the "
      "page cache: seconds and GB/s",
      [o](std::ostream& out, std::ostream& err) { return run_key_read(*o, out, err); });
  app.add_option("keys", o->keys, "snarkjs .zkey files")->required()->check(CLI::ExistingFile);
  app.add_option("--witness", o->witness, "A .wtns of the last key, read on --threads and on 1")
      ->check(CLI::ExistingFile);
  app.add_option("--threads", o->threads, "Threads (0 = all)")->capture_default_str();
  app.add_option("--runs", o->runs, "Timed runs; the figure is their median")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  app.add_option("--warmup", o->warmup, "Untimed runs first (they fill the page cache)")
      ->capture_default_str();
  app.add_option("--json", o->json, "Write one JSON object per file (JSON lines) to FILE")
      ->type_name("FILE");
}

}  // namespace proofline::bench
