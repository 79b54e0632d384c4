// The harness runtime as one translation unit, compiled once into an object (see compile.py).
#include "cm_runtime.cuh"
