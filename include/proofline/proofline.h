/*
 * proofline: a Groth16 proving runtime (BN254 and BLS12-381, CUDA GPUs or
 * the CPU). This is its C API: a handle owns one runtime (an actor system,
 * the prover backends and a memory budget); keys loaded into it stay
 * resident, on every GPU, until released; proofs come back as the JSON
 * text snarkjs writes (proof.json, public.json), each checked by pairing
 * before it is returned unless the options say "no-verify".
 *
 *   proofline_runtime* rt;
 *   char err[512];
 *   if (proofline_open("{\"backend\": \"auto\"}", &rt, err, sizeof err)) ...
 *   proofline_key* key;
 *   if (proofline_key_load_file(rt, "circuit.zkey", &key, err, sizeof err)) ...
 *   proofline_proof* p;
 *   int rc = proofline_prove(key, wtns, wtns_size, &p);   // blocking
 *   if (rc == PROOFLINE_OK) puts(proofline_proof_json(p));
 *   else fprintf(stderr, "%s\n", proofline_proof_error(p));
 *   proofline_proof_free(p);
 *   // or from the circuit's inputs, with a `proofline witness build` object:
 *   rc = proofline_prove_input(key, "circuit.so", input_json, strlen(input_json), &p);
 *   proofline_key_release(key);
 *   proofline_close(rt);
 *
 * Threads: every function may be called from any thread, and many threads
 * may prove on one handle at once; their proofs are pipelined through the
 * runtime (witness reading and a, b, c on the synthesizers beside the GPU),
 * not serialized. Callbacks of proofline_submit run on the handle's
 * completion thread, one at a time.
 *
 * Quiet: the library prints nothing and installs no signal handler unless
 * the options ask for a log ("log": "stderr").
 */
#ifndef PROOFLINE_PROOFLINE_H
#define PROOFLINE_PROOFLINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PROOFLINE_API __attribute__((visibility("default")))
#else
#define PROOFLINE_API
#endif

/* Status codes: every function that can fail returns one. */
#define PROOFLINE_OK 0
/* A NULL or malformed argument, or options that are not understood. */
#define PROOFLINE_ERROR_ARGUMENT 1
/* The key or witness is unreadable, malformed or does not fit the key. */
#define PROOFLINE_ERROR_INPUT 2
/* Proving failed on every backend it was tried on (the message says why). */
#define PROOFLINE_ERROR_PROVE 3
/* The handle was closed, or the proof cancelled, before it finished. */
#define PROOFLINE_ERROR_CANCELLED 4
/* The runtime could not start (for example "backend": "cuda" without a GPU). */
#define PROOFLINE_ERROR_BACKEND 5
/* The call cannot be made here (a blocking call on the completion thread). */
#define PROOFLINE_ERROR_STATE 6

/* proofline_submit flags. */
/* The witness buffer stays valid until the proof completes: it is read in
 * place instead of copied. */
#define PROOFLINE_SUBMIT_BORROW 0x1u
/* Scheduling priority (default normal): higher goes first. */
#define PROOFLINE_PRIORITY_LOW 0x10u
#define PROOFLINE_PRIORITY_HIGH 0x20u
#define PROOFLINE_PRIORITY_CRITICAL 0x30u

typedef struct proofline_runtime proofline_runtime;
typedef struct proofline_key proofline_key;
typedef struct proofline_proof proofline_proof;
typedef struct proofline_job proofline_job;

/* Called once per submitted witness with its proof, which the callback owns
 * (free it with proofline_proof_free). */
typedef void (*proofline_callback)(proofline_proof* proof, void* user);

/* "proofline 0.1.0 (<commit>)". */
PROOFLINE_API const char* proofline_version(void);

/* Starts a runtime. `options` is NULL or a JSON object keyed by the options
 * of `proofline run` without "--": "backend" ("auto", "cpu", "cuda"), "gpus"
 * ("all", "0,1"), "gpu-memory" ("40G"), "gpu-lanes", "memory-budget" ("8G"
 * or bytes), "synthesizers", "finalizers", "cpu-threads", "synthesis-ahead",
 * "no-verify" (true: no pairing self-check), plus "log" ("none", the
 * default, or "stderr") and "log-level" ("info", "debug", ...). On failure
 * *out is NULL and `error` (when not NULL) holds a NUL-terminated message of
 * at most error_size bytes. */
PROOFLINE_API int proofline_open(const char* options, proofline_runtime** out, char* error,
                                 size_t error_size);

/* Cancels what is still in flight (its proofs complete with
 * PROOFLINE_ERROR_CANCELLED, callbacks included), waits for it and stops the
 * runtime. Keys not yet released then only free themselves; their proofs
 * fail with PROOFLINE_ERROR_STATE. Called from a callback, it returns at
 * once and the close completes on a thread of its own. NULL is ignored. */
