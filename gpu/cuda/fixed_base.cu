// gpu/cuda/fixed_base.hpp: the engine's host side (table upload, chunking,
// transfers); the kernels are in fixed_base_<curve>_<group>.cu.
#include <string>

#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/cuda/fixed_base.hpp"
#include "gpu/cuda/fixed_base_ops.cuh"
#include "gpu/cuda/fixed_base_plan.hpp"
#include "gpu/cuda/resources.cuh"

namespace proofline::gpu::cuda {

namespace {

class cuda_fixed_base_engine final : public zk::dev::fixed_base_engine {
 public:
  explicit cuda_fixed_base_engine(const fixed_base_options& o)
      : device_(o.device), chunk_(o.chunk ? o.chunk : fixed_base_chunk_default) {
    std::string why;
    const int count = device_count(&why);
    if (device_ < 0 || device_ >= count)
      throw backend_error("CUDA device " + std::to_string(device_) + " is not available (" +
                          (count ? std::to_string(count) + " visible" : why) + ")");
    device_guard g(device_);
    cudaDeviceProp prop{};
    CUDA_OK(cudaGetDeviceProperties(&prop, device_));
    name_ = "CUDA device " + std::to_string(device_) + " (" + prop.name + ")";
  }

  std::string describe() const override { return name_; }

  void mul(const zk::dev::fixed_base<zk::bn254::g1_group>& t, const zk::bn254::fr* k, std::size_t n,
           zk::bn254::g1_affine* out) override {
    run(t, k, n, out);
  }
  void mul(const zk::dev::fixed_base<zk::bn254::g2_group>& t, const zk::bn254::fr* k, std::size_t n,
           zk::bn254::g2_affine* out) override {
    run(t, k, n, out);
  }
  void mul(const zk::dev::fixed_base<zk::bls12_381::g1_group>& t, const zk::bls12_381::fr* k, std::size_t n,
           zk::bls12_381::g1_affine* out) override {
    run(t, k, n, out);
  }
  void mul(const zk::dev::fixed_base<zk::bls12_381::g2_group>& t, const zk::bls12_381::fr* k, std::size_t n,
           zk::bls12_381::g2_affine* out) override {
    run(t, k, n, out);
  }

 private:
  /// Chunk j uses slot j % 2 (its stream and buffers). The host enqueues the
  /// upload and kernel of chunk j, then downloads chunk j - 1 into `out`
  /// (pageable memory: the copy returns when done), so the download overlaps
  /// chunk j's kernel and a slot is free again when its download returns.
  template <class G, class F>
  void run(const zk::dev::fixed_base<G>& table, const F* scalars, std::size_t n, zk::ec::affine<G>* out) {
    using A = zk::ec::affine<G>;
    if (n == 0) return;
    device_guard g(device_);
    const auto& entries = table.table();
    device_buffer<A> d_table(entries.size());
    CUDA_OK(cudaMemcpy(d_table.get(), entries.data(), d_table.bytes(), cudaMemcpyHostToDevice));
    const zk::dev::fixed_base_view<G> view{d_table.get(), table.window_bits(), table.windows()};

    const auto chunks = fixed_base_chunks(n, chunk_);
    const std::size_t c = chunks.front().len;
    const unsigned slots = chunks.size() > 1 ? 2 : 1;
    stream st[2];
    device_buffer<F> d_scalars[2];
    device_buffer<A> d_points[2];
    for (unsigned s = 0; s < slots; ++s) {
      d_scalars[s] = device_buffer<F>(c);
      d_points[s] = device_buffer<A>(c);
    }
    for (std::size_t j = 0; j <= chunks.size(); ++j) {
      if (j < chunks.size()) {
        const fixed_base_chunk& k = chunks[j];
        const cudaStream_t s = st[k.slot].get();
        CUDA_OK(cudaMemcpyAsync(d_scalars[k.slot].get(), scalars + k.lo, k.len * sizeof(F),
                                cudaMemcpyHostToDevice, s));
        fixed_base_products<G, F>(view, d_scalars[k.slot].get(), k.len, d_points[k.slot].get(), s);
      }
      if (j > 0) {
        const fixed_base_chunk& k = chunks[j - 1];
        CUDA_OK(cudaMemcpyAsync(out + k.lo, d_points[k.slot].get(), k.len * sizeof(A), cudaMemcpyDeviceToHost,
                                st[k.slot].get()));
        st[k.slot].synchronize();
      }
    }
  }

  int device_;
  std::size_t chunk_;
  std::string name_;
};

}  // namespace

std::unique_ptr<zk::dev::fixed_base_engine> make_fixed_base_engine(const fixed_base_options& options) {
  return std::make_unique<cuda_fixed_base_engine>(options);
}

}  // namespace proofline::gpu::cuda
