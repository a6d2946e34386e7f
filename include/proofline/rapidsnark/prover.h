/*
 * rapidsnark's prover ABI, served by proofline (libproofline, installed also
 * as librapidsnark.so): a program built against rapidsnark's prover runs on
 * proofline unchanged. Declared here from rapidsnark's documented signatures.
 *
 * Buffer rules: on PROVER_ERROR_SHORT_BUFFER, *proof_size and *public_size
 * are set to the bytes needed, the terminating NUL included; on PROVER_OK
 * they are set to the bytes written, the NUL excluded. The public buffer
 * needs at most 82 * nPublic + 4 bytes (groth16_public_size_for_zkey_*), the
 * proof buffer at most groth16_proof_size's answer. Error messages are
 * NUL-terminated and cut to error_msg_maxsize bytes.
 *
 * Beyond rapidsnark: BLS12-381 keys as well as BN254; the CUDA backend when
 * a GPU is visible (PROOFLINE_OPTIONS, a JSON object of proofline_open's
 * options, chooses: {"backend": "cpu"}); every proof is checked by pairing
 * before it is returned; a prover made by groth16_prover_create_zkey_file
 * holds its own copy of the key. Prover objects may be used by many threads
 * at once.
 */
#ifndef PROOFLINE_RAPIDSNARK_PROVER_H
#define PROOFLINE_RAPIDSNARK_PROVER_H

#ifdef __cplusplus
extern "C" {
#endif

#define PROVER_OK 0x0
#define PROVER_ERROR 0x1
#define PROVER_ERROR_SHORT_BUFFER 0x2
#define PROVER_INVALID_WITNESS_LENGTH 0x3

/* The public signals' buffer size for a key in memory / in a file. */
int groth16_public_size_for_zkey_buf(const void* zkey_buffer, unsigned long long zkey_size,
                                     unsigned long long* public_size, char* error_msg,
                                     unsigned long long error_msg_maxsize);
int groth16_public_size_for_zkey_file(const char* zkey_fname, unsigned long long* public_size,
                                      char* error_msg, unsigned long long error_msg_maxsize);

/* A proof buffer size that holds any proof. */
void groth16_proof_size(unsigned long long* proof_size);

/* A prover object for a key in memory (copied) or in a file. */
int groth16_prover_create(void** prover_object, const void* zkey_buffer,
                          unsigned long long zkey_size, char* error_msg,
                          unsigned long long error_msg_maxsize);
int groth16_prover_create_zkey_file(void** prover_object, const char* zkey_file_path,
                                    char* error_msg, unsigned long long error_msg_maxsize);

/* Proves a witness (.wtns bytes) into proof and public JSON text. */
int groth16_prover_prove(void* prover_object, const void* wtns_buffer,
                         unsigned long long wtns_size, char* proof_buffer,
                         unsigned long long* proof_size, char* public_buffer,
                         unsigned long long* public_size, char* error_msg,
                         unsigned long long error_msg_maxsize);

void groth16_prover_destroy(void* prover_object);

/* One proof from a key in memory / in a file, without a prover object. */
int groth16_prover(const void* zkey_buffer, unsigned long long zkey_size,
                   const void* wtns_buffer, unsigned long long wtns_size, char* proof_buffer,
                   unsigned long long* proof_size, char* public_buffer,
                   unsigned long long* public_size, char* error_msg,
                   unsigned long long error_msg_maxsize);
int groth16_prover_zkey_file(const char* zkey_file_path, const void* wtns_buffer,
                             unsigned long long wtns_size, char* proof_buffer,
                             unsigned long long* proof_size, char* public_buffer,
                             unsigned long long* public_size, char* error_msg,
                             unsigned long long error_msg_maxsize);

#ifdef __cplusplus
}
#endif

#endif /* PROOFLINE_RAPIDSNARK_PROVER_H */
