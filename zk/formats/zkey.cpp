// Reading snarkjs Groth16 proving keys. The section table is read first and
// every section's size checked against the header, so nothing large is read
// from a file whose layout is wrong. Point sections are read straight into
// the key's vectors (the file's byte layout is the in-memory layout of
// affine<G> on a little-endian host: x then y, limbs little-endian, Montgomery
// form with R = 2^(8 n8q) = 2^(64 N)); the coefficients and the points of
// every section are read in chunks by one pool of threads (positioned reads,
// no shared file offset) straight to their final place, each job checking
// what it read.
#include "zk/formats/zkey.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "base/parallel.hpp"
#include "zk/formats/binfile.hpp"
#include "zk/formats/primes.hpp"

namespace proofline::zk::formats {

namespace {

using detail::input_file;
using detail::section;
using groth16::key_info;

constexpr char zkey_magic[4] = {'z', 'k', 'e', 'y'};
constexpr uint32_t zkey_version = 1;
constexpr uint32_t groth16_protocol = 1;

enum section_id : uint32_t {
  sec_header = 1,
  sec_groth16 = 2,
  sec_ic = 3,
  sec_coefs = 4,
  sec_a = 5,
  sec_b1 = 6,
  sec_b2 = 7,
  sec_c = 8,
  sec_h = 9,
  last_required_section = sec_h,
};

/// Section names as messages print them; nullptr past the Groth16 sections.
const char* section_name(uint32_t id) {
  static const char* const names[] = {nullptr,        "header",   "Groth16 header", "IC points",
                                      "coefficients", "A points", "B1 points",      "B2 points",
                                      "C points",     "H points"};
  return id <= last_required_section ? names[id] : nullptr;
}

std::string section_label(uint32_t id) {
  return "section " + std::to_string(id) + " (" + section_name(id) + ")";
}

/// Protocol ids snarkjs writes in section 1.
const char* protocol_name(uint32_t p) {
  switch (p) {
    case 1: return "Groth16";
    case 2: return "PLONK";
    case 10: return "FFLONK";
    default: return "unknown";
  }
}

/// A coefficient entry: matrix, constraint, signal (u32 each), then the value.
constexpr uint64_t coef_prefix_bytes = 12;
/// Coefficient entries parsed per read: 2^14 entries, 704 KiB for n8r = 32,
/// so a read is parsed while it is still in the core's cache.
constexpr uint64_t coefs_per_read = uint64_t(1) << 14;
/// Below this many points per thread, starting a thread costs more than it saves.
constexpr std::size_t min_points_per_thread = 4096;
/// Largest n8q / n8r accepted before the primes are compared (real keys use
/// 32 or 48); it keeps a corrupt size field from driving the reads of section 2.
constexpr uint32_t max_field_bytes = 1024;

/// The checked header and where each required section lies.
struct zkey_layout {
  key_info info;
  section sec[last_required_section + 1];
  std::vector<unsigned char> groth16_header;  ///< contents of section 2
  uint64_t points_offset = 0;                 ///< of alpha1 inside section 2
};

void expect_size(const input_file& f, uint32_t id, uint64_t actual, uint64_t expected,
                 const std::string& why) {
  if (actual != expected)
    f.fail(section_label(id) + " is " + std::to_string(actual) + " bytes, expected " +
           std::to_string(expected) + why);
}

/// Reads and checks everything but the section contents of 3..9 (and the
/// coefficient count, one u32 of section 4).
zkey_layout read_layout(const input_file& f) {
  detail::container c = detail::read_container(f, zkey_magic, "zkey", section_name);
  if (c.version != zkey_version)
    f.fail("unsupported zkey version " + std::to_string(c.version) + " (proofline reads version " +
           std::to_string(zkey_version) + ")");

  zkey_layout L;
  L.sec[sec_header] = c.unique(f, sec_header, section_name(sec_header));
  expect_size(f, sec_header, L.sec[sec_header].size, 4, " (the protocol id)");
  uint32_t protocol = f.read_u32(L.sec[sec_header].offset);
  if (protocol != groth16_protocol)
    f.fail("unsupported protocol " + std::to_string(protocol) + " (" + protocol_name(protocol) +
           "); proofline proves Groth16 (protocol 1)");

  // Section 2: n8q, q, n8r, r, nVars, nPublic, domainSize, then alpha1 (G1),
  // beta1 (G1), beta2 (G2), gamma2 (G2), delta1 (G1), delta2 (G2).
  const section& s2 = L.sec[sec_groth16] = c.unique(f, sec_groth16, section_name(sec_groth16));
  auto need = [&](uint64_t bytes) {
    if (s2.size < bytes)
      f.fail(section_label(sec_groth16) + " is " + std::to_string(s2.size) +
             " bytes, too short for its fields (at least " + std::to_string(bytes) + ")");
  };
  need(4);
  uint32_t n8q = f.read_u32(s2.offset);
  if (n8q == 0 || n8q > max_field_bytes)
    f.fail("unsupported base field size n8q = " + std::to_string(n8q) + " bytes");
  need(8ull + n8q);
  uint32_t n8r = f.read_u32(s2.offset + 4 + n8q);
  if (n8r == 0 || n8r > max_field_bytes)
    f.fail("unsupported scalar field size n8r = " + std::to_string(n8r) + " bytes");
  const uint64_t g1_bytes = 2ull * n8q, g2_bytes = 4ull * n8q;
  const uint64_t fixed = 4ull + n8q + 4 + n8r + 3 * 4;
  expect_size(f, sec_groth16, s2.size, fixed + 3 * g1_bytes + 3 * g2_bytes,
              " for n8q = " + std::to_string(n8q) + ", n8r = " + std::to_string(n8r));
  L.groth16_header.resize(s2.size);
  f.read(s2.offset, L.groth16_header.data(), s2.size);
  const unsigned char* h = L.groth16_header.data();
  const unsigned char* q = h + 4;
  const unsigned char* r = h + 8 + n8q;

  key_info& info = L.info;
  bool known = false;
  auto detect = [&](auto curve) {
    using C = decltype(curve);
    if (!detail::is_modulus<typename C::fq>(q, n8q)) return;
    if (!detail::is_modulus<typename C::fr>(r, n8r))
      f.fail("unsupported prime r = " + detail::bytes_to_decimal(r, n8r) + " with the " +
             detail::display_name(C::id) + " base field q; expected the " +
             detail::display_name(C::id) + " scalar field");
    info.curve = C::id;
    known = true;
  };
  detect(bn254{});
  detect(bls12_381{});
  if (!known)
    f.fail("unsupported prime q = " + detail::bytes_to_decimal(q, n8q) + " (" +
           std::to_string(n8q) + " bytes); proofline supports BN254 and BLS12-381");

  info.n8q = n8q;
  info.n8r = n8r;
  const unsigned char* counts = h + 8 + n8q + n8r;
  std::memcpy(&info.n_vars, counts, 4);
  std::memcpy(&info.n_public, counts + 4, 4);
  std::memcpy(&info.domain_size, counts + 8, 4);
  L.points_offset = fixed;

  if (uint64_t(info.n_public) + 1 > info.n_vars)
    f.fail("header says " + std::to_string(info.n_public) + " public signals but only " +
           std::to_string(info.n_vars) + " variables (need nPublic + 1 <= nVars)");
  const uint32_t n = info.domain_size;
  if (n == 0 || (n & (n - 1)) != 0)
    f.fail("domain size " + std::to_string(n) + " is not a power of two");
  info.log_domain = 0;
  while ((uint32_t(1) << info.log_domain) < n) ++info.log_domain;
  const unsigned two_adicity = info.curve == curve_id::bn254 ? bn254::fr::params::two_adicity
                                                             : bls12_381::fr::params::two_adicity;
  if (info.log_domain > two_adicity)
    f.fail("domain size 2^" + std::to_string(info.log_domain) + " exceeds the " +
           detail::display_name(info.curve) + " scalar field's 2-adicity " +
           std::to_string(two_adicity));

  for (uint32_t id = sec_ic; id <= last_required_section; ++id)
    L.sec[id] = c.unique(f, id, section_name(id));

  const uint64_t n_vars = info.n_vars, n_private = info.n_private();
  expect_size(f, sec_ic, L.sec[sec_ic].size, (info.n_public + 1ull) * g1_bytes,
              " for " + std::to_string(info.n_public + 1ull) + " IC points (" +
                  std::to_string(info.n_public) + " public signals + 1)");
  const section& s4 = L.sec[sec_coefs];
  if (s4.size < 4)
    f.fail(section_label(sec_coefs) + " is " + std::to_string(s4.size) +
           " bytes, too short for its coefficient count");
  info.n_coefs = f.read_u32(s4.offset);
  expect_size(f, sec_coefs, s4.size, 4 + info.n_coefs * (coef_prefix_bytes + n8r),
              " for " + std::to_string(info.n_coefs) + " coefficients of " +
                  std::to_string(coef_prefix_bytes + n8r) + " bytes");
  const std::string for_vars = " for " + std::to_string(n_vars) + " variables";
  expect_size(f, sec_a, L.sec[sec_a].size, n_vars * g1_bytes, for_vars);
  expect_size(f, sec_b1, L.sec[sec_b1].size, n_vars * g1_bytes, for_vars);
  expect_size(f, sec_b2, L.sec[sec_b2].size, n_vars * g2_bytes, for_vars);
  expect_size(f, sec_c, L.sec[sec_c].size, n_private * g1_bytes,
              " for " + std::to_string(n_private) + " private variables (nVars " +
                  std::to_string(n_vars) + " - nPublic " + std::to_string(info.n_public) + " - 1)");
  expect_size(f, sec_h, L.sec[sec_h].size, uint64_t(n) * g1_bytes,
              " for domain size " + std::to_string(n));
  return L;
}

// ---- field and point checks ------------------------------------------------

template <class P>
bool canonical(const ff::fp<P>& x) {
  return x.montgomery_limbs() < ff::fp<P>::modulus();
}
template <class F>
bool canonical(const ff::fp2<F>& x) {
  return canonical(x.c0) && canonical(x.c1);
}

/// Every coordinate below q and the point on the curve (or all zero: infinity).
template <class A>
bool point_ok(const A& p) {
  return canonical(p.x) && canonical(p.y) && p.is_on_curve();
}

/// Throws the message for a point that failed point_ok.
template <class C, class A>
[[noreturn]] void fail_point(const input_file& f, const A& p, const std::string& what,
                             const char* group) {
  if (!canonical(p.x) || !canonical(p.y))
    f.fail(what + " has a coordinate not below the " + detail::display_name(C::id) +
           " base field prime");
  f.fail(what + " is not on the " + detail::display_name(C::id) + " " + group + " curve");
}

template <class C, class A>
constexpr const char* group_name() {
  return std::is_same_v<A, typename C::g1_affine> ? "G1" : "G2";
}

// ---- parallel reading ------------------------------------------------------

/// Points read and checked by one job: 2^14 points (1 MiB of BN254 G1), so a
/// job checks what it read while it is still in the core's cache, and the
/// jobs of all sections spread evenly over the threads.
constexpr std::size_t points_per_job = std::size_t(1) << 14;

/// Adds jobs that read points [0, count) of section `id` into `out` (already
/// `count` long) and check them, one chunk each; a job throws the message of
/// the first bad point of its chunk, so the earliest failing job names the
/// first bad point of the section.
template <class C, class A>
void add_point_jobs(std::vector<std::function<void()>>& jobs, const input_file& f,
                    const section& s, uint32_t id, std::size_t count,
                    groth16::key_vector<A>& out) {
  static_assert(std::is_trivially_copyable_v<A>);
  for (std::size_t b = 0; b < count; b += points_per_job) {
    const std::size_t e = std::min(count, b + points_per_job);
    jobs.push_back([&f, &s, &out, id, b, e] {
      f.read(s.offset + b * sizeof(A), out.data() + b, (e - b) * sizeof(A));
      for (std::size_t i = b; i < e; ++i)
        if (!point_ok(out[i]))
          fail_point<C>(f, out[i], "point " + std::to_string(i) + " of " + section_label(id),
                        group_name<C, A>());
    });
  }
}

/// Reads coefficients [first, first + n) of section 4 into this thread's
/// scratch buffer, checks each, and calls sink(matrix, coef) for each in
/// file order; throws the message of the first bad one.
template <class C, class Sink>
void parse_coefs(const input_file& f, const section& s, const key_info& info, uint64_t first,
                 uint64_t n, Sink&& sink) {
  using fr = typename C::fr;
  static_assert(sizeof(fr) == C::fr_bytes);
  const uint64_t entry = coef_prefix_bytes + C::fr_bytes;
  const auto r = fr::modulus();
  thread_local std::vector<unsigned char> buf;
  buf.resize(n * entry);
  f.read(s.offset + 4 + first * entry, buf.data(), n * entry);
  for (uint64_t i = 0; i < n; ++i) {
    const unsigned char* p = buf.data() + i * entry;
    uint32_t matrix;
    groth16::coef<C> c;
    std::memcpy(&matrix, p, 4);
    std::memcpy(&c.constraint, p + 4, 4);
    std::memcpy(&c.signal, p + 8, 4);
    std::memcpy(c.value.l, p + coef_prefix_bytes, C::fr_bytes);
    auto where = [&] {
      return "coefficient " + std::to_string(first + i) + " of " + section_label(sec_coefs) + ": ";
    };
    if (matrix > 1)
      f.fail(where() + "matrix " + std::to_string(matrix) + ", expected 0 (A) or 1 (B)");
    if (c.constraint >= info.domain_size)
      f.fail(where() + "constraint " + std::to_string(c.constraint) +
             " is not below the domain size " + std::to_string(info.domain_size));
    if (c.signal >= info.n_vars)
      f.fail(where() + "signal " + std::to_string(c.signal) + " is not below nVars " +
             std::to_string(info.n_vars));
    if (!(c.value.montgomery_limbs() < r))
      f.fail(where() + "value is not below the " + detail::display_name(C::id) +
             " scalar field prime");
    sink(matrix, c);
  }
}

/// The coefficient chunks of section 4: chunk j holds coefficients
/// [j * coefs_per_read, ...). Reading them takes two passes over the section
/// (it is in the page cache after the first): the first checks every entry and
/// counts each chunk's A's, so the second writes every chunk straight to its
/// final place in coefs_a and coefs_b, on any thread, with no copy between.
struct coef_plan {
  uint64_t chunks = 0;
  std::vector<uint64_t> a_before;  ///< A's in chunks [0, j); a_before[chunks] = all A's
};

template <class C>
std::vector<std::function<void()>> count_coef_jobs(const input_file& f, const section& s,
                                                   const key_info& info, coef_plan& plan) {
  plan.chunks = (info.n_coefs + coefs_per_read - 1) / coefs_per_read;
  plan.a_before.assign(plan.chunks + 1, 0);
  std::vector<std::function<void()>> jobs;
  for (uint64_t j = 0; j < plan.chunks; ++j) {
    const uint64_t first = j * coefs_per_read;
    const uint64_t n = std::min<uint64_t>(coefs_per_read, info.n_coefs - first);
    jobs.push_back([&f, &s, &info, &plan, j, first, n] {
      uint64_t a = 0;
      parse_coefs<C>(f, s, info, first, n, [&](uint32_t matrix, const groth16::coef<C>&) {
        a += matrix == 0;
      });
      plan.a_before[j + 1] = a;  // made a running sum once every chunk is counted
    });
  }
  return jobs;
}

template <class C>
std::vector<std::function<void()>> place_coef_jobs(const input_file& f, const section& s,
                                                   const key_info& info, const coef_plan& plan,
                                                   groth16::proving_key<C>& key) {
  std::vector<std::function<void()>> jobs;
  for (uint64_t j = 0; j < plan.chunks; ++j) {
    const uint64_t first = j * coefs_per_read;
    const uint64_t n = std::min<uint64_t>(coefs_per_read, info.n_coefs - first);
    jobs.push_back([&f, &s, &info, &plan, &key, j, first, n] {
      const uint64_t a_end = plan.a_before[j + 1], b_end = first + n - a_end;
      uint64_t a = plan.a_before[j], b = first - a;
      parse_coefs<C>(f, s, info, first, n, [&](uint32_t matrix, const groth16::coef<C>& c) {
        // The file changed between the passes if a chunk's split moved.
        if (matrix == 0 ? a == a_end : b == b_end)
          f.fail(section_label(sec_coefs) + " changed while it was being read");
        (matrix == 0 ? key.coefs_a[a++] : key.coefs_b[b++]) = c;
      });
    });
  }
  return jobs;
}

template <class C>
groth16::key_ptr load_typed(const input_file& f, const zkey_layout& L, unsigned threads) {
  using g1 = typename C::g1_affine;
  using g2 = typename C::g2_affine;
  static_assert(sizeof(g1) == 2 * C::fq_bytes && sizeof(g2) == 4 * C::fq_bytes,
                "affine points must have the file's layout");
  auto key = std::make_shared<groth16::proving_key<C>>();
  key->info = L.info;
  key->path = f.path();

  // Header points, in file order.
  const unsigned char* p = L.groth16_header.data() + L.points_offset;
  auto header_point = [&](auto& dst, const char* name) {
    using A = std::remove_reference_t<decltype(dst)>;
    std::memcpy(&dst, p, sizeof(A));
    p += sizeof(A);
    if (!point_ok(dst))
      fail_point<C>(f, dst, std::string(name) + " in " + section_label(sec_groth16),
                    group_name<C, A>());
  };
  header_point(key->alpha1, "alpha1");
  header_point(key->beta1, "beta1");
  header_point(key->beta2, "beta2");
  header_point(key->gamma2, "gamma2");
  header_point(key->delta1, "delta1");
  header_point(key->delta2, "delta2");

  // The key's arrays are sized without being written (key_vector), so every
  // page is first touched by the thread that reads the file into it, in
  // parallel. Pass 1 checks the coefficients and counts each chunk's A's;
  // pass 2 reads the point sections and places the coefficients, all in one
  // set of jobs with no barrier between sections. Within a pass jobs are
  // listed in file order (coefficients, then sections 3, 5, 6, 7, 8, 9) and
  // the earliest job that fails names the error, so messages are those of a
  // sequential read.
  const key_info& info = L.info;
  key->points_a.resize(info.n_vars);
  key->points_b1.resize(info.n_vars);
  key->points_b2.resize(info.n_vars);
  key->points_c.resize(info.n_private());
  key->points_h.resize(info.domain_size);
  key->ic.resize(info.n_public + std::size_t(1));
  // Small keys do it all on this thread.
  const auto pool = static_cast<unsigned>(std::min<std::size_t>(
      threads, std::max<std::size_t>(1, info.domain_size / min_points_per_thread)));

  coef_plan plan;
  base::run_jobs(count_coef_jobs<C>(f, L.sec[sec_coefs], info, plan), pool);
  for (uint64_t j = 0; j < plan.chunks; ++j) plan.a_before[j + 1] += plan.a_before[j];
  key->coefs_a.resize(plan.a_before[plan.chunks]);
  key->coefs_b.resize(info.n_coefs - plan.a_before[plan.chunks]);

  std::vector<std::function<void()>> jobs =
      place_coef_jobs<C>(f, L.sec[sec_coefs], info, plan, *key);
  add_point_jobs<C>(jobs, f, L.sec[sec_ic], sec_ic, key->ic.size(), key->ic);
  add_point_jobs<C>(jobs, f, L.sec[sec_a], sec_a, info.n_vars, key->points_a);
  add_point_jobs<C>(jobs, f, L.sec[sec_b1], sec_b1, info.n_vars, key->points_b1);
  add_point_jobs<C>(jobs, f, L.sec[sec_b2], sec_b2, info.n_vars, key->points_b2);
  add_point_jobs<C>(jobs, f, L.sec[sec_c], sec_c, info.n_private(), key->points_c);
  add_point_jobs<C>(jobs, f, L.sec[sec_h], sec_h, info.domain_size, key->points_h);
  base::run_jobs(jobs, pool);
  return key;
}

}  // namespace

groth16::key_info read_zkey_info(const std::string& path) {
  input_file f(path);
  return read_layout(f).info;
}

groth16::key_info read_zkey_info(const memory_file& bytes) {
  input_file f(bytes);
  return read_layout(f).info;
}

namespace {

groth16::key_ptr load_from(const input_file& f, unsigned threads) {
  zkey_layout L = read_layout(f);
  if (threads == 0) threads = base::hardware_threads();
  return visit_curve(L.info.curve,
                     [&](auto curve) { return load_typed<decltype(curve)>(f, L, threads); });
}

}  // namespace

groth16::key_ptr load_zkey(const std::string& path, unsigned threads) {
  return load_from(input_file(path), threads);
}

groth16::key_ptr load_zkey(const memory_file& bytes, unsigned threads) {
  return load_from(input_file(bytes), threads);
}

}  // namespace proofline::zk::formats
