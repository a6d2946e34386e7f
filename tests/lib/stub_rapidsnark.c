/* A stand-in librapidsnark.so with rapidsnark's prover symbols that proves
 * nothing: rapidsnark_client links against it, so that the test can show
 * the client runs against proofline's library without being rebuilt. */
#include <stdio.h>

static int refuse(char* error_msg, unsigned long long size) {
  if (error_msg && size) snprintf(error_msg, (size_t)size, "stand-in librapidsnark: no prover");
  return 1;
}

int groth16_public_size_for_zkey_file(const char* f, unsigned long long* s, char* e,
                                      unsigned long long n) {
  (void)f;
  (void)s;
  return refuse(e, n);
}
void groth16_proof_size(unsigned long long* s) { *s = 0; }
int groth16_prover_create_zkey_file(void** p, const char* f, char* e, unsigned long long n) {
  (void)p;
  (void)f;
  return refuse(e, n);
}
int groth16_prover_prove(void* p, const void* w, unsigned long long ws, char* pb,
                         unsigned long long* ps, char* ub, unsigned long long* us, char* e,
                         unsigned long long n) {
  (void)p, (void)w, (void)ws, (void)pb, (void)ps, (void)ub, (void)us;
  return refuse(e, n);
}
void groth16_prover_destroy(void* p) { (void)p; }
