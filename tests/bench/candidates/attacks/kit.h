// Attack kit, put in front of every attack in this folder by tests/bench/test_sandbox.py (with the
// placeholders, @NAME@, filled in). It is itself attack (1)'s trick: raw system calls through a `syscall`
// instruction hidden in the operand of a `movabs` (bytes 0f 05 c3), reached by jumping into the middle of
// that instruction. objdump shows only the movabs, and no libc symbol is imported, so the static checks
// pass. Reports go to stderr unbuffered (the driver may _exit before stdio is flushed).
asm(".text\n"
    "cm_sys:\n"
    "  movq %rdi, %rax\n"
    "  movq %rsi, %rdi\n"
    "  movq %rdx, %rsi\n"
    "  movq %rcx, %rdx\n"
    "  leaq cm_hidden+2(%rip), %r11\n"
    "  jmp *%r11\n"
    "cm_hidden:\n"
    "  movabsq $0x9090909090c3050f, %rax\n"
    "  ret\n");
extern "C" long cm_sys(long nr, long a, long b, long c);  // (number, up to three arguments) -> result or -errno

enum { SYS_READ = 0, SYS_WRITE = 1, SYS_OPEN = 2, SYS_CLOSE = 3, SYS_SOCKET = 41, SYS_CONNECT = 42, SYS_FORK = 57,
       SYS_KILL = 62, SYS_GETPPID = 110, SYS_GETDENTS64 = 217 };
enum { CM_O_RDONLY = 0, CM_O_WRONLY = 01, CM_O_CREAT = 0100, CM_O_TRUNC = 01000, CM_O_DIRECTORY = 0200000 };

static long cm_len(const char* s) { long n = 0; while (s[n]) ++n; return n; }
static void cm_say(const char* s) { cm_sys(SYS_WRITE, 2, (long)s, cm_len(s)); }
static void cm_num(long v) {
  char b[24];
  int i = 23;
  b[i] = 0;
  unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
  do { b[--i] = (char)('0' + u % 10); u /= 10; } while (u);
  if (v < 0) b[--i] = '-';
  cm_say(b + i);
}
static void cm_report(const char* what, long rc) { cm_say("ATTACK "); cm_say(what); cm_say(" rc="); cm_num(rc); cm_say("\n"); }
static long cm_create(const char* path, const char* text) {  // the fd's result: >= 0 means the file was created
  long fd = cm_sys(SYS_OPEN, (long)path, CM_O_WRONLY | CM_O_CREAT | CM_O_TRUNC, 0644);
  if (fd >= 0) { cm_sys(SYS_WRITE, fd, (long)text, cm_len(text)); cm_sys(SYS_CLOSE, fd, 0, 0); }
  return fd;
}

// An honest vector_add, so that with a GPU the candidate is otherwise correct.
__global__ void cm_add_kernel(const float* A, const float* B, float* C, int N) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) C[i] = A[i] + B[i];
}
extern "C" void vector_add_optimized(const float* A, const float* B, float* C, int N) {
  int blocks = (N + 255) / 256;
  cm_add_kernel<<<blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks), 256>>>(A, B, C, N);
}
