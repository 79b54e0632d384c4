// Adversarial: issues a system call with inline assembly, bypassing libc symbols.
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(39L) : "rcx", "r11", "memory");  // getpid
}
