// rapidsnark's prover and verifier ABI (include/proofline/rapidsnark/) on
// prover_runtime. Every call shares one runtime, started at the first call
// from the JSON options in PROOFLINE_OPTIONS (proofline_open's keys;
// default: the CUDA backend when a GPU is visible, else the CPU) and
// stopped at exit. Prover objects hold a key of it; the one-shot calls load
// their key for the call (from a buffer) or keep it warm while the file is
// unchanged (from a path). No C++ exception leaves these functions.
#include "proofline/rapidsnark/prover.h"
#include "proofline/rapidsnark/verifier.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/prover_runtime.hpp"
#include "zk/curves.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/verifier.hpp"

using proofline::lib::error;
using proofline::lib::loaded_key;
using proofline::lib::proof_outcome;
using proofline::lib::prover_runtime;
using proofline::lib::status;

namespace {

using ull = unsigned long long;

/// The longest proof text a prover writes, NUL included: BLS12-381's
/// coordinates have 115 decimal digits, BN254's 77 (see
/// tests/lib/rapidsnark.test.cpp, which renders the largest of each).
constexpr ull max_proof_bytes = 1200;

void put_error(char* buf, ull size, const std::string& message) {
  if (buf && size > 0) std::snprintf(buf, static_cast<size_t>(size), "%s", message.c_str());
}

/// The runtime all calls share, or why it could not start.
struct shared_runtime {
  std::shared_ptr<prover_runtime> rt;
  std::string problem;
  /// Keys of the one-shot file calls, by path, least recently used first,
  /// each with the file's identity when it was read.
  struct file_key {
    std::string path;
    struct stat id {};
    std::shared_ptr<const loaded_key> key;
  };
  std::mutex mu;
  std::list<file_key> file_keys;
  static constexpr std::size_t max_file_keys = 4;
};

shared_runtime*& shared_slot() {
  static shared_runtime* slot = nullptr;
  return slot;
}

void stop_shared() {
  shared_runtime* s = shared_slot();
  if (!s || !s->rt) return;
  try {
    {
      std::lock_guard<std::mutex> g(s->mu);
      for (auto& k : s->file_keys) s->rt->release(*k.key);
      s->file_keys.clear();
    }
    s->rt->close();
    s->rt.reset();
  } catch (...) {
  }
}

/// The shared runtime; throws error(backend) when it could not start.
std::shared_ptr<prover_runtime> runtime() {
  static shared_runtime* s = [] {
    auto* made = new shared_runtime;  // lives until exit: stop_shared stops its runtime
    const char* options = std::getenv("PROOFLINE_OPTIONS");
    try {
      made->rt = std::make_shared<prover_runtime>(options ? options : "");
    } catch (const std::exception& e) {
      made->problem = std::string("proofline: cannot start (PROOFLINE_OPTIONS=") +
                      (options ? options : "") + "): " + e.what();
    }
    shared_slot() = made;
    std::atexit(stop_shared);
    return made;
  }();
  if (!s->rt) throw error(status::backend, s->problem);
  return s->rt;
}

/// A key of the one-shot file calls: kept while the file's size, mtime and
/// inode stay as they were, so repeated calls neither read nor prepare it again.
std::shared_ptr<const loaded_key> file_key(const std::shared_ptr<prover_runtime>& rt,
                                           const std::string& path) {
  shared_runtime* s = shared_slot();
  struct stat now {};
  if (::stat(path.c_str(), &now) != 0) return rt->load_file(path);  // names the error
  auto same = [&](const struct stat& a) {
    return a.st_size == now.st_size && a.st_ino == now.st_ino && a.st_dev == now.st_dev &&
           a.st_mtim.tv_sec == now.st_mtim.tv_sec && a.st_mtim.tv_nsec == now.st_mtim.tv_nsec;
  };
  {
    std::lock_guard<std::mutex> g(s->mu);
    for (auto it = s->file_keys.begin(); it != s->file_keys.end(); ++it) {
      if (it->path != path) continue;
      if (same(it->id)) {
        s->file_keys.splice(s->file_keys.end(), s->file_keys, it);  // most recently used
        return it->key;
      }
      rt->release(*it->key);
      s->file_keys.erase(it);
      break;
    }
  }
  auto key = rt->load_file(path);
  std::lock_guard<std::mutex> g(s->mu);
  s->file_keys.push_back({path, now, key});
  if (s->file_keys.size() > shared_runtime::max_file_keys) {
    rt->release(*s->file_keys.front().key);
    s->file_keys.pop_front();
  }
  return key;
}

/// A prover object: a key held in the shared runtime.
struct rs_prover {
  std::shared_ptr<prover_runtime> rt;
  std::shared_ptr<const loaded_key> key;
};

/// One line of JSON, as rapidsnark writes its outputs.
std::string compact(const std::string& json_text) {
  return nlohmann::json::parse(json_text).dump();
}

ull public_bytes(uint32_t n_public) { return 82ull * n_public + 4; }

/// Why a prove call's arguments cannot be used, in rapidsnark's order; "" if fine.
std::string null_argument(const void* wtns, const char* proof, const ull* proof_size,
                          const char* pub, const ull* public_size) {
  if (!wtns) return "Null witness buffer";
  if (!proof) return "Null proof buffer";
  if (!proof_size) return "Null proof size";
  if (!pub) return "Null public buffer";
  if (!public_size) return "Null public size";
  return {};
}

/// Proves `wtns` with `key` and writes the outputs under rapidsnark's buffer rules.
int prove_into(const std::shared_ptr<prover_runtime>& rt, const loaded_key& key, const void* wtns,
               ull wtns_size, char* proof_buffer, ull* proof_size, char* public_buffer,
               ull* public_size, char* error_msg, ull error_msg_maxsize) {
  proof_outcome o;
  try {
    o = rt->prove(key, wtns, static_cast<std::size_t>(wtns_size));
  } catch (const error& e) {
    put_error(error_msg, error_msg_maxsize, e.what());
    return e.witness_length ? PROVER_INVALID_WITNESS_LENGTH : PROVER_ERROR;
  }
  if (o.code != status::ok) {
    put_error(error_msg, error_msg_maxsize, o.message);
    return o.witness_length ? PROVER_INVALID_WITNESS_LENGTH : PROVER_ERROR;
  }
  const std::string proof = compact(o.proof_json);
  const std::string pub = compact(o.public_json);
  const ull need_proof = proof.size() + 1, need_public = pub.size() + 1;
  if (*proof_size < need_proof || *public_size < need_public) {
    put_error(error_msg, error_msg_maxsize,
              "buffers too short: the proof needs " + std::to_string(need_proof) + " bytes (" +
                  std::to_string(*proof_size) + " given), the public signals " +
                  std::to_string(need_public) + " (" + std::to_string(*public_size) + " given)");
    *proof_size = need_proof;
    *public_size = need_public;
    return PROVER_ERROR_SHORT_BUFFER;
  }
  std::memcpy(proof_buffer, proof.c_str(), need_proof);
  std::memcpy(public_buffer, pub.c_str(), need_public);
  *proof_size = proof.size();
  *public_size = pub.size();
  return PROVER_OK;
}

/// Runs `f`, turning what it throws into PROVER_ERROR (or
/// PROVER_INVALID_WITNESS_LENGTH) with the message.
template <class F>
int guarded(char* error_msg, ull error_msg_maxsize, F&& f) {
  try {
    return f();
  } catch (const error& e) {
    put_error(error_msg, error_msg_maxsize, e.what());
    return e.witness_length ? PROVER_INVALID_WITNESS_LENGTH : PROVER_ERROR;
  } catch (const std::exception& e) {
    put_error(error_msg, error_msg_maxsize, e.what());
    return PROVER_ERROR;
  } catch (...) {
    put_error(error_msg, error_msg_maxsize, "unknown error");
    return PROVER_ERROR;
  }
}

}  // namespace

