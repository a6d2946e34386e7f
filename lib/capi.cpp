// The C API of include/proofline/proofline.h over prover_runtime. No C++
// exception leaves these functions: each becomes a status code and a
// message.
#include "proofline/proofline.h"

#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "lib/prover_runtime.hpp"
#include "zk/curves.hpp"

using proofline::lib::error;
using proofline::lib::failed_outcome;
using proofline::lib::loaded_key;
using proofline::lib::pending_proof;
using proofline::lib::pending_ptr;
using proofline::lib::proof_outcome;
using proofline::lib::prover_runtime;
using proofline::lib::status;
using proofline::lib::submit_options;

struct proofline_runtime {
  std::shared_ptr<prover_runtime> rt;
};

struct proofline_key {
  /// Weak: a key outliving its closed runtime only frees itself.
  std::weak_ptr<prover_runtime> rt;
  std::shared_ptr<const loaded_key> key;
};

struct proofline_proof {
  proof_outcome outcome;
};

struct proofline_job {
  std::shared_ptr<prover_runtime> rt;  ///< held until the job is waited for
  pending_ptr pending;
};

namespace {

int code(status s) { return static_cast<int>(s); }

void put_error(char* buf, size_t size, const std::string& message) {
  if (buf && size > 0) std::snprintf(buf, size, "%s", message.c_str());
}

void clear_error(char* buf, size_t size) {
  if (buf && size > 0) buf[0] = '\0';
}

proofline_proof* proof_of(proof_outcome&& o) {
  return new (std::nothrow) proofline_proof{std::move(o)};
}

/// Runs `f`, turning what it throws into a status (and the message into `buf`).
template <class F>
int status_of_call(char* buf, size_t size, F&& f) {
  try {
    clear_error(buf, size);
    f();
    return PROOFLINE_OK;
  } catch (const error& e) {
    put_error(buf, size, e.what());
    return code(e.code);
  } catch (const std::bad_alloc&) {
    put_error(buf, size, "out of memory");
    return PROOFLINE_ERROR_INPUT;
  } catch (const std::exception& e) {
    put_error(buf, size, e.what());
    return PROOFLINE_ERROR_PROVE;
  } catch (...) {
    put_error(buf, size, "unknown error");
    return PROOFLINE_ERROR_PROVE;
  }
}

unsigned priority_bits(unsigned flags) { return flags & 0xf0u; }

proofline::priority priority_of(unsigned flags) {
  switch (priority_bits(flags)) {
    case PROOFLINE_PRIORITY_LOW: return proofline::priority::low;
    case PROOFLINE_PRIORITY_HIGH: return proofline::priority::high;
    case PROOFLINE_PRIORITY_CRITICAL: return proofline::priority::critical;
    default: return proofline::priority::normal;
  }
}

/// The proof `f` returns, or one carrying what it threw (a proof that never
/// reached the runtime); returns its status.
template <class F>
int proof_or_error(proofline_proof** out, F&& f) {
  proof_outcome o;
  try {
    o = f();
  } catch (const error& e) {
    o = failed_outcome(e.code, e.what());
    o.witness_length = e.witness_length;
  } catch (const std::bad_alloc&) {
    o = failed_outcome(status::input, "out of memory");
  } catch (const std::exception& e) {
    o = failed_outcome(status::prove, e.what());
  } catch (...) {
    o = failed_outcome(status::prove, "unknown error");
  }
  const int result = code(o.code);
  if (out) *out = proof_of(std::move(o));
  return result;
}

/// proofline_submit and proofline_submit_input: the checks and the job or
/// callback they share around `submit` (one of the runtime's submissions).
template <class Submit>
int submit_with(const char* fn, proofline_key* key, unsigned flags, proofline_callback callback,
                void* user, proofline_job** job, Submit&& submit) {
  if (job) *job = nullptr;
  return status_of_call(nullptr, 0, [&] {
    if (!key) throw error(status::argument, std::string(fn) + ": key is NULL");
    if (!callback == !job)
      throw error(status::argument, std::string(fn) + ": give a callback or a job, not both");
    auto rt = key->rt.lock();
    if (!rt) throw error(status::state, std::string(fn) + ": the key's runtime is closed");
    submit_options opts;
    opts.prio = priority_of(flags);
    opts.borrow = (flags & PROOFLINE_SUBMIT_BORROW) != 0;
    pending_proof::callback done;
    if (callback)
      done = [callback, user](proof_outcome&& o) { callback(proof_of(std::move(o)), user); };
    auto pending = submit(*rt, opts, std::move(done));
    if (job) *job = new proofline_job{std::move(rt), std::move(pending)};
  });
}

}  // namespace

