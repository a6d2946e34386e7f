#include "actors/detail/prover_ops.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "memory/arena.hpp"
#include "messages/pipeline.hpp"
#include "witness/generator.hpp"
#include "zk/curves.hpp"
#include "zk/dev/r1cs.hpp"
#include "zk/formats/r1cs.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/prover.hpp"
#include "zk/groth16/synthesis_model.hpp"
#include "zk/groth16/verifier.hpp"

namespace proofline {

namespace {

/// Throws format_error naming `witness` when it does not satisfy one of
/// `cs`'s constraints: the first such one, counted from 0 in the file's
/// order. One pass over the terms on this thread.
template <class C>
void check_constraints(const constraint_system& cs, const std::string& witness,
                       const typename C::scalar* values) {
  const auto& rows = *static_cast<const zk::dev::r1cs<C>*>(cs.rows.get());
  const uint32_t bad = zk::dev::first_unsatisfied<C>(rows, values);
  if (bad == rows.n_constraints) return;
  throw zk::formats::format_error(
      witness, "the witness does not satisfy the circuit: constraint " + std::to_string(bad) +
                   " (counting from 0) of the " + std::to_string(rows.n_constraints) + " in " +
                   cs.path + " fails (A·w)·(B·w) = C·w");
}

template <class C>
std::shared_ptr<const constraint_system> load_constraints_on(const std::string& path,
                                                             const zk::formats::r1cs_info& info) {
  auto rows = std::make_shared<zk::dev::r1cs<C>>(zk::dev::circom_r1cs<C>(path));
  auto cs = std::make_shared<constraint_system>();
  cs->path = path;
  cs->curve = info.curve;
  cs->n_vars = rows->n_vars;
  cs->n_constraints = rows->n_constraints;
  cs->rows = std::move(rows);
  return cs;
}

template <class C>
gpu::partition_ptr synthesize_on(const zk::groth16::key_ptr& key, const synthesis_request& req,
                                 synthesis_timing& timing, zk::groth16::synthesis_model model) {
  using scalar = typename C::scalar;
  using fr = typename C::fr;
  using clock = std::chrono::steady_clock;
  auto us_since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(clock::now() - t0).count();
  };
  const auto& k = zk::groth16::typed<C>(*key);
  auto p = std::make_shared<gpu::partition<C>>();
  // The threads granted to this partition (idle synthesizers' shares) read
  // the witness as well as compute a, b, c.
  unsigned threads = std::max(1u, req.threads);
  const memory::source& src = req.buffers;
  auto t0 = clock::now();
  p->witness = memory::buffer<scalar>(k.info.n_vars, src);
  const witness_source& w = req.witness;
  bool generated = false;
  uint64_t generator_bytes = 0;
  if (const witness::generator* gen = w.generator) {
    // The witness from the input, computed on this thread (so in this
    // synthesizer's arena) straight into the partition's witness buffer.
    const uint64_t before = memory::thread_allocated_bytes();
    witness::input_values values =
        w.data ? gen->parse_inputs(w.name, {static_cast<const char*>(w.data), w.size})
               : gen->read_inputs(w.name);
    gen->calculate(w.name, values, p->witness.data());
    const uint64_t after = memory::thread_allocated_bytes();
    generator_bytes = after > before ? after - before : 0;
    generated = true;
    if (!w.keep_path.empty())
      zk::formats::write_file_atomic(w.keep_path, witness::wtns_bytes(*gen, p->witness.data()));
  } else if (w.data)
    zk::formats::read_witness<C>(zk::formats::memory_file{w.name, w.data, w.size}, k,
                                 p->witness.data(), threads);
  else
    zk::formats::read_witness<C>(w.name, k, p->witness.data(), threads);
  if (w.constraints) check_constraints<C>(*w.constraints, w.name, p->witness.data());
  timing = {};
  timing.read_witness_us = us_since(t0);
  timing.generated = generated;
  timing.generator_bytes = generator_bytes;
  timing.threads = threads;
  timing.recorded = true;
  if (!req.abc && model == zk::groth16::synthesis_model::plain) return p;  // the backends compute a, b, c
  t0 = clock::now();
  p->a = memory::buffer<fr>(k.info.domain_size, src);
  p->b = memory::buffer<fr>(k.info.domain_size, src);
  p->c = memory::buffer<fr>(k.info.domain_size, src);
  if (model != zk::groth16::synthesis_model::plain) {
    threads = 1;  // a bellperson-style synthesis runs on one thread
    const uint32_t keep =
        model == zk::groth16::synthesis_model::lc_keep ? zk::groth16::lc_keep_every : 0;
    zk::groth16::synthesize_lc<C>(k, p->witness.data(), p->a.data(), p->b.data(), p->c.data(),
                                  nullptr, keep);
  } else {
    zk::groth16::synthesize_abc<C>(k, p->witness.data(), p->a.data(), p->b.data(), p->c.data(),
                                   threads);
  }
  timing.abc_us = us_since(t0);
  timing.threads = threads;
  return p;
}

template <class C>
finalized_files finalize_on(const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                            const gpu::result_ptr& result) {
  const auto& k = zk::groth16::typed<C>(*key);
  const auto& p = static_cast<const gpu::partition<C>&>(*part);
  const auto& m = static_cast<const gpu::result<C>&>(*result).msm;
  auto r = zk::groth16::random_scalar<C>();
  auto s = zk::groth16::random_scalar<C>();
  auto proof = zk::groth16::assemble<C>(k, m, r, s);
  finalized_files files;
  if (k.verifier) {
    const auto& vk = *static_cast<const zk::groth16::prepared_key<C>*>(k.verifier.get());
    const auto t0 = std::chrono::steady_clock::now();
    auto v = zk::groth16::verify<C>(vk, proof, p.witness.data() + 1, k.info.n_public);
    files.verify_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    files.checked = true;
    files.verified = v.ok;
    files.problem = std::move(v.reason);
  }
  files.proof_json = zk::formats::proof_to_json<C>(proof);
  files.public_json = zk::formats::public_to_json<C>(p.witness.data() + 1, k.info.n_public);
  return files;
}

/// With `self_check`, prepares the key's verification key so that every
/// proof is checked by pairing before it leaves; throws naming the key when
/// that key is unusable.
zk::groth16::key_ptr with_verifier(zk::groth16::key_ptr key, bool self_check) {
  if (!self_check) return key;
  // The key was just created and nobody else holds it yet.
  auto& mutable_key = const_cast<zk::groth16::proving_key_base&>(*key);
  zk::visit_curve(key->info.curve, [&](auto curve) {
    using C = decltype(curve);
    auto prepared = std::make_shared<zk::groth16::prepared_key<C>>(
        zk::groth16::prepare<C>(zk::groth16::verifying_key_of(zk::groth16::typed<C>(*key))));
    if (!prepared->problem.empty()) throw zk::formats::format_error(key->path, prepared->problem);
    mutable_key.verifier = std::move(prepared);
  });
  return key;
}

}  // namespace

