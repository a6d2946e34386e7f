#include "tests/actors/fakes.hpp"

#include <thread>

#include "gpu/device_lost.hpp"
#include "gpu/synthetic.hpp"
#include "zk/curves.hpp"
#include "zk/formats/error.hpp"

namespace proofline::test {

namespace {

using curve = zk::bn254;

class fake_backend final : public gpu::backend {
 public:
  fake_backend(std::shared_ptr<fake_world> w, int device, std::string kind, std::string name)
      : world_(std::move(w)), device_(device), kind_(std::move(kind)), name_(std::move(name)) {}
  const char* kind() const override { return kind_.c_str(); }
  std::string describe() const override { return name_; }
  gpu::result_ptr prove(const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                        const gpu::prove_hooks& hooks) override {
    const auto& p = static_cast<const gpu::partition<curve>&>(*part);
    std::string witness;
    {
      std::lock_guard<std::mutex> g(world_->mtx);
      witness = world_->tags.at(p.witness[1].l[0]);
      ++world_->prove_calls[device_];
    }
    world_->log("prove " + witness);
    world_->log("ran " + kind_ + " " + witness);
    if (hooks.inputs_consumed) hooks.inputs_consumed();
    std::this_thread::sleep_for(world_->prove_delay);
    {
      std::lock_guard<std::mutex> g(world_->mtx);
      if (world_->lost_kinds.count(kind_))
        throw gpu::device_lost("cudaErrorIllegalAddress: an illegal memory access");
      if (world_->fail_prove.count(witness)) throw gpu::backend_error("injected device fault");
      if (world_->refuses_key[device_].count(key->path)) throw no_room(key->path);
      if (auto f = world_->fails_after.find(device_);
          f != world_->fails_after.end() && proved_ >= f->second)
        throw gpu::backend_error("injected fault: the device stopped working");
      ++proved_;
      world_->device_events.push_back("prove " + std::to_string(device_) + " " + key->path + " " +
                                      witness);
    }
    auto r = std::make_shared<gpu::result<curve>>();
    r->msm.a = r->msm.b1 = r->msm.c = r->msm.h = curve::g1_jacobian::infinity();
    r->msm.b2 = curve::g2_jacobian::infinity();
    return r;
  }
  void prepare(const zk::groth16::key_ptr& key) override {
    world_->log("prepare " + key->path);
    std::lock_guard<std::mutex> g(world_->mtx);
    if (world_->refuses_key[device_].count(key->path)) throw no_room(key->path);
    world_->device_events.push_back("prepare " + std::to_string(device_) + " " + key->path);
  }
  gpu::key_prep_stats key_stats(const zk::groth16::proving_key_base*) override {
    std::lock_guard<std::mutex> g(world_->mtx);
    auto t = world_->tables_after.find(device_);
    gpu::key_prep_stats st;
    if (t == world_->tables_after.end()) return st;
    st.resident = true;
    st.to_device_ms = 1;
    st.spans.push_back({"key_upload", 1000, 2000});
    if (proved_ >= t->second) {
      st.tables = true;
      st.tables_ms = 3;
      st.tables_bytes = 4096;
      st.spans.push_back({"key_tables", 2000, 5000});
    }
    return st;
  }
  void evict(const zk::groth16::proving_key_base* key) override {
    world_->log("evict " + key->path);
  }

