#include "engine/fault_inject.hpp"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

namespace proofline::engine {

namespace {

class faulty_backend final : public gpu::backend {
 public:
  faulty_backend(std::shared_ptr<gpu::backend> inner, std::vector<fault> faults,
                 std::shared_ptr<std::atomic<uint64_t>> calls)
      : inner_(std::move(inner)), faults_(std::move(faults)), calls_(std::move(calls)) {}

  const char* kind() const override { return inner_->kind(); }
  std::string describe() const override { return inner_->describe() + " (fault injection)"; }
  unsigned lanes() const override { return inner_->lanes(); }
  void prepare(const zk::groth16::key_ptr& key) override { inner_->prepare(key); }
  void evict(const zk::groth16::proving_key_base* key) override { inner_->evict(key); }

  gpu::result_ptr prove(const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                        const gpu::prove_hooks& hooks) override {
    const uint64_t call = ++*calls_;
    bool corrupt = false;
    for (const auto& f : faults_) {
      if (f.call != 0 && f.call != call) continue;
      if (f.what == fault::kind::fail)
        throw gpu::backend_error("injected fault on prove() call " + std::to_string(call) +
                            " (PROOFLINE_FAULT_INJECT)");
      corrupt = true;
    }
    auto r = inner_->prove(key, part, hooks);
    if (!corrupt || !r) return r;
    return zk::visit_curve(r->curve, [&](auto curve) -> gpu::result_ptr {
      using C = decltype(curve);
      auto bad = std::make_shared<gpu::result<C>>(static_cast<const gpu::result<C>&>(*r));
      bad->msm.a = bad->msm.a + C::g1_jacobian::from_affine(C::g1_generator());
      return bad;
    });
  }

 private:
  std::shared_ptr<gpu::backend> inner_;
  std::vector<fault> faults_;
  std::shared_ptr<std::atomic<uint64_t>> calls_;
};

}  // namespace

std::vector<fault> parse_faults(const std::string& text) {
  std::vector<fault> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    const auto colon = item.find(':');
    auto bad = [&] {
      return std::invalid_argument("PROOFLINE_FAULT_INJECT: \"" + item +
                                   "\" is not corrupt:K, throw:K, corrupt:all or throw:all");
    };
    if (colon == std::string::npos) throw bad();
    fault f;
    const std::string what = item.substr(0, colon), when = item.substr(colon + 1);
    if (what == "corrupt")
      f.what = fault::kind::corrupt;
    else if (what == "throw")
      f.what = fault::kind::fail;
    else
      throw bad();
    if (when != "all") {
      char* rest = nullptr;
      const unsigned long long k = std::strtoull(when.c_str(), &rest, 10);
      if (when.empty() || *rest != '\0' || k == 0) throw bad();
      f.call = k;
    }
    out.push_back(f);
  }
  return out;
}

std::vector<std::shared_ptr<gpu::backend>> with_faults(std::vector<std::shared_ptr<gpu::backend>> backends,
                                                  const std::vector<fault>& faults) {
  auto calls = std::make_shared<std::atomic<uint64_t>>(0);
  for (auto& b : backends) b = std::make_shared<faulty_backend>(std::move(b), faults, calls);
  return backends;
}

std::string fault_spec_from_env() {
  const char* spec = std::getenv("PROOFLINE_FAULT_INJECT");
  return spec ? spec : "";
}

}  // namespace proofline::engine