extern "C" {

int groth16_public_size_for_zkey_buf(const void* zkey_buffer, ull zkey_size, ull* public_size,
                                     char* error_msg, ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!zkey_buffer || !public_size) throw error(status::argument, "Null argument");
    const auto info = proofline::zk::formats::read_zkey_info(
        proofline::zk::formats::memory_file{"zkey buffer", zkey_buffer, zkey_size});
    *public_size = public_bytes(info.n_public);
    return PROVER_OK;
  });
}

int groth16_public_size_for_zkey_file(const char* zkey_fname, ull* public_size, char* error_msg,
                                      ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!zkey_fname || !public_size) throw error(status::argument, "Null argument");
    *public_size = public_bytes(proofline::zk::formats::read_zkey_info(zkey_fname).n_public);
    return PROVER_OK;
  });
}

void groth16_proof_size(ull* proof_size) {
  if (proof_size) *proof_size = max_proof_bytes;
}

int groth16_prover_create(void** prover_object, const void* zkey_buffer, ull zkey_size,
                          char* error_msg, ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!prover_object) throw error(status::argument, "Null prover object");
    *prover_object = nullptr;
    if (!zkey_buffer) throw error(status::argument, "Null zkey buffer");
    auto rt = runtime();
    auto key = rt->load_bytes(zkey_buffer, static_cast<std::size_t>(zkey_size));
    *prover_object = new rs_prover{std::move(rt), std::move(key)};
    return PROVER_OK;
  });
}

int groth16_prover_create_zkey_file(void** prover_object, const char* zkey_file_path,
                                    char* error_msg, ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!prover_object) throw error(status::argument, "Null prover object");
    *prover_object = nullptr;
    if (!zkey_file_path) throw error(status::argument, "Null zkey file path");
    auto rt = runtime();
    auto key = rt->load_file(zkey_file_path);  // the prover keeps its own copy of the key
    *prover_object = new rs_prover{std::move(rt), std::move(key)};
    return PROVER_OK;
  });
}

