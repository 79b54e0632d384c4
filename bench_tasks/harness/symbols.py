"""What a candidate's host code may import: the rule of the static symbol check, and what a refusal says.

What the check is for. The OS sandbox (sandbox.py) is the security boundary: it holds whatever the code
does. The symbol check keeps the *work* inside the candidate's kernels:

1. no vendor compute: cuBLAS(Lt), cuDNN, cuSPARSE, cuFFT, cuRAND's host API, cuSOLVER, NCCL, NPP, host
   BLAS/LAPACK, and CUTLASS/CuTe (NVIDIA's GEMM templates; not shipped with the toolkit either) are refused
   wherever they are referenced. CUB, Thrust, cooperative groups and cuda::std are the toolkit's building
   blocks: their code is compiled into the candidate's own kernels, so they are the candidate's work;
2. no result computed on the host by a library: host threads and OpenMP are refused (a plain host loop has
   no symbol: the timing and the roofline floor see it);
3. as a second line behind the sandbox, no process, file, network or environment call made on purpose, and
   no runtime call that would break the harness (cudaDeviceReset, …) or the harness's own functions.

How. Every undefined symbol of the candidate's object is classified: a refusal (the classes above, each
with the construct named and the fix), else allowed when it is on the allowlist of what ordinary host code
compiles to (CUDA runtime, C math, C++ runtime and standard library minus files and threads, libc memory and
string functions, formatted output to stdout/stderr, `exit`), else refused as "not on the allowlist".
The allowlist holds what the host compiler and the toolkit's headers really emit: nvcc's host stub of a
plain `__device__` function calls `exit`; `_FORTIFY_SOURCE` turns `memcpy`/`fprintf`/`snprintf` into
`__memcpy_chk`/`__fprintf_chk`/`__snprintf_chk` (allowed exactly when the plain function is); `new[]`
references `__cxa_throw_bad_array_new_length`; `<iostream>` brings `std::ios_base::Init` and `std::cerr`.

The toolkit headers' one non-compute import, NVTX's loader in CUB and Thrust (`getenv`, `dlopen`, `dlsym`,
`dlclose`, `sched_yield`), is compiled out (`-DNVTX_DISABLE`, CANDIDATE_DEFINES) rather than allowed: a symbol
cannot be attributed to the header that referenced it soundly (inlined header code lands in the candidate's
own functions, and `#line` can name any file), so the same names stay refused when the candidate calls them.
"""

from __future__ import annotations

import re

# Compiled into every candidate: removes NVTX's loader (getenv, dlopen, ...) from CUB and Thrust.
CANDIDATE_DEFINES = ("-DNVTX_DISABLE",)

# --- refusals, checked first -------------------------------------------------------------------------

# prefix (lower case) -> (library, the fix)
_VENDOR = {
    "cublaslt": ("cuBLASLt", "write the GEMM yourself"),
    "cublas": ("cuBLAS", "write the GEMM (or the BLAS operation) yourself"),
    "cudnn": ("cuDNN", "write the convolution or layer yourself"),
    "cusparse": ("cuSPARSE", "write the sparse kernel yourself"),
    "cufft": ("cuFFT", "write the FFT yourself"),
    "curand": ("cuRAND's host API", "draw random numbers in your kernel (curand_kernel.h's device functions are fine)"),
    "cusolver": ("cuSOLVER", "write the solver yourself"),
    "nccl": ("NCCL", "the task runs on one GPU: remove the collective"),
    "npp": ("NPP", "write the image kernel yourself"),
    "cblas_": ("a host BLAS", "the result must be computed on the GPU"),
    "lapacke_": ("a host LAPACK", "the result must be computed on the GPU"),
    "openblas": ("OpenBLAS", "the result must be computed on the GPU"),
    "mkl_": ("MKL", "the result must be computed on the GPU"),
}
_FORTRAN_BLAS = re.compile(r"^[sdcz](gemm|gemv|axpy|dot|scal|trsm|syrk|ger|getrf|potrf|gesv)_$")
# C++ namespaces (as they appear in mangled names) of vendor template libraries.
_VENDOR_NAMESPACES = {"7cutlass": "CUTLASS", "4cute": "CuTe"}

