// gpu/cuda/backend/table_builds.hpp: deciding, enqueueing and switching in
// a resident key's window tables.
#include <string>
#include <utility>

#include "gpu/cuda/backend/scratch.hpp"
#include "gpu/cuda/backend/table_builds.hpp"

namespace proofline::gpu::cuda::detail {

namespace {

template <class C>
tables::key_sizes sizes_of(const zk::groth16::key_info& info) {
  tables::key_sizes k;
  k.n_w = info.n_vars;
  k.n_c = info.n_private();
  k.n_h = info.domain_size;
  k.bits = C::fr::params::bits;
  k.g1_bytes = sizeof(typename C::g1_affine);
  k.g2_bytes = sizeof(typename C::g2_affine);
  return k;
}

}  // namespace

table_builds::table_builds(device_budget& budget, const device_clock& clock, table_policy policy,
                           std::size_t lanes)
    : budget_(budget), clock_(clock), policy_(policy), lanes_(lanes),
      stream_(std::make_unique<stream>(stream::low)) {}

template <class A>
void table_builds::table_from(device_buffer<A>& d, const device_buffer<A>& src, const msm::shape& sh,
                              cudaStream_t s) const {
  d = budget_.alloc<A>(src.size() * sh.windows);
  if (src.size() == 0) return;
  CUDA_OK(cudaMemcpyAsync(d.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, s));
  msm_precompute<typename A::group>(sh, d.get(), s);
}

template <class C>
void table_builds::consider(std::unique_lock<std::mutex>& lk, const std::shared_ptr<resident_key<C>>& rk,
                            const proving_key<C>& key) {
  if (policy_ != table_policy::when_paying) return;
  if (!rk->ready || rk->building || rk->points->fixed_base || !rk->counted) return;
  const unsigned bits = C::fr::params::bits;
  const auto& info = key.info;
  tables::inputs in;
  in.costs = tables::estimate(sizes_of<C>(info));
  in.partitions_to_come =
      tables::to_come(rk->hinted, rk->announced, rk->proved - rk->proved_at_hint, rk->proved);
  budget_.sweep();
  in.device_free = budget_.free_bytes();
  const key_shapes plain(info, bits, false), fixed(info, bits, true);
  const std::size_t plain_scratch = scratch_bytes<C>(plain, scratch_needs_of<C>(plain)),
                    fixed_scratch = scratch_bytes<C>(fixed, scratch_needs_of<C>(fixed));
  in.scratch_growth = fixed_scratch > plain_scratch ? (fixed_scratch - plain_scratch) * lanes_ : 0;
  rk->verdict = tables::decide(in);
  if (rk->verdict != tables::verdict::build) {
    rk->stats.tables_note = tables::to_string(rk->verdict);
    return;
  }
  // tables_bytes from the key's own arrays, which the build allocates
  const std::size_t table_bytes = key_bytes(key, key_shapes(info, bits, true));
  rk->building = true;
  rk->bytes += table_bytes;
  budget_.charge(table_bytes);
  rk->stats.tables_note = "building";
  auto src = rk->points;
  lk.unlock();

  auto t = std::make_shared<key_points<C>>();
  auto start = std::make_unique<event>(), end = std::make_unique<event>();
  auto ref = std::make_unique<event>();
  double ref_us = 0;
  std::string error;
  try {
    const key_shapes ks(info, bits, true);
    const cudaStream_t s = stream_->get();
    t->fixed_base = true;
    t->bytes = table_bytes;
    ref_us = clock_.mark(*ref);
    start->record(s);
    table_from(t->a, src->a, ks.w, s);
    table_from(t->b1, src->b1, ks.w, s);
    table_from(t->b2, src->b2, ks.w, s);
    table_from(t->c, src->c, ks.c, s);
    table_from(t->h, src->h, ks.h, s);
    end->record(s);
  } catch (const std::exception& e) {
    error = e.what();
    try {
      stream_->synchronize();  // nothing enqueued may still write into t
    } catch (...) {
    }
  }
  src.reset();

  lk.lock();
  if (!error.empty()) {
    rk->building = false;
    if (rk->counted) {
      rk->bytes -= table_bytes;
      budget_.release(table_bytes);
    }
    rk->stats.tables_note = "table build failed: " + error;
    return;
  }
  rk->built = std::move(t);
  rk->build_start = std::move(start);
  rk->build_end = std::move(end);
  rk->build_ref = std::move(ref);
  rk->build_ref_us = ref_us;
}

void table_builds::poll(resident_base& rk) {
  if (!rk.building || !rk.build_end) return;
  const cudaError_t e = cudaEventQuery(rk.build_end->get());
  if (e == cudaErrorNotReady) return;
  rk.building = false;
  CUDA_OK(e);  // a failed build is an error of the device, which the caller reports
  auto plain = rk.switch_tables();
  rk.stats.tables = true;
  rk.stats.tables_ms = double(rk.build_end->since(*rk.build_start));
  // Device time of the build, placed on the steady clock through the
  // reference event recorded when it was enqueued.
  const double start_us = rk.build_ref_us + 1000.0 * double(rk.build_start->since(*rk.build_ref));
  rk.stats.spans.push_back({"key_tables", start_us, start_us + 1000.0 * rk.stats.tables_ms});
  rk.stats.tables_bytes = plain.second;
  rk.stats.tables_note.clear();
  rk.bytes -= plain.first.bytes;
  if (rk.counted) budget_.retire(std::move(plain.first));
  budget_.sweep();
}

template void table_builds::consider<zk::bn254>(std::unique_lock<std::mutex>&,
                                                const std::shared_ptr<resident_key<zk::bn254>>&,
                                                const proving_key<zk::bn254>&);
template void table_builds::consider<zk::bls12_381>(std::unique_lock<std::mutex>&,
                                                    const std::shared_ptr<resident_key<zk::bls12_381>>&,
                                                    const proving_key<zk::bls12_381>&);

}  // namespace proofline::gpu::cuda::detail
