#include "zk/dev/keygen.hpp"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "zk/dev/fixed_base.hpp"
#include "zk/dev/output_file.hpp"
#include "zk/groth16/domain.hpp"

namespace proofline::zk::dev {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr char zkey_magic[4] = {'z', 'k', 'e', 'y'};
constexpr uint32_t zkey_version = 1;
constexpr uint32_t zkey_sections = 10;
constexpr uint32_t groth16_protocol = 1;
/// A coefficient entry: matrix, row, signal (u32 each), then the value.
constexpr uint64_t coef_prefix_bytes = 12;
/// Section 10: the 64-byte contribution hash field, and a contribution's
/// transcript hash.
constexpr std::size_t hash_bytes = 64;
/// Contribution parameter id of a name (snarkjs zkey_utils.js).
constexpr unsigned char param_name = 1;

/// Times the steps of one key and hands each to the report.
class stopwatch {
 public:
  explicit stopwatch(const step_report& report) : report_(report), start_(clock_type::now()) {}
  void lap(const std::string& step) {
    const auto now = clock_type::now();
    if (report_) report_(step, std::chrono::duration<double>(now - start_).count());
    start_ = now;
  }

 private:
  const step_report& report_;
  clock_type::time_point start_;
};

/// In place: x[i] = 1 / x[i] for nonzero x[i] (Montgomery's trick, one
/// inversion); `scratch` is resized to n.
template <class F>
void batch_invert(F* x, std::size_t n, std::vector<F>& scratch) {
  scratch.resize(n);
  F acc = F::one();
  for (std::size_t i = 0; i < n; ++i) {
    scratch[i] = acc;
    acc = acc * x[i];
  }
  F inv = acc.inverse();
  for (std::size_t i = n; i-- > 0;) {
    const F xi = x[i];
    x[i] = inv * scratch[i];
    inv = inv * xi;
  }
}

template <class A>
void write_points(output_file& f, uint32_t id, const std::vector<A>& points) {
  f.begin_section(id, points.size() * sizeof(A));
  f.write(points.data(), points.size() * sizeof(A));
  f.end_section();
}

template <class C>
class key_writer {
  using fr = typename C::fr;
  using fq = typename C::fq;
  using g1 = typename C::g1_affine;
  using g2 = typename C::g2_affine;
  using g1_group = typename g1::group;
  using g2_group = typename g2::group;
  static_assert(sizeof(g1) == 2 * C::fq_bytes && sizeof(g2) == 4 * C::fq_bytes,
                "affine points must have the zkey's byte layout");
  static_assert(sizeof(fr) == C::fr_bytes);

 public:
  key_writer(const r1cs<C>& cs, const toxic_waste<C>& tw, base::thread_pool& pool,
             const step_report& report, fixed_base_engine& engine)
      : cs_(cs),
        tw_(tw),
        pool_(pool),
        engine_(engine),
        watch_(report),
        log_n_(cs.log_domain()),
        n_(cs.domain_size()),
        g1_table_(C::g1_generator(), fr::params::bits),
        g2_table_(C::g2_generator(), fr::params::bits) {
    watch_.lap("window tables");
  }

  dev_key<C> write(const std::string& path) {
    compute_scalars();
    output_file f(path);
    f.begin_container(zkey_magic, zkey_version, zkey_sections);
    f.begin_section(1, 4);
    f.u32(groth16_protocol);
    f.end_section();
    write_header(f);
    write_ic(f);
    write_coefficients(f);
    watch_.lap("coefficients");

    std::vector<g1> points(cs_.n_vars);
    engine_.mul(g1_table_, a_.data(), a_.size(), points.data());
    watch_.lap("A points");
    write_points(f, 5, points);
    engine_.mul(g1_table_, b_.data(), b_.size(), points.data());
    watch_.lap("B1 points");
    write_points(f, 6, points);
    {
      std::vector<g2> points2(cs_.n_vars);
      engine_.mul(g2_table_, b_.data(), b_.size(), points2.data());
      watch_.lap("B2 points");
      write_points(f, 7, points2);
    }
    const std::size_t first_private = std::size_t(cs_.n_public) + 1;
    points.resize(cs_.n_vars - first_private);
    engine_.mul(g1_table_, k_.data() + first_private, points.size(), points.data());
    watch_.lap("C points");
    write_points(f, 8, points);
    points.resize(n_);
    engine_.mul(g1_table_, h_.data(), h_.size(), points.data());
    watch_.lap("H points");
    write_points(f, 9, points);
    write_contributions(f);
    f.commit();
    watch_.lap("write");

    dev_key<C> out;
    out.vk = vk_;
    out.domain_size = n_;
    out.n_coefs = n_coefs_;
    out.file_bytes = f.size();
    return out;
  }