 private:
  gpu::backend_error no_room(const std::string& path) const {
    return gpu::backend_error("device memory: key " + path + " does not fit on fake device " +
                              std::to_string(device_));
  }
  std::shared_ptr<fake_world> world_;
  int device_ = 0;
  std::string kind_;
  std::string name_;
  int proved_ = 0;  // successful proofs on this device
};

}  // namespace

void fake_world::log(std::string e) {
  std::lock_guard<std::mutex> g(mtx);
  events.push_back(std::move(e));
}

std::vector<std::string> fake_world::events_of(const std::string& kind) const {
  std::lock_guard<std::mutex> g(mtx);
  std::vector<std::string> out;
  for (const auto& e : events)
    if (e.compare(0, kind.size() + 1, kind + " ") == 0) out.push_back(e.substr(kind.size() + 1));
  return out;
}

std::string fake_world::file(const std::string& path) const {
  std::lock_guard<std::mutex> g(mtx);
  auto it = files.find(path);
  return it == files.end() ? std::string() : it->second;
}

prover_ops fake_world::ops() {
  auto self = shared_from_this();
  prover_ops ops;
  ops.load_key = [self](const std::string& path) -> zk::groth16::key_ptr {
    self->log("load " + path);
    {
      std::lock_guard<std::mutex> g(self->mtx);
      ++self->key_loads;
    }
    if (path.find("missing") != std::string::npos)
      throw zk::formats::format_error(path, "cannot open: No such file or directory");
    size_t points = 0;
    {
      std::lock_guard<std::mutex> g(self->mtx);
      if (auto it = self->key_points.find(path); it != self->key_points.end()) points = it->second;
    }
    const uint32_t log_domain = path.find("huge") != std::string::npos ? 20 : 4;
    if (!points) return gpu::synthetic_key(path, 8, log_domain);
    auto typed = gpu::synthetic_key<zk::groth16::proving_key<curve>>(path, 8, log_domain);
    typed->points_h.resize(points);
    return typed;
  };
  ops.load_constraints = [self](const std::string& path) -> constraints_ptr {
    self->log("constraints " + path);
    if (path.find("missing") != std::string::npos)
      throw zk::formats::format_error(path, "cannot open: No such file or directory");
    auto cs = std::make_shared<constraint_system>();
    cs->path = path;
    cs->n_vars = path.find("wide") != std::string::npos ? 9 : 8;  // the fake key has 8
    cs->n_constraints = 4;
    return cs;
  };
  ops.synthesize = [self](const zk::groth16::key_ptr& key, const synthesis_request& req,
                          synthesis_timing&) -> gpu::partition_ptr {
    const std::string& witness = req.witness.name;
    const memory::source& src = req.buffers;
    if (req.witness.constraints) self->log("checked " + witness + " against " + req.witness.constraints->path);
    if (req.witness.data)  // given in memory: the bytes as text
      self->log("synth " + witness + " from bytes " +
                std::string(static_cast<const char*>(req.witness.data), req.witness.size));
    else
      self->log("synth " + witness);
    std::this_thread::sleep_for(self->synth_delay);
    if (witness.find("bad") != std::string::npos)
      throw zk::formats::format_error(witness, "1520 witness values, " + key->path + " expects 8");
    auto p = gpu::synthetic_partition(key, src);
    for (auto& v : p->witness) v = curve::scalar::zero();
    p->witness[0] = curve::scalar::from_u64(1);
    {
      std::lock_guard<std::mutex> g(self->mtx);
      p->witness[1] = curve::scalar::from_u64(self->tags.size());
      self->tags.push_back(witness);
    }
    p->witness[2] = curve::scalar::from_u64(42);
    return p;
  };
  ops.finalize = [self](const zk::groth16::key_ptr&, const gpu::partition_ptr& part,
                        const gpu::result_ptr& result) {
    const auto& p = static_cast<const gpu::partition<curve>&>(*part);
    if (!result) throw std::logic_error("finalize without a result");
    std::string witness;
    finalized_files f;
    {
      std::lock_guard<std::mutex> g(self->mtx);
      witness = self->tags.at(p.witness[1].l[0]);
      // The fake backend's results are all zero (MSM sums at infinity); a
      // point there was put in by the fault-injection decorator.
      if (!static_cast<const gpu::result<curve>&>(*result).msm.a.is_infinity()) {
        f.checked = true;
        f.problem = "result corrupted by the backend";
      } else if (auto it = self->bad_proofs.find(witness); it != self->bad_proofs.end()) {
        f.checked = true;
        f.verified = it->second <= 0;
        if (it->second-- > 0) f.problem = "fake bad proof";
      }
    }
    f.proof_json = "{\"witness\": \"" + witness + "\"}";
    f.public_json = "[\"" + std::to_string(p.witness[1].l[0]) + "\", \"" +
                    std::to_string(p.witness[2].l[0]) + "\"]";
    return f;
  };
  ops.write_file = [self](const std::string& path, std::string_view contents) {
    self->log("write " + path);
    std::lock_guard<std::mutex> g(self->mtx);
    self->files[path] = std::string(contents);
  };
  return ops;
}

std::function<std::optional<file_identity>(const std::string&)> fake_world::identify() {
  auto self = shared_from_this();
  return [self](const std::string& path) -> std::optional<file_identity> {
    std::lock_guard<std::mutex> g(self->mtx);
    file_identity id;
    auto it = self->file_versions.find(path);
    id.size = it == self->file_versions.end() ? 1 : it->second;
    return id;
  };
}

std::shared_ptr<gpu::backend> fake_world::backend(const std::string& kind) {
  // The default fake is device 0; one named by another kind (a fallback, a
  // backend of the retry tests) is none of the numbered fake devices.
  return std::make_shared<fake_backend>(shared_from_this(), kind == "fake" ? 0 : -1, kind,
                                        kind + " backend");
}

std::shared_ptr<gpu::backend> fake_world::backend(int device) {
  return std::make_shared<fake_backend>(shared_from_this(), device, "fake",
                                        "fake device " + std::to_string(device));
}

int fake_world::proofs_of(const std::string& witness) const {
  std::lock_guard<std::mutex> g(mtx);
  int n = 0;
  for (const auto& e : device_events)
    if (e.compare(0, 6, "prove ") == 0 && e.size() > witness.size() &&
        e.compare(e.size() - witness.size() - 1, std::string::npos, " " + witness) == 0)
      ++n;
  return n;
}

std::set<int> fake_world::devices_of(const std::string& witness) const {
  std::lock_guard<std::mutex> g(mtx);
  std::set<int> out;
  for (const auto& e : device_events)
    if (e.compare(0, 6, "prove ") == 0 && e.size() > witness.size() &&
        e.compare(e.size() - witness.size() - 1, std::string::npos, " " + witness) == 0)
      out.insert(std::stoi(e.substr(6)));
  return out;
}

std::function<void(const grant_event&)> fake_world::grant_logger(uint64_t budget) {
  auto self = shared_from_this();
  return [self, budget](const grant_event& e) {
    self->log("grant " + e.witness);
    if (e.reserved_after > budget) {
      std::lock_guard<std::mutex> g(self->mtx);
      ++self->grants_over_budget;
    }
  };
}

}  // namespace proofline::test
