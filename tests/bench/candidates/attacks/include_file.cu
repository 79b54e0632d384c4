// Attack (3): the compiler reads a server file (a secret in the data directory, a file of the repository,
// the compiler's own environment): nvcc prints the offending lines of an included file in its errors.
#include "@PATH@"
