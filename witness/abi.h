/* The C interface of a proofline witness generator: the shared object that
 * `proofline witness build` makes from the C++ code of `circom --c`. The
 * object is the circuit's code compiled together with proofline's own entry
 * point (witness/entry.cpp); proofline loads it with dlopen and calls only
 * these functions. Every other symbol in the object is local, so several
 * generators can be loaded into one process.
 *
 * Field elements are n8 = proofline_wg_field_bytes() bytes, little-endian,
 * in standard (not Montgomery) form, as in a .wtns file. */
#ifndef PROOFLINE_WITNESS_ABI_H
#define PROOFLINE_WITNESS_ABI_H

#include <stdint.h>

/* Bumped when a function below changes meaning. */
#define PROOFLINE_WG_ABI_VERSION 1u

#ifdef __cplusplus
extern "C" {
#endif

/* One input signal of the circuit's main component (an array counts once). */
typedef struct {
  uint64_t hash;    /* FNV-1a 64 of the signal's name, as circom hashes JSON keys */
  uint64_t offset;  /* index of its first value among all input values */
  uint64_t size;    /* number of values (1 for a scalar) */
  const char* name; /* "in", "a.b": from the circuit's .sym file; NULL when built without it */
} proofline_wg_input;

uint32_t proofline_wg_abi_version(void);
/* 1: the field code is circom's x86-64 assembly (needs ADX and BMI2); 0: --no_asm. */
uint32_t proofline_wg_uses_asm(void);
uint32_t proofline_wg_field_bytes(void);
/* Writes the prime, field_bytes() bytes. */
void proofline_wg_prime(uint8_t* out);
/* Values in a witness (what a .wtns of this circuit holds, the key's n_vars). */
uint64_t proofline_wg_witness_count(void);
/* Signals the computation holds (witness values and intermediate ones). */
uint64_t proofline_wg_signal_count(void);
/* Every input value, arrays flattened. */
uint64_t proofline_wg_input_count(void);
/* Bytes one computation allocates, estimated from the signal and component counts. */
uint64_t proofline_wg_work_bytes(void);
/* Input signals, in the order of their values. */
uint32_t proofline_wg_input_signals(void);
/* Fills *out with input signal i (< input_signals()); 0 on success. */
int proofline_wg_input_signal(uint32_t i, proofline_wg_input* out);
/* Computes a witness from `inputs` (input_count() elements, in the order of
 * input_signal's offsets, each below the prime) into `witness`
 * (witness_count() elements). Returns 0, or 1 when the computation failed
 * (a failed assert of the circuit), with a message in `error` (at most
 * error_size bytes, NUL-terminated). Safe to call from several threads at
 * once; each call allocates its own signals. */
int proofline_wg_calculate(const uint8_t* inputs, uint8_t* witness, char* error,
                           uint64_t error_size);

#ifdef __cplusplus
}
#endif

#endif
