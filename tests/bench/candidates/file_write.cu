// Adversarial: prints to stderr (allowed: the error-check idiom) and then writes a file with the same stdio calls
// (not allowed: fopen is not on the allowlist, whatever else from stdio is).
#include <cstdio>
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  fprintf(stderr, "vector_add_optimized: N = %d\n", N);
  FILE* f = fopen("/tmp/cudamaster-pwned", "w");
  if (f) fprintf(f, "pwned\n");
}
