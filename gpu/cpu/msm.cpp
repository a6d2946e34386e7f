#include "gpu/cpu/msm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::gpu::cpu {

namespace {

/// Largest window: 2^15 buckets of a G2 affine point and its XYZZ side sum
/// ((2 + 4) * 2 * 48 bytes on BLS12-381) are 18 MiB per task.
constexpr unsigned max_window = 16;
static_assert(max_window + 1 <= 32, "a digit is read with bigint::bits (at most 32 bits)");

/// Windows of c bits needed so that the top window's top bit is above every
/// scalar bit: the Booth recoding then needs no final carry.
inline unsigned window_count(unsigned bits, unsigned c) { return bits / c + 1; }

/// The signed digit of window w: its c bits, plus the top bit of the window
/// below, minus 2^c when its own top bit is set. Lies in [-2^(c-1), 2^(c-1)].
template <unsigned N>
inline int32_t digit(const zk::ff::bigint<N>& k, unsigned w, unsigned c) {
  uint32_t v = w == 0 ? k.bits(0, c) << 1 : k.bits(w * c - 1, c + 1);
  int32_t raw = int32_t(v >> 1);
  int32_t d = raw + int32_t(v & 1);
  if (raw >> (c - 1)) d -= int32_t(1) << c;
  return d;
}

/// Work of one (window, slice) task of n points, in bucket additions: n
/// batched affine additions (about 6 products each), then the running sum
/// over 2^(c-1) buckets, a mixed and a full XYZZ addition each (about 24
/// products, so 4 bucket additions' worth).
inline double task_cost(double n, unsigned c) {
  return n + 4.0 * double(std::size_t(1) << (c - 1));
}

/// Work of one thread-count: rounds of tasks times the cost of a task.
inline double split_cost(std::size_t n, unsigned windows, unsigned c, unsigned slices,
                         unsigned threads) {
  double rounds = double((windows * slices + threads - 1) / threads);
  return rounds * task_cost(double(n) / slices, c);
}

/// One task's buckets, filled with batched affine additions.
///
/// A point for a bucket that holds nothing becomes the bucket. Otherwise the
/// addition waits in a batch; a batch holds at most one addition per bucket
/// and is done as a whole when full: the denominators x_P - x_Q of all its
/// additions are inverted together (Montgomery's trick: one inversion and
/// 3 products per element), then each bucket Q becomes Q + P by the affine
/// chord rule (lambda = (y_P - y_Q) / (x_P - x_Q), 2M + 1S). Per addition
/// that is about 5M + 1S, against 8M + 2S for the XYZZ mixed addition.
/// An addition that cannot wait (its bucket already has one in this batch)
/// or has no chord (x_P = x_Q: a doubling or P + (-P)) goes into the
/// bucket's XYZZ side sum instead, so a bucket that many points share
/// (scalars of 0/1 witnesses all land in one bucket of window 0) costs no
/// more than an XYZZ bucket. With a batch of 0 (too few buckets for batches
/// worth their inversion) every addition goes to the side sums.
template <class G>
class affine_buckets {
 public:
  using field = typename G::field;
  using affine = zk::ec::affine<G>;
  using xyzz = zk::ec::xyzz<G>;

  affine_buckets(std::size_t buckets, std::size_t batch)
      : point_(buckets, affine::infinity()), round_of_(buckets, 0),
        side_(buckets, xyzz::infinity()), batch_(batch), pending_(batch), den_(batch),
        prefix_(batch) {}

  /// bucket[k] += (negate ? -p : p); p is not the point at infinity and
  /// stays where it is until flush().
  void add(std::size_t k, const affine& p, bool negate) {
    if (point_[k].is_infinity()) {  // an empty bucket (a chord sum never is (0, 0))
      point_[k] = negate ? -p : p;
      return;
    }
    if (batch_ == 0 || round_of_[k] == round_ || point_[k].x == p.x) {
      side_[k] = side_[k].add_affine(negate ? -p : p);
      return;
    }
    round_of_[k] = round_;
    den_[count_] = p.x - point_[k].x;
    pending_[count_++] = {k, &p, negate};
    if (count_ == batch_) flush();
  }

  /// Does the additions still waiting.
  void flush() {
    if (count_ == 0) return;
    // prefix_[j] = den_[0] * ... * den_[j]; one inversion of the product.
    prefix_[0] = den_[0];
    for (std::size_t j = 1; j < count_; ++j) prefix_[j] = prefix_[j - 1] * den_[j];
    field inv = prefix_[count_ - 1].inverse();
    for (std::size_t j = count_; j-- > 0;) {
      // here inv = (den_[0] * ... * den_[j])^-1
      field inv_j = inv;
      if (j != 0) {
        inv_j = inv * prefix_[j - 1];
        inv = inv * den_[j];
      }
      const pending& e = pending_[j];
      affine& q = point_[e.bucket];
      const field py = e.negate ? -e.point->y : e.point->y;
      const field lambda = (py - q.y) * inv_j;
      const field x3 = lambda.sqr() - q.x - e.point->x;
      q.y = lambda * (q.x - x3) - q.y;
      q.x = x3;
    }
    count_ = 0;
    ++round_;
  }

