#include "engine/backend_choice.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "base/parallel.hpp"
#include "base/text.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/footprint.hpp"
#include "gpu/pinning.hpp"
#include "memory/estimate.hpp"
#include "memory/size.hpp"

namespace proofline::engine {

unsigned backend_choice::lanes() const {
  unsigned n = 0;
  for (const auto& b : backends) n += b->lanes();
  return n;
}

unsigned default_synthesizers(const backend_choice& choice, unsigned finalizers) {
  if (!choice.cuda()) return 2;
  unsigned cores = base::hardware_threads();
  unsigned spare = cores > finalizers + 1 ? cores - finalizers - 1 : 0;
  return std::clamp(spare, 2u, 64u);
}

std::vector<observe::backend_record> backend_records(const backend_choice& choice) {
  std::vector<observe::backend_record> out;
  for (size_t d = 0; d < choice.backends.size(); ++d) {
    const auto& b = *choice.backends[d];
    observe::backend_record r;
    r.kind = b.kind();
    r.description = b.describe();
    r.lanes = std::max(1u, b.lanes());
    if (d < choice.devices.size()) r.cuda_device = choice.devices[d];
    out.push_back(std::move(r));
  }
  return out;
}

void configure_memory(runtime_config& rc, const backend_choice& choice, unsigned synthesizers,
                      bool pool, bool pin) {
  const bool cuda = choice.cuda();
  rc.footprint = cuda ? gpu::cuda_footprint(choice.backends.front()->lanes())
                      : gpu::cpu_backend_footprint;
  rc.pinned_pool = pool ? memory::default_pool_bytes(rc.memory_budget) : 0;
  rc.pinned_pool_partitions = synthesizers + 3 * choice.lanes();
  if (rc.pinned_pool + rc.footprint.fixed_bytes * choice.backends.size() >= rc.memory_budget)
    rc.pinned_pool = 0;
  rc.pinner = cuda && pin ? gpu::cuda_pinner() : memory::pinner{};
}

std::optional<std::vector<int>> parse_gpu_list(const std::string& text, int visible,
                                               std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<std::vector<int>> {
    if (error) *error = "--gpus " + text + ": " + why;
    return std::nullopt;
  };
  std::vector<int> ids;
  if (text == "all") {
    for (int d = 0; d < visible; ++d) ids.push_back(d);
    return ids;
  }
  for (const std::string& item : base::split(text, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 4)
      return fail("expected all or device ids like 0,1, got \"" + item + "\"");
    int id = std::stoi(item);
    if (id >= visible)
      return fail("device " + item + " is not visible (" + std::to_string(visible) +
                  " CUDA device(s))");
    if (std::find(ids.begin(), ids.end(), id) != ids.end())
      return fail("device " + item + " is listed twice");
    ids.push_back(id);
  }
  if (ids.empty()) return fail("no device ids");
  return ids;
}

backend_choice choose_backends(const backend_request& r) {
  backend_choice c;
  // One info line says which backend and why; CUDA's own words for a missing
  // GPU ("driver version is insufficient" on a machine without one) go to debug.
  auto cpu = [&](const std::string& why) {
    c.backends.push_back(std::shared_ptr<gpu::backend>(gpu::make_cpu_backend(r.cpu_threads)));
    spdlog::info("backend: cpu ({}); {}", why, c.backends.back()->describe());
  };
  if (r.backend == "cpu") {
    cpu("--backend cpu");
    return c;
  }
  std::string why;
  int visible = gpu::cuda_device_count(&why);
  if (visible <= 0) {
    if (r.backend == "cuda") {
      c.error = "--backend cuda: no usable CUDA device (" + why + ")";
    } else {
      spdlog::debug("no CUDA device: {}", why);
      cpu(why == "built without CUDA" ? "built without CUDA" : "no GPU found");
    }
    return c;
  }
  std::string problem;
  auto ids = parse_gpu_list(r.gpus, visible, &problem);
  if (!ids) {
    c.error = problem;
    return c;
  }
  gpu::cuda_settings settings;
  settings.lanes = r.gpu_lanes ? r.gpu_lanes : 1;
  // One limit for every GPU, or one per GPU in --gpus order.
  std::vector<std::size_t> limits;
  if (!r.gpu_memory.empty()) {
    for (size_t at = 0;;) {  // every comma-separated item, empty ones too
      size_t comma = r.gpu_memory.find(',', at);
      auto bytes = memory::parse_size(r.gpu_memory.substr(at, comma - at));
      if (!bytes || *bytes == 0) {
        c.error = "--gpu-memory " + r.gpu_memory +
                  ": expected a size like 40G, or one per GPU like 40G,20G";
        return c;
      }
      limits.push_back(*bytes);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (limits.size() != 1 && limits.size() != ids->size()) {
      c.error = "--gpu-memory " + r.gpu_memory + ": " + std::to_string(limits.size()) +
                " sizes for " + std::to_string(ids->size()) + " GPUs (--gpus " + r.gpus +
                "); give one size, or one per GPU";
      return c;
    }
  }
  try {
    for (size_t i = 0; i < ids->size(); ++i) {
      if (!limits.empty()) settings.memory_limit = limits[limits.size() == 1 ? 0 : i];
      c.backends.push_back(
          std::shared_ptr<gpu::backend>(gpu::make_cuda_backend((*ids)[i], settings)));
    }
    c.devices = *ids;
  } catch (const std::exception& e) {
    c.backends.clear();
    if (r.backend == "cuda") {
      c.error = std::string("--backend cuda: ") + e.what();
      return c;
    }
    cpu(std::string("--backend auto: the CUDA backend is unavailable (") + e.what() + ")");
    return c;
  }
  for (const auto& b : c.backends)
    spdlog::info("backend: CUDA ({}), {} lane(s); --backend {} --gpus {} ({} visible)",
                 b->describe(), b->lanes(), r.backend, r.gpus, visible);
  c.fallback = std::shared_ptr<gpu::backend>(gpu::make_cpu_backend(r.cpu_threads));
  return c;
}

}  // namespace proofline::engine
