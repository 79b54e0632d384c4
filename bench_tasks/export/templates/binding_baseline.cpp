// The PyTorch extension module of the task's baseline (the oracle of a custom task's pytest): binding.cpp with
// the baseline's entry (a file of its own, so that the two extensions' objects never share a name).
#define CMX_BASELINE 1
#include "binding.cpp"