# Runtime calls that could break the harness or reach beyond kernels and memory: name -> why.
DENIED_RUNTIME = {
    "cudaDeviceReset": "it would destroy the harness's CUDA context and buffers",
    "cudaGetDriverEntryPoint": "it reaches the driver API around the runtime",
    "cudaGetDriverEntryPointByVersion": "it reaches the driver API around the runtime",
    "cudaSetDeviceFlags": "the harness owns the device's flags",
    "cudaProfilerStart": "the harness owns profiling",
    "cudaProfilerStop": "the harness owns profiling",
    "cudaIpcOpenMemHandle": "it reaches another process's memory",
    "cudaIpcGetMemHandle": "it shares memory with another process",
    "cudaLaunchHostFunc": "it runs host code outside the timed stream order (compute on the GPU)",
    "cudaStreamAddCallback": "it runs host code outside the timed stream order (compute on the GPU)",
    "cudaHostRegister": "it pins memory the harness allocated",
    "cudaImportExternalMemory": "it maps memory from outside the process",
}

# Host calls refused on purpose (the sandbox would stop them too): name -> what kind of call it is.
_FILE = "open or write files"
_PROCESS = "start, signal or replace processes"
_NETWORK = "use the network"
_ENV = "read or change the environment or load libraries"
_THREADS = "compute on host threads"
_SYSCALL = "make system calls"
_HOST_CALLS: dict[str, str] = {}
for _kind, _names in {
    _FILE: "fopen fopen64 freopen fdopen open open64 openat creat fwrite fread fgets fgetc fscanf getline read write pread "
    "pwrite close unlink remove rename mkdir rmdir opendir readdir stat lstat fstat truncate ftruncate mmap munmap mprotect "
    "tmpfile mkstemp chmod chown symlink link dup dup2 ioctl fcntl sendfile",
    _PROCESS: "system popen pclose fork vfork clone execl execle execlp execv execve execvp execvpe posix_spawn posix_spawnp "
    "kill raise signal sigaction ptrace setuid setgid prctl _exit _Exit quick_exit",
    _NETWORK: "socket connect bind listen accept accept4 send sendto sendmsg recv recvfrom recvmsg getaddrinfo gethostbyname",
    _ENV: "getenv secure_getenv setenv unsetenv putenv clearenv dlopen dlsym dlvsym dlclose dlerror dladdr environ __environ",
    _THREADS: "pthread_create omp_get_thread_num omp_get_num_threads omp_set_num_threads",
    _SYSCALL: "syscall",
}.items():
    _HOST_CALLS |= dict.fromkeys(_names.split(), _kind)
_HOST_PREFIXES = {"GOMP_": _THREADS, "omp_": _THREADS, "__kmpc_": _THREADS}
# C++ standard library pieces that open files or start threads (substrings of their mangled names).
_STD_REFUSED = {
    "basic_ofstream": _FILE,
    "basic_ifstream": _FILE,
    "basic_fstream": _FILE,
    "basic_filebuf": _FILE,
    "10filesystem": _FILE,
    "13random_device": "read the system's entropy source (seed from the task's inputs or a constant)",
    "6thread": _THREADS,
    "5async": _THREADS,
}

# --- the allowlist -------------------------------------------------------------------------------------