PROOFLINE_API void proofline_close(proofline_runtime* rt);

/* Loads a .zkey from a file (checked whole: every point on its curve) and
 * makes it ready on every GPU; the key stays resident until released. */
PROOFLINE_API int proofline_key_load_file(proofline_runtime* rt, const char* path,
                                          proofline_key** out, char* error, size_t error_size);

/* The same from bytes in memory, copied: the buffer may go once it returns. */
PROOFLINE_API int proofline_key_load(proofline_runtime* rt, const void* zkey, size_t size,
                                     proofline_key** out, char* error, size_t error_size);

/* Releases a key; proofs still in flight with it finish first. NULL is ignored. */
PROOFLINE_API void proofline_key_release(proofline_key* key);

/* "bn128" or "bls12381", as snarkjs names the curve. */
PROOFLINE_API const char* proofline_key_curve(const proofline_key* key);
/* Public signals of the circuit (nPublic). */
PROOFLINE_API size_t proofline_key_public_count(const proofline_key* key);
/* Values a witness for this key holds (nVars, the constant 1 included). */
PROOFLINE_API size_t proofline_key_witness_count(const proofline_key* key);

/* Proves one witness (.wtns bytes) and blocks until its proof is done.
 * *out is always set (free it with proofline_proof_free), with the proof
 * or with the error; the return value is the proof's status. */
PROOFLINE_API int proofline_prove(proofline_key* key, const void* wtns, size_t size,
                                  proofline_proof** out);

/* Submits one witness and returns at once. Give exactly one of `callback`
 * (called with the proof on the completion thread) and `job` (then wait
 * for it with proofline_wait). The witness is copied unless `flags` has
 * PROOFLINE_SUBMIT_BORROW. */
PROOFLINE_API int proofline_submit(proofline_key* key, const void* wtns, size_t size,
                                   unsigned flags, proofline_callback callback, void* user,
                                   proofline_job** job);

/* Waits for a submitted job, frees it and hands over its proof, as
 * proofline_prove does. */
PROOFLINE_API int proofline_wait(proofline_job* job, proofline_proof** out);

/* Proves from a circuit's inputs instead of a witness. `input` is the text
 * of an input.json, as snarkjs reads it ({"a": "3", "b": ["1", "2"]}), and
 * `generator` the path of the witness generator `proofline witness build`
 * made from the circuit's `circom --c` output. The generator is opened and
 * checked against the key (the same prime and witness length) before
 * anything is submitted; then the witness is computed on the runtime's
 * synthesizers, pipelined with the GPU like any witness, and not kept.
 * Errors are PROOFLINE_ERROR_INPUT and name the problem: a generator of
 * another circuit (both files), a missing or unknown signal, a wrong array
 * length or a value that is not a field element (the signal), an assert of
 * the circuit that fails (circom's message). The input is copied unless
 * `flags` has PROOFLINE_SUBMIT_BORROW (proofline_prove_input reads it in
 * place). Otherwise as proofline_prove and proofline_submit. */
PROOFLINE_API int proofline_prove_input(proofline_key* key, const char* generator,
                                        const void* input, size_t size, proofline_proof** out);
PROOFLINE_API int proofline_submit_input(proofline_key* key, const char* generator,
                                         const void* input, size_t size, unsigned flags,
                                         proofline_callback callback, void* user,
                                         proofline_job** job);

/* A proof's status (PROOFLINE_OK or the error) and its parts: proof.json and
 * public.json as snarkjs writes them (NULL unless PROOFLINE_OK), the error
 * message ("" when PROOFLINE_OK), the backend that proved it ("cuda:0",
 * "cpu:0", "cpu:fallback") and the milliseconds from the call to the proof. */
PROOFLINE_API int proofline_proof_status(const proofline_proof* proof);
PROOFLINE_API const char* proofline_proof_json(const proofline_proof* proof);
PROOFLINE_API const char* proofline_proof_public_json(const proofline_proof* proof);
PROOFLINE_API const char* proofline_proof_error(const proofline_proof* proof);
PROOFLINE_API const char* proofline_proof_backend(const proofline_proof* proof);
PROOFLINE_API double proofline_proof_ms(const proofline_proof* proof);
/* Whether the proof was checked by pairing before it was returned. */
PROOFLINE_API int proofline_proof_verified(const proofline_proof* proof);
PROOFLINE_API void proofline_proof_free(proofline_proof* proof);

#ifdef __cplusplus
}
#endif

#endif /* PROOFLINE_PROOFLINE_H */