  /// sum_k (k + 1) bucket[k], as a running sum from the top bucket down.
  /// Call flush() first.
  xyzz weighted_sum() const {
    xyzz running = xyzz::infinity(), sum = xyzz::infinity();
    for (std::size_t k = point_.size(); k-- > 0;) {
      if (!point_[k].is_infinity()) running = running.add_affine(point_[k]);
      if (!side_[k].is_infinity()) running += side_[k];
      sum += running;
    }
    return sum;
  }

 private:
  struct pending {
    std::size_t bucket;
    const affine* point;
    bool negate;
  };
  std::vector<affine> point_;  ///< (0, 0): empty
  std::vector<uint32_t> round_of_;  ///< the batch that last took bucket k
  std::vector<xyzz> side_;
  std::size_t batch_, count_ = 0;
  uint32_t round_ = 1;
  std::vector<pending> pending_;
  std::vector<field> den_, prefix_;
};

/// Additions that share one inversion: enough that the inversion (a few
/// hundred products) is a small share of the batch, few enough that the
/// batch's buckets rarely collide and its arrays stay in cache. 0 (no
/// batches, XYZZ additions only) below min_batch: a batch of a handful of
/// additions would pay an inversion for each few, and with so few buckets
/// (small scalars: 0/1 witnesses give 1 window of 2 buckets) nearly every
/// addition collides with one already waiting.
constexpr std::size_t min_batch = 16;
inline std::size_t batch_size(std::size_t buckets) {
  const std::size_t b = std::min<std::size_t>(1024, buckets / 4);
  return b < min_batch ? 0 : b;
}

}  // namespace

unsigned msm_window_bits(std::size_t n, unsigned bits) {
  if (bits == 0) return 1;
  unsigned best = 1;
  double best_cost = 0;
  for (unsigned c = 1; c <= max_window; ++c) {
    double cost = double(window_count(bits, c)) * task_cost(double(n), c);
    if (c == 1 || cost < best_cost) best = c, best_cost = cost;
  }
  return best;
}

template <class G, unsigned N>
zk::ec::jacobian<G> msm(const zk::ec::affine<G>* points, const zk::ff::bigint<N>* scalars,
                        std::size_t n, base::thread_pool& pool) {
  using jacobian = zk::ec::jacobian<G>;
  if (n == 0) return jacobian::infinity();

  // The longest scalar decides how many windows there are.
  std::atomic<unsigned> bits{0};
  pool.for_range(n, 1 << 14, [&](std::size_t b, std::size_t e) {
    unsigned local = 0;
    for (std::size_t i = b; i < e; ++i) local = std::max(local, scalars[i].bit_length());
    unsigned seen = bits.load();
    while (local > seen && !bits.compare_exchange_weak(seen, local)) {
    }
  });
  if (bits == 0) return jacobian::infinity();

  const unsigned c = msm_window_bits(n, bits);
  const unsigned windows = window_count(bits, c);
  const std::size_t buckets = std::size_t(1) << (c - 1);

  // Slices of the points per window, so that every thread has work.
  const unsigned threads = pool.size();
  unsigned slices = 1;
  for (unsigned k = 2; k <= 16 && k <= n; ++k)
    if (split_cost(n, windows, c, k, threads) < split_cost(n, windows, c, slices, threads))
      slices = k;
  const std::size_t per_slice = (n + slices - 1) / slices;

  std::vector<jacobian> partial(std::size_t(windows) * slices, jacobian::infinity());
  pool.for_each(partial.size(), [&](std::size_t task) {
    const unsigned w = unsigned(task / slices);
    const std::size_t lo = (task % slices) * per_slice, hi = std::min(n, lo + per_slice);
    affine_buckets<G> bucket(buckets, batch_size(buckets));
    for (std::size_t i = lo; i < hi; ++i) {
      const int32_t d = digit(scalars[i], w, c);
      if (d == 0 || points[i].is_infinity()) continue;
      if (d > 0)
        bucket.add(std::size_t(d - 1), points[i], false);
      else
        bucket.add(std::size_t(-d - 1), points[i], true);
    }
    bucket.flush();
    partial[task] = bucket.weighted_sum().to_jacobian();
  });

  // Horner over windows: total = sum_w 2^(c w) window_w.
  jacobian total = jacobian::infinity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned i = 0; i < c; ++i) total = total.dbl();
    for (unsigned k = 0; k < slices; ++k) total += partial[std::size_t(w) * slices + k];
  }
  return total;
}

#define PROOFLINE_INSTANTIATE_MSM(G)                                                               \
  template zk::ec::jacobian<G> msm<G, 4>(const zk::ec::affine<G>*, const zk::ff::bigint<4>*,     \
                                          std::size_t, base::thread_pool&);

PROOFLINE_INSTANTIATE_MSM(zk::bn254::g1_group)
PROOFLINE_INSTANTIATE_MSM(zk::bn254::g2_group)
PROOFLINE_INSTANTIATE_MSM(zk::bls12_381::g1_group)
PROOFLINE_INSTANTIATE_MSM(zk::bls12_381::g2_group)

#undef PROOFLINE_INSTANTIATE_MSM

}  // namespace proofline::gpu::cpu