 private:
  /// A_s, B_s and K_s = beta A_s + alpha B_s + C_s per variable, and h.
  void compute_scalars() {
    const unsigned two_adicity = fr::params::two_adicity;
    if (log_n_ >= two_adicity)
      throw std::invalid_argument(
          "a domain of 2^" + std::to_string(log_n_) + " rows reaches the " + std::string(C::name) +
          " scalar field's 2-adicity " + std::to_string(two_adicity) +
          "; development setups support up to 2^" + std::to_string(two_adicity - 1) + " rows");
    std::vector<fr> lagrange(n_);
    lagrange_at(tw_.tau, log_n_, 0, 1, n_, lagrange.data(), pool_);
    h_.resize(n_);
    lagrange_at(tw_.tau, log_n_ + 1, 1, 2, n_, h_.data(), pool_);
    const fr delta_inv = tw_.delta.inverse();
    pool_.for_range(n_, 4096, [&](std::size_t b, std::size_t e) {
      for (std::size_t j = b; j < e; ++j) h_[j] = h_[j] * delta_inv;
    });
    watch_.lap("lagrange basis");

    a_.assign(cs_.n_vars, fr::zero());
    b_.assign(cs_.n_vars, fr::zero());
    std::vector<fr> c(cs_.n_vars, fr::zero());
    std::vector<fr>* matrix[3] = {&a_, &b_, &c};
    // One task per matrix: each scatters into its own vector.
    pool_.for_each(3, [&](std::size_t m) {
      std::vector<fr>& out = *matrix[m];
      for (uint32_t row = 0; row < cs_.n_constraints; ++row)
        for (const term<C>* t = cs_.begin(row, unsigned(m)); t != cs_.end(row, unsigned(m)); ++t)
          out[t->signal] += t->coef * lagrange[row];
    });
    // snarkjs's public-input rows: row N + s has A = w_s.
    for (uint32_t s = 0; s <= cs_.n_public; ++s)
      a_[s] += lagrange[std::size_t(cs_.n_constraints) + s];

    const fr gamma_inv = tw_.gamma.inverse();
    k_.resize(cs_.n_vars);
    pool_.for_range(cs_.n_vars, 4096, [&](std::size_t b, std::size_t e) {
      for (std::size_t s = b; s < e; ++s) {
        const fr k = tw_.beta * a_[s] + tw_.alpha * b_[s] + c[s];
        k_[s] = k * (s <= cs_.n_public ? gamma_inv : delta_inv);
      }
    });
    watch_.lap("variable polynomials");
  }

  g1 g1_times(const fr& k) {
    g1 p;
    engine_.mul(g1_table_, &k, 1, &p);
    return p;
  }
  g2 g2_times(const fr& k) {
    g2 p;
    engine_.mul(g2_table_, &k, 1, &p);
    return p;
  }

  void write_header(output_file& f) {
    vk_.n_public = cs_.n_public;
    vk_.alpha1 = g1_times(tw_.alpha);
    vk_.beta2 = g2_times(tw_.beta);
    vk_.gamma2 = g2_times(tw_.gamma);
    vk_.delta2 = g2_times(tw_.delta);
    delta1_ = g1_times(tw_.delta);
    const g1 beta1 = g1_times(tw_.beta);

    const uint64_t size =
        4 + C::fq_bytes + 4 + C::fr_bytes + 3 * 4 + 3 * sizeof(g1) + 3 * sizeof(g2);
    f.begin_section(2, size);
    const auto q = fq::modulus();
    const auto r = fr::modulus();
    f.u32(C::fq_bytes);
    f.write(q.l, C::fq_bytes);
    f.u32(C::fr_bytes);
    f.write(r.l, C::fr_bytes);
    f.u32(cs_.n_vars);
    f.u32(cs_.n_public);
    f.u32(n_);
    f.write(&vk_.alpha1, sizeof(g1));
    f.write(&beta1, sizeof(g1));
    f.write(&vk_.beta2, sizeof(g2));
    f.write(&vk_.gamma2, sizeof(g2));
    f.write(&delta1_, sizeof(g1));
    f.write(&vk_.delta2, sizeof(g2));
    f.end_section();
  }

