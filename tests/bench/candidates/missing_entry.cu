// Defines the baseline's name instead of the _optimized entry point.
extern "C" void vector_add_fast(const float* A, const float* B, float* C, int N) {}
