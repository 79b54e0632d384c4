// Adversarial: runs a shell command from host code.
#include <cstdlib>
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) { system("touch /tmp/cudamaster-pwned"); }