_ALLOWED_EXACT = {
    # C++ runtime support
    "__dso_handle",
    "_Unwind_Resume",
    "__stack_chk_fail",
    "__tls_get_addr",
    "_GLOBAL_OFFSET_TABLE_",
    "__gxx_personality_v0",
    # host memory, strings and plain output
    "malloc",
    "calloc",
    "realloc",
    "free",
    "posix_memalign",
    "aligned_alloc",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "memchr",
    "strlen",
    "strnlen",
    "strcmp",
    "strncmp",
    "strcpy",
    "strncpy",
    "strcat",
    "strncat",
    "strchr",
    "strrchr",
    "strstr",
    "strerror",
    "strtol",
    "strtoul",
    "strtoll",
    "strtoull",
    "strtof",
    "strtod",
    "sscanf",
    "atoi",
    "atol",
    "atof",
    "abs",
    "labs",
    "llabs",
    "qsort",
    "bsearch",
    "rand",
    "srand",
    "clock",
    "clock_gettime",
    "gettimeofday",
    "time",
    "printf",
    "vprintf",
    "puts",
    "putchar",
    "sprintf",
    "snprintf",
    "vsprintf",
    "vsnprintf",
    # error prints to the driver's own stdout/stderr (captured into the log like printf): the CUDA error-check
    # idiom `fprintf(stderr, ...); exit(1);` of most hand-written and LLM-written kernels; no file can be opened
    "fprintf",
    "vfprintf",
    "fputs",
    "fputc",
    "fwrite_unlocked",
    "fflush",
    "stderr",
    "stdout",
    # ending the process: the evaluation then reads `runtime_error` ("ended early"); nvcc's host stub of a
    # plain __device__ function calls exit
    "exit",
    "abort",
    "atexit",
    "__assert_fail",
}
_MATH = (  # noqa: SIM905 - one line of names reads better than 48 quoted items
    "sqrt cbrt exp exp2 expm1 log log2 log10 log1p pow fabs floor ceil round trunc fmod fmin fmax "
    "sin cos tan asin acos atan atan2 sinh cosh tanh erf erfc lgamma tgamma hypot ldexp frexp "
    "modf rint lrint llrint lround llround nearbyint copysign fma remainder scalbn ilogb logb"
).split()
_ALLOWED_EXACT |= set(_MATH) | {m + "f" for m in _MATH} | {"__" + m + "_finite" for m in _MATH}
_ALLOWED_EXACT |= {"sincos", "sincosf"}  # what GCC makes of sin(x) and cos(x) of one x (the FFT baseline's twiddles)
_ALLOWED_PREFIXES = (
    "cuda",  # the CUDA runtime (minus DENIED_RUNTIME)
    "__cuda",  # nvcc's registration of kernels and device variables
    "__nv_",
    "__cxa_",  # the C++ ABI: guards, exceptions, atexit, new[]'s length check
    # the C++ standard library (minus _STD_REFUSED): new/delete, exceptions, strings, iostream to cout/cerr,
    # and the type information and vtables the C++ ABI references
    "_Znw",
    "_Zna",
    "_Zdl",
    "_Zda",
    "_ZSt",
    "_ZNSt",
    "_ZNKSt",
    "_ZNSo",
    "_ZNKSo",
    "_ZNSi",
    "_ZNSs",
    "_ZNKSs",
    "_ZTISt",
    "_ZTSSt",
    "_ZTVSt",
    "_ZTVN10__cxxabiv",
    "_ZTIN10__cxxabiv",
    "_ZN4dim3",
)
_FORTIFIED = re.compile(r"^__(\w+)_chk$")  # _FORTIFY_SOURCE's checked variant of an allowed function

README_SECTION = "bench_tasks/README.md, 'What candidate host code may call'"


def refusal(symbol: str) -> str | None:
    """Why the candidate may not import `symbol` (a name from `nm -u`, version suffix removed) and what to
    do instead; None when it may."""
    low = symbol.lower()
    for prefix, (library, fix) in _VENDOR.items():
        if low.startswith(prefix):
            return f"`{symbol}` is {library}, a vendor library: {fix}"
    if _FORTRAN_BLAS.match(symbol):
        return f"`{symbol}` is a host BLAS/LAPACK routine, a vendor library: the result must be computed on the GPU"
    for ns, library in _VENDOR_NAMESPACES.items():
        if symbol.startswith("_Z") and f"N{ns}" in symbol:
            return f"`{symbol}` is from {library}, NVIDIA's GEMM template library (vendor compute): write the kernel yourself"
    if symbol in DENIED_RUNTIME:
        return f"the CUDA runtime call `{symbol}` is not allowed: {DENIED_RUNTIME[symbol]}; remove it"
    base = re.sub(r"^__isoc\d\d_", "", symbol)  # glibc's C99/C23 names of strtol, sscanf, ...
    fortified = _FORTIFIED.match(base)
    base = fortified.group(1) if fortified else base
    kind = _HOST_CALLS.get(base) or next((k for p, k in _HOST_PREFIXES.items() if base.startswith(p)), None)
    if kind:
        return f"host function `{base}` is not allowed: candidate code may not {kind}; do the work in your kernels"
    if symbol.startswith("_Z"):
        kind = next((k for part, k in _STD_REFUSED.items() if part in symbol), None)
        if kind:
            return f"`{symbol}` is not allowed: candidate code may not {kind}; do the work in your kernels"
    if base in _ALLOWED_EXACT or base.startswith(_ALLOWED_PREFIXES):
        return None
    if symbol.startswith(("cm_", "_ZN2cm")):
        return f"`{symbol}` is the harness's own code: a candidate may not call it; remove the call"
    return (
        f"host function `{symbol}` is not on the allowlist (host code may launch kernels, manage device memory, "
        f"print to stdout/stderr and use the C/C++ runtime: {README_SECTION}): remove the call or do the work in a kernel"
    )


def refusals(undefined: list[str], provided: frozenset[str] = frozenset()) -> dict[str, str]:
    """The refused symbols among `undefined` (in order, each once) with their reasons. `provided`: symbols the
    candidate is linked against and may use as they are (the baseline's kernels and device functions, issue 29
    class 4: the link step passes them)."""
    found: dict[str, str] = {}
    for name in undefined:
        base = name.split("@")[0]
        if base in provided:
            continue
        why = refusal(base)
        if why and base not in found:
            found[base] = why
    return found
