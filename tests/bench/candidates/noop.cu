// Adversarial: does nothing and returns at once.
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {}