  void write_ic(output_file& f) {
    vk_.ic.resize(std::size_t(cs_.n_public) + 1);
    engine_.mul(g1_table_, k_.data(), vk_.ic.size(), vk_.ic.data());
    write_points(f, 3, vk_.ic);
  }

  /// Section 4: every A and B entry as c R^2 mod r (one Montgomery product of
  /// the Montgomery form c R with the raw limbs of R^2 gives c R^2).
  void write_coefficients(output_file& f) {
    typename fr::repr r2;
    for (unsigned i = 0; i < fr::N; ++i) r2.l[i] = fr::params::r2(i);
    const fr to_file = fr::from_montgomery_limbs(r2);
    n_coefs_ = cs_.n_public + uint64_t(1);
    for (uint32_t row = 0; row < cs_.n_constraints; ++row)
      n_coefs_ += cs_.end(row, 1) - cs_.begin(row, 0);
    if (n_coefs_ > UINT32_MAX)
      throw std::invalid_argument(std::to_string(n_coefs_) +
                                  " coefficients exceed the zkey's 32-bit count");
    constexpr std::size_t entry_bytes = coef_prefix_bytes + C::fr_bytes;
    f.begin_section(4, 4 + n_coefs_ * entry_bytes);
    f.u32(static_cast<uint32_t>(n_coefs_));
    auto put = [&](unsigned char* entry, uint32_t matrix, uint32_t row, uint32_t signal,
                   const fr& coef) {
      const fr v = coef * to_file;
      std::memcpy(entry, &matrix, 4);
      std::memcpy(entry + 4, &row, 4);
      std::memcpy(entry + 8, &signal, 4);
      std::memcpy(entry + coef_prefix_bytes, v.l, C::fr_bytes);
    };
    // Blocks of rows: entries converted on the pool's threads into a buffer
    // (each row's place from a prefix count of its A and B entries), then
    // written in order.
    constexpr uint32_t block_rows = 1 << 16;
    std::vector<uint64_t> first(block_rows + 1);
    std::vector<unsigned char> buffer;
    for (uint64_t start = 0; start < cs_.n_constraints; start += block_rows) {
      const auto lo = static_cast<uint32_t>(start);
      const uint32_t rows = std::min(block_rows, cs_.n_constraints - lo);
      first[0] = 0;
      for (uint32_t r = 0; r < rows; ++r)
        first[r + 1] = first[r] + uint64_t(cs_.end(lo + r, 1) - cs_.begin(lo + r, 0));
      buffer.resize(first[rows] * entry_bytes);
      pool_.for_range(rows, 1024, [&](std::size_t b, std::size_t e) {
        for (std::size_t r = b; r < e; ++r) {
          const uint32_t row = lo + static_cast<uint32_t>(r);
          unsigned char* entry = buffer.data() + first[r] * entry_bytes;
          for (uint32_t m = 0; m < 2; ++m)
            for (const term<C>* t = cs_.begin(row, m); t != cs_.end(row, m); ++t) {
              put(entry, m, row, t->signal, t->coef);
              entry += entry_bytes;
            }
        }
      });
      f.write(buffer.data(), buffer.size());
    }
    unsigned char entry[entry_bytes];
    for (uint32_t s = 0; s <= cs_.n_public; ++s) {
      put(entry, 0, cs_.n_constraints + s, s, fr::one());
      f.write(entry, entry_bytes);
    }
    f.end_section();
  }

