// gpu/cuda/backend/budget.hpp: the device-memory count and its LRU.
#include "gpu/cuda/backend/budget.hpp"

namespace proofline::gpu::cuda::detail {

device_budget::device_budget(std::size_t limit, bool pools)
    : alloc_stream_(std::make_unique<stream>()), pools_(pools), limit_(limit) {}

std::shared_ptr<resident_base>* device_budget::find(const proving_key_base* key) {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &it->second;
}

void device_budget::admit(const proving_key_base* key, std::shared_ptr<resident_base> rk) {
  used_ += rk->bytes;
  keys_[key] = std::move(rk);
}

bool device_budget::build_pending(const resident_base& rk) {
  if (!rk.building) return false;
  if (!rk.build_end) return true;  // still being enqueued
  return cudaEventQuery(rk.build_end->get()) == cudaErrorNotReady;
}

void device_budget::drop(const proving_key_base* key) {
  auto it = keys_.find(key);
  if (it != keys_.end()) drop(it);
}

void device_budget::drop(key_map::iterator it) {
  auto rk = std::move(it->second);
  keys_.erase(it);
  if (build_pending(*rk)) {
    retired_keys_.push_back(std::move(rk));
    return;
  }
  used_ -= rk->bytes;
  rk->counted = false;
}

void device_budget::retire(retired_points points) { retired_points_.push_back(std::move(points)); }

void device_budget::sweep() {
  for (auto it = retired_points_.begin(); it != retired_points_.end();) {
    if (it->points.use_count() == 1) {
      used_ -= it->bytes;
      it = retired_points_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = retired_keys_.begin(); it != retired_keys_.end();) {
    if (it->use_count() == 1 && !build_pending(**it)) {
      used_ -= (*it)->bytes;
      (*it)->counted = false;
      it = retired_keys_.erase(it);
    } else {
      ++it;
    }
  }
}

void device_budget::make_room(std::size_t need, const std::string& what) {
  sweep();
  while (used_ + need > limit_) {
    auto victim = keys_.end();
    for (auto it = keys_.begin(); it != keys_.end(); ++it)
      if (it->second.use_count() == 1 && it->second->ready && !it->second->building &&
          (victim == keys_.end() || it->second->last_use < victim->second->last_use))
        victim = it;
    if (victim == keys_.end())
      throw backend_error("device memory: " + what + " needs " + mib(need) + ", " + mib(used_) + " of the " +
                          mib(limit_) + " limit are in use and nothing can be evicted");
    drop(victim);
  }
}

}  // namespace proofline::gpu::cuda::detail