extern "C" {

const char* proofline_version(void) {
#ifndef PROOFLINE_VERSION
#define PROOFLINE_VERSION "unknown"
#endif
#ifndef PROOFLINE_COMMIT
#define PROOFLINE_COMMIT "unknown"
#endif
  return "proofline " PROOFLINE_VERSION " (" PROOFLINE_COMMIT ")";
}

int proofline_open(const char* options, proofline_runtime** out, char* err, size_t err_size) {
  if (out) *out = nullptr;
  return status_of_call(err, err_size, [&] {
    if (!out) throw error(status::argument, "proofline_open: out is NULL");
    auto rt = std::make_shared<prover_runtime>(options ? options : "");
    *out = new proofline_runtime{std::move(rt)};
  });
}

void proofline_close(proofline_runtime* rt) {
  if (!rt) return;
  std::unique_ptr<proofline_runtime> held(rt);
  try {
    if (rt->rt->on_completion_thread()) {
      // From a callback: the close waits for the callbacks' own thread, so
      // it runs on a thread of its own and this call returns at once.
      std::thread([r = std::move(rt->rt)]() mutable { r->close(); }).detach();
      return;
    }
    rt->rt->close();
  } catch (...) {
  }
  // The runtime stops once no call still holds it.
}

int proofline_key_load_file(proofline_runtime* rt, const char* path, proofline_key** out,
                            char* err, size_t err_size) {
  if (out) *out = nullptr;
  return status_of_call(err, err_size, [&] {
    if (!rt || !path || !out)
      throw error(status::argument, "proofline_key_load_file: a NULL argument");
    auto key = rt->rt->load_file(path);
    *out = new proofline_key{rt->rt, std::move(key)};
  });
}

int proofline_key_load(proofline_runtime* rt, const void* zkey, size_t size, proofline_key** out,
                       char* err, size_t err_size) {
  if (out) *out = nullptr;
  return status_of_call(err, err_size, [&] {
    if (!rt || !zkey || !out) throw error(status::argument, "proofline_key_load: a NULL argument");
    auto key = rt->rt->load_bytes(zkey, size);
    *out = new proofline_key{rt->rt, std::move(key)};
  });
}

void proofline_key_release(proofline_key* key) {
  if (!key) return;
  try {
    if (auto rt = key->rt.lock()) rt->release(*key->key);
  } catch (...) {
  }
  delete key;
}

const char* proofline_key_curve(const proofline_key* key) {
  if (!key) return "";
  return proofline::zk::visit_curve(key->key->key->info.curve,
                                    [](auto curve) { return decltype(curve)::snarkjs_name; });
}

size_t proofline_key_public_count(const proofline_key* key) {
  return key ? key->key->key->info.n_public : 0;
}

size_t proofline_key_witness_count(const proofline_key* key) {
  return key ? key->key->key->info.n_vars : 0;
}

int proofline_prove(proofline_key* key, const void* wtns, size_t size, proofline_proof** out) {
  if (out) *out = nullptr;
  return proof_or_error(out, [&] {
    if (!key || !out) throw error(status::argument, "proofline_prove: a NULL argument");
    auto rt = key->rt.lock();
    if (!rt) throw error(status::state, "proofline_prove: the key's runtime is closed");
    return rt->prove(*key->key, wtns, size);
  });
}

int proofline_submit(proofline_key* key, const void* wtns, size_t size, unsigned flags,
                     proofline_callback callback, void* user, proofline_job** job) {
  return submit_with("proofline_submit", key, flags, callback, user, job,
                     [&](prover_runtime& rt, const submit_options& opts, pending_proof::callback done) {
                       return rt.submit(*key->key, wtns, size, opts, std::move(done));
                     });
}

int proofline_prove_input(proofline_key* key, const char* generator, const void* input,
                          size_t size, proofline_proof** out) {
  if (out) *out = nullptr;
  return proof_or_error(out, [&] {
    if (!key || !generator || !out)
      throw error(status::argument, "proofline_prove_input: a NULL argument");
    auto rt = key->rt.lock();
    if (!rt) throw error(status::state, "proofline_prove_input: the key's runtime is closed");
    return rt->prove_input(*key->key, generator, input, size);
  });
}

int proofline_submit_input(proofline_key* key, const char* generator, const void* input,
                           size_t size, unsigned flags, proofline_callback callback, void* user,
                           proofline_job** job) {
  return submit_with("proofline_submit_input", key, flags, callback, user, job,
                     [&](prover_runtime& rt, const submit_options& opts, pending_proof::callback done) {
                       if (!generator)
                         throw error(status::argument, "proofline_submit_input: generator is NULL");
                       return rt.submit_input(*key->key, generator, input, size, opts,
                                              std::move(done));
                     });
}

int proofline_wait(proofline_job* job, proofline_proof** out) {
  if (out) *out = nullptr;
  if (!job) return proof_or_error(out, []() -> proof_outcome {
    throw error(status::argument, "proofline_wait: job is NULL");
  });
  std::unique_ptr<proofline_job> held(job);
  return proof_or_error(out, [&] {
    if (job->rt->on_completion_thread())
      throw error(status::state, "proofline_wait inside a completion callback would wait for itself");
    return job->pending->wait();
  });
}

int proofline_proof_status(const proofline_proof* p) {
  return p ? code(p->outcome.code) : PROOFLINE_ERROR_ARGUMENT;
}

const char* proofline_proof_json(const proofline_proof* p) {
  return p && p->outcome.code == status::ok ? p->outcome.proof_json.c_str() : nullptr;
}

const char* proofline_proof_public_json(const proofline_proof* p) {
  return p && p->outcome.code == status::ok ? p->outcome.public_json.c_str() : nullptr;
}

const char* proofline_proof_error(const proofline_proof* p) {
  return p ? p->outcome.message.c_str() : "no proof (NULL)";
}

const char* proofline_proof_backend(const proofline_proof* p) {
  return p ? p->outcome.backend.c_str() : "";
}

double proofline_proof_ms(const proofline_proof* p) { return p ? p->outcome.ms : 0; }

int proofline_proof_verified(const proofline_proof* p) { return p && p->outcome.verified; }

void proofline_proof_free(proofline_proof* p) { delete p; }

}  // extern "C"
