// The harness runtime's host code as one translation unit (plain C++: its kernels are in cm_kernels.cu),
// compiled once into an object (see compile.py).
#include "cm_runtime.h"
