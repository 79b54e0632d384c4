// Refused: B is a double* where the task has const float* B (a different ABI).
extern "C" void vector_add_optimized(const float* A, const double* B, float* C, int N) {}
