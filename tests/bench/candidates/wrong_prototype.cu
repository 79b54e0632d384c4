// Takes (A, C, N): one argument short.
extern "C" void vector_add_optimized(const float* A, float* C, int N) {}
