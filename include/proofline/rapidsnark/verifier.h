/*
 * rapidsnark's verifier ABI, served by proofline: checks a Groth16 proof
 * (BN254 or BLS12-381) against its public signals and verification key, all
 * three NUL-terminated JSON text as snarkjs writes them.
 */
#ifndef PROOFLINE_RAPIDSNARK_VERIFIER_H
#define PROOFLINE_RAPIDSNARK_VERIFIER_H

#ifdef __cplusplus
extern "C" {
#endif

#define VERIFIER_VALID_PROOF 0x0
#define VERIFIER_INVALID_PROOF 0x1
#define VERIFIER_ERROR 0x2

/* VERIFIER_VALID_PROOF, VERIFIER_INVALID_PROOF (error_msg says why) or
 * VERIFIER_ERROR (unreadable input; error_msg says which and why). */
int groth16_verify(const char* proof, const char* inputs, const char* verification_key,
                   char* error_msg, unsigned long long error_msg_maxsize);

#ifdef __cplusplus
}
#endif

#endif /* PROOFLINE_RAPIDSNARK_VERIFIER_H */