  /// Section 10: the banner where the circuit hash goes, and one contribution
  /// named INSECURE whose points are delta1 (after), G1, delta1 and delta2.
  /// It is not a proof of knowledge of anything: `snarkjs zkey verify` fails
  /// on this key, as it should.
  void write_contributions(output_file& f) {
    const std::string name = insecure_contribution_name;
    const uint64_t params = 2 + name.size();
    const uint64_t size =
        hash_bytes + 4 + 3 * sizeof(g1) + sizeof(g2) + hash_bytes + 4 + 4 + params;
    f.begin_section(10, size);
    unsigned char hash[hash_bytes] = {};
    std::memcpy(hash, insecure_banner,
                std::min<std::size_t>(hash_bytes, std::strlen(insecure_banner)));
    f.write(hash, hash_bytes);
    f.u32(1);  // contributions
    const g1 gen1 = C::g1_generator();
    f.write(&delta1_, sizeof(g1));     // deltaAfter
    f.write(&gen1, sizeof(g1));        // g1_s
    f.write(&delta1_, sizeof(g1));     // g1_sx
    f.write(&vk_.delta2, sizeof(g2));  // g2_spx
    f.write(hash, hash_bytes);         // transcript
    f.u32(0);                          // type: an ordinary contribution
    f.u32(static_cast<uint32_t>(params));
    const unsigned char head[2] = {param_name, static_cast<unsigned char>(name.size())};
    f.write(head, 2);
    f.write(name.data(), name.size());
    f.end_section();
  }

  const r1cs<C>& cs_;
  const toxic_waste<C>& tw_;
  base::thread_pool& pool_;
  fixed_base_engine& engine_;
  stopwatch watch_;
  unsigned log_n_;
  uint32_t n_;
  fixed_base<g1_group> g1_table_;
  fixed_base<g2_group> g2_table_;
  std::vector<fr> a_, b_, k_, h_;
  formats::verification_key<C> vk_;
  g1 delta1_;
  uint64_t n_coefs_ = 0;
};

}  // namespace

template <class F>
void lagrange_at(const F& x, unsigned log_m, uint64_t first, uint64_t stride, std::size_t count,
                 F* out, base::thread_pool& pool) {
  using roots = groth16::roots<F>;
  const F w = roots::root(log_m);
  const uint64_t m = uint64_t(1) << log_m;
  const F vanishing = x.pow(m) - F::one();  // x^m - 1
  if (vanishing.is_zero())
    throw std::domain_error("lagrange_at: the point lies in the 2^" + std::to_string(log_m) +
                            " domain");
  const F scale = vanishing * roots::inverse_size(log_m);  // (x^m - 1) / m
  const F step = w.pow(stride);
  pool.for_range(count, 4096, [&](std::size_t b, std::size_t e) {
    std::vector<F> point(e - b), scratch;
    F p = w.pow(first + stride * b);  // w^(first + stride b)
    for (std::size_t j = b; j < e; ++j) {
      point[j - b] = p;
      out[j] = x - p;
      p = p * step;
    }
    batch_invert(out + b, e - b, scratch);
    for (std::size_t j = b; j < e; ++j) out[j] = out[j] * point[j - b] * scale;
  });
}

template <class C>
dev_key<C> write_dev_zkey(const std::string& path, const r1cs<C>& cs, const toxic_waste<C>& tw,
                          base::thread_pool& pool, const step_report& report,
                          fixed_base_engine* engine) {
  cpu_fixed_base_engine cpu(pool);
  return key_writer<C>(cs, tw, pool, report, engine ? *engine : cpu).write(path);
}

template dev_key<bn254> write_dev_zkey<bn254>(const std::string&, const r1cs<bn254>&,
                                              const toxic_waste<bn254>&, base::thread_pool&,
                                              const step_report&, fixed_base_engine*);
template dev_key<bls12_381> write_dev_zkey<bls12_381>(const std::string&, const r1cs<bls12_381>&,
                                                      const toxic_waste<bls12_381>&,
                                                      base::thread_pool&, const step_report&,
                                                      fixed_base_engine*);
template void lagrange_at<bn254::fr>(const bn254::fr&, unsigned, uint64_t, uint64_t, std::size_t,
                                     bn254::fr*, base::thread_pool&);
template void lagrange_at<bls12_381::fr>(const bls12_381::fr&, unsigned, uint64_t, uint64_t,
                                         std::size_t, bls12_381::fr*, base::thread_pool&);

}  // namespace proofline::zk::dev
