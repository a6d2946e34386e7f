/* Proves witnesses with libproofline's C API: the key is loaded once and
 * stays resident (on every GPU), each witness is submitted from its own
 * thread-free call and the proofs come back as snarkjs's proof.json text.
 *
 *   cc prove.c $(pkg-config --cflags --libs proofline) -o prove
 *   ./prove circuit.zkey witness_0.wtns [witness_1.wtns ...]
 *
 * writes proof_<i>.json and public_<i>.json beside the working directory. */
#include <proofline/proofline.h>

#include <stdio.h>
#include <stdlib.h>

static char* read_file(const char* path, size_t* size) {
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
  *size = (size_t)n;
  return buf;
}

static int write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  if (!f) return 1;
  fputs(text, f);
  return fclose(f) != 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s circuit.zkey witness.wtns...\n", argv[0]);
    return 2;
  }
  char err[1024];
  proofline_runtime* rt = NULL;
  /* NULL options: the CUDA backend when a GPU is visible, else the CPU. */
  if (proofline_open(getenv("PROOFLINE_OPTIONS"), &rt, err, sizeof err) != PROOFLINE_OK) {
    fprintf(stderr, "proofline_open: %s\n", err);
    return 1;
  }
  proofline_key* key = NULL;
  if (proofline_key_load_file(rt, argv[1], &key, err, sizeof err) != PROOFLINE_OK) {
    fprintf(stderr, "%s\n", err);
    proofline_close(rt);
    return 2;
  }
  int n = argc - 2, failed = 0;
  /* Submit every witness, then wait: the runtime pipelines them. */
  proofline_job** jobs = calloc((size_t)n, sizeof *jobs);
  char** witnesses = calloc((size_t)n, sizeof *witnesses);
  for (int i = 0; i < n; ++i) {
    size_t size = 0;
    witnesses[i] = read_file(argv[i + 2], &size);
    if (!witnesses[i]) {
      fprintf(stderr, "%s: cannot read\n", argv[i + 2]);
      failed = 1;
      continue;
    }
    if (proofline_submit(key, witnesses[i], size, PROOFLINE_SUBMIT_BORROW, NULL, NULL,
                         &jobs[i]) != PROOFLINE_OK)
      failed = 1;
  }
  for (int i = 0; i < n; ++i) {
    if (!jobs[i]) continue;
    proofline_proof* proof = NULL;
    if (proofline_wait(jobs[i], &proof) == PROOFLINE_OK) {
      char name[64];
      snprintf(name, sizeof name, "proof_%d.json", i);
      write_file(name, proofline_proof_json(proof));
      snprintf(name, sizeof name, "public_%d.json", i);
      write_file(name, proofline_proof_public_json(proof));
      printf("%s: proved on %s in %.1f ms\n", argv[i + 2], proofline_proof_backend(proof),
             proofline_proof_ms(proof));
    } else {
      fprintf(stderr, "%s: %s\n", argv[i + 2], proofline_proof_error(proof));
      failed = 1;
    }
    proofline_proof_free(proof);
    free(witnesses[i]);
  }
  free(jobs);
  free(witnesses);
  proofline_key_release(key);
  proofline_close(rt);
  return failed;
}
