/* A program written against rapidsnark's documented prover API (the
 * declarations of its prover.h) and nothing else: it proves a witness with a .zkey file the way rapidsnark's own
 * `prover` command does and writes proof.json and public.json. The suite
 * builds it against a stand-in librapidsnark.so and runs it, unchanged,
 * against proofline's (tests/lib/abi_swap.sh).
 *
 *   rapidsnark_client circuit.zkey witness.wtns proof.json public.json */
#include <stdio.h>
#include <stdlib.h>

#include "proofline/rapidsnark/prover.h"

static char* read_all(const char* path, unsigned long long* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char* buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (unsigned long long)n;
  return buf;
}

static int write_all(const char* path, const char* text, unsigned long long size) {
  FILE* f = fopen(path, "wb");
  if (!f) return 1;
  int bad = fwrite(text, 1, (size_t)size, f) != (size_t)size;
  return fclose(f) != 0 || bad;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s circuit.zkey witness.wtns proof.json public.json\n", argv[0]);
    return 2;
  }
  char error[1024];
  unsigned long long public_cap = 0, proof_cap = 0, wtns_size = 0;
  if (groth16_public_size_for_zkey_file(argv[1], &public_cap, error, sizeof error) != 0) {
    fprintf(stderr, "public size: %s\n", error);
    return 1;
  }
  groth16_proof_size(&proof_cap);
  void* prover = NULL;
  if (groth16_prover_create_zkey_file(&prover, argv[1], error, sizeof error) != 0) {
    fprintf(stderr, "create: %s\n", error);
    return 1;
  }
  char* wtns = read_all(argv[2], &wtns_size);
  if (!wtns) {
    fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 1;
  }
  char* proof = malloc(proof_cap);
  char* pub = malloc(public_cap);
  unsigned long long proof_size = proof_cap, public_size = public_cap;
  int rc = groth16_prover_prove(prover, wtns, wtns_size, proof, &proof_size, pub, &public_size,
                                error, sizeof error);
  if (rc != 0) {
    fprintf(stderr, "prove: code %d: %s\n", rc, error);
    return 1;
  }
  groth16_prover_destroy(prover);
  if (write_all(argv[3], proof, proof_size) || write_all(argv[4], pub, public_size)) {
    fprintf(stderr, "cannot write the outputs\n");
    return 1;
  }
  free(proof);
  free(pub);
  free(wtns);
  return 0;
}