int groth16_prover_prove(void* prover_object, const void* wtns_buffer, ull wtns_size,
                         char* proof_buffer, ull* proof_size, char* public_buffer,
                         ull* public_size, char* error_msg, ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!prover_object) throw error(status::argument, "Null prover object");
    if (auto bad = null_argument(wtns_buffer, proof_buffer, proof_size, public_buffer, public_size);
        !bad.empty())
      throw error(status::argument, bad);
    auto* p = static_cast<rs_prover*>(prover_object);
    return prove_into(p->rt, *p->key, wtns_buffer, wtns_size, proof_buffer, proof_size,
                      public_buffer, public_size, error_msg, error_msg_maxsize);
  });
}

void groth16_prover_destroy(void* prover_object) {
  if (!prover_object) return;
  auto* p = static_cast<rs_prover*>(prover_object);
  try {
    p->rt->release(*p->key);
  } catch (...) {
  }
  delete p;
}

int groth16_prover(const void* zkey_buffer, ull zkey_size, const void* wtns_buffer, ull wtns_size,
                   char* proof_buffer, ull* proof_size, char* public_buffer, ull* public_size,
                   char* error_msg, ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!zkey_buffer) throw error(status::argument, "Null zkey buffer");
    if (auto bad = null_argument(wtns_buffer, proof_buffer, proof_size, public_buffer, public_size);
        !bad.empty())
      throw error(status::argument, bad);
    auto rt = runtime();
    auto key = rt->load_bytes(zkey_buffer, static_cast<std::size_t>(zkey_size));
    struct releaser {
      prover_runtime& rt;
      const loaded_key& key;
      ~releaser() { rt.release(key); }
    } release{*rt, *key};
    return prove_into(rt, *key, wtns_buffer, wtns_size, proof_buffer, proof_size, public_buffer,
                      public_size, error_msg, error_msg_maxsize);
  });
}

int groth16_prover_zkey_file(const char* zkey_file_path, const void* wtns_buffer, ull wtns_size,
                             char* proof_buffer, ull* proof_size, char* public_buffer,
                             ull* public_size, char* error_msg, ull error_msg_maxsize) {
  return guarded(error_msg, error_msg_maxsize, [&] {
    if (!zkey_file_path) throw error(status::argument, "Null zkey file path");
    if (auto bad = null_argument(wtns_buffer, proof_buffer, proof_size, public_buffer, public_size);
        !bad.empty())
      throw error(status::argument, bad);
    auto rt = runtime();
    auto key = file_key(rt, zkey_file_path);
    return prove_into(rt, *key, wtns_buffer, wtns_size, proof_buffer, proof_size, public_buffer,
                      public_size, error_msg, error_msg_maxsize);
  });
}

int groth16_verify(const char* proof, const char* inputs, const char* verification_key,
                   char* error_msg, ull error_msg_maxsize) {
  namespace zk = proofline::zk;
  try {
    if (!proof || !inputs || !verification_key) {
      put_error(error_msg, error_msg_maxsize, "Null argument");
      return VERIFIER_ERROR;
    }
    const auto vk_json = nlohmann::json::parse(verification_key, nullptr, false);
    const auto curve_it = vk_json.is_object() ? vk_json.find("curve") : vk_json.end();
    if (vk_json.is_discarded() || !vk_json.is_object() || curve_it == vk_json.end() ||
        !curve_it->is_string())
      throw zk::formats::format_error("verification_key",
                                      "expected a JSON object with a \"curve\" string");
    const std::string name = curve_it->get<std::string>();
    zk::curve_id id;
    if (name == zk::bn254::snarkjs_name)
      id = zk::curve_id::bn254;
    else if (name == zk::bls12_381::snarkjs_name)
      id = zk::curve_id::bls12_381;
    else
      throw zk::formats::format_error("verification_key", "unknown curve \"" + name + "\"");
    return zk::visit_curve(id, [&](auto c) {
      using C = decltype(c);
      auto vk = zk::formats::read_verification_key<C>(zk::formats::json_text{"verification_key", verification_key});
      const auto pub = zk::formats::read_public<C>(zk::formats::json_text{"inputs", inputs});
      const auto pr = zk::formats::read_proof<C>(zk::formats::json_text{"proof", proof}, /*check_curve=*/false);
      const auto v = zk::groth16::verify<C>(zk::groth16::prepare<C>(std::move(vk)), pr,
                                            pub.data(), pub.size());
      if (v.ok) return VERIFIER_VALID_PROOF;
      put_error(error_msg, error_msg_maxsize, v.reason);
      return VERIFIER_INVALID_PROOF;
    });
  } catch (const std::exception& e) {
    put_error(error_msg, error_msg_maxsize, e.what());
    return VERIFIER_ERROR;
  } catch (...) {
    put_error(error_msg, error_msg_maxsize, "unknown error");
    return VERIFIER_ERROR;
  }
}

}  // extern "C"