zk::groth16::key_ptr load_key_bytes(const zk::formats::memory_file& bytes, unsigned threads,
                                    bool self_check) {
  return with_verifier(zk::formats::load_zkey(bytes, threads), self_check);
}

prover_ops real_prover_ops(unsigned threads, bool self_check,
                           zk::groth16::synthesis_model model) {
  prover_ops ops;
  ops.load_key = [threads, self_check](const std::string& path) {
    return with_verifier(zk::formats::load_zkey(path, threads), self_check);
  };
  ops.load_constraints = [](const std::string& path) {
    const zk::formats::r1cs_info info = zk::formats::read_r1cs_info(path);
    return zk::visit_curve(info.curve, [&](auto curve) {
      return load_constraints_on<decltype(curve)>(path, info);
    });
  };
  ops.synthesize = [model](const zk::groth16::key_ptr& key, const synthesis_request& req,
                           synthesis_timing& timing) {
    return zk::visit_curve(key->info.curve, [&](auto curve) {
      return synthesize_on<decltype(curve)>(key, req, timing, model);
    });
  };
  ops.finalize = [](const zk::groth16::key_ptr& key, const gpu::partition_ptr& part,
                    const gpu::result_ptr& result) {
    if (part->curve != key->info.curve || result->curve != key->info.curve)
      throw std::logic_error("partition, result and key are on different curves");
    return zk::visit_curve(key->info.curve, [&](auto curve) {
      return finalize_on<decltype(curve)>(key, part, result);
    });
  };
  ops.write_file = [](const std::string& path, std::string_view contents) {
    zk::formats::write_file_atomic(path, contents);
  };
  return ops;
}

}  // namespace proofline
