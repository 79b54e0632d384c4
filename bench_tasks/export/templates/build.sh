#!/usr/bin/env bash
# Build without CMake (nvcc and objcopy only), the same steps as CMakeLists.txt: ./build.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-build}
mkdir -p "$out"
arch=${CMX_GENCODE:--gencode=arch=compute_90,code=sm_90}
flags="-O3 -DNVTX_DISABLE -std=c++17 $arch"
kernel=$(cat kernel_source.txt)
entry=$(cat kernel_entry.txt)
nvcc $flags --pre-include kernel_prelude.h -c "$kernel" -o "$out/kernel.o"
objcopy --keep-global-symbol="$entry" -R .group "$out/kernel.o" "$out/kernel_local.o"
nvcc $flags -c baseline.cu -o "$out/oracle.o"
for prog in test_kernel bench_kernel; do
  nvcc $flags -I. "$prog.cu" "$out/oracle.o" "$out/kernel_local.o" -o "$out/$prog"
done
echo "built $out/test_kernel and $out/bench_kernel"
