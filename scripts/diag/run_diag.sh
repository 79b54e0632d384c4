#!/usr/bin/env bash
# Builds and runs the two diagnostics in scripts/diag/ (conv2d_cudnn_algos.cu, gemm_bf16_check.cu):
# binaries in $OUT/diag/, JSON lines appended to $OUT/diag/diag.jsonl, stderr (and build output) to
# $OUT/diag/diag.log. OUT defaults to /tmp/diag.
#
# Headers and libraries are looked up in, in order: $CUDNN_ROOT / $CUBLAS_ROOT (each a root with include/
# and lib/ or lib64/), the toolkit nvcc belongs to, /usr/include and /usr/lib/x86_64-linux-gnu, and the
# nvidia/*/ directories of pip wheels (nvidia-cudnn-cu13, nvidia-cublas) in python3's site-packages, like
# bench_tasks/harness/vendor.py. A missing header or library, a failed build or a failed step is
# reported as a JSON line and the script goes on with the next step.
#
# Environment: OUT, NVCC (default nvcc), STEP_TIMEOUT (seconds per step, default 200), CUDNN_ROOT, CUBLAS_ROOT,
# ONLY (conv or gemm: run just that part). Worst case, the conv step takes 60 + 8*20 + 60 s (every child
# timing out); on the H200 (cuDNN 9.14) FP32 took 87 s (FFT_TILING and the Find timed out), BF16 4 s.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-/tmp/diag}"
NVCC="${NVCC:-nvcc}"
STEP_TIMEOUT="${STEP_TIMEOUT:-200}"
ONLY="${ONLY:-}"
dir="$OUT/diag"
mkdir -p "$dir"
jsonl="$dir/diag.jsonl"
log="$dir/diag.log"
flags=(-O2 -std=c++17 -gencode=arch=compute_90,code=sm_90)

json() { printf '%s\n' "$1" >>"$jsonl"; printf '%s\n' "$1"; }
esc() { printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'; }

# Candidate roots (each may hold include/ and lib/ or lib64/).
roots=()
[ -n "${CUDNN_ROOT:-}" ] && roots+=("$CUDNN_ROOT")
[ -n "${CUBLAS_ROOT:-}" ] && roots+=("$CUBLAS_ROOT")
if nvcc_path="$(command -v "$NVCC" 2>/dev/null)"; then
  top="$(cd "$(dirname "$(readlink -f "$nvcc_path")")/.." && pwd)"
  roots+=("$top" "$top/targets/$(uname -m)-linux")
fi
roots+=(/usr /usr/local /usr/local/cuda)
for sp in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
  for pkg in "$sp"/nvidia/*/; do [ -d "$pkg" ] && roots+=("${pkg%/}"); done
done

# find_include HEADER: prints the directory holding HEADER, or nothing.
find_include() {
  local r d
  for r in "${roots[@]}"; do
    for d in "$r/include" "$r/include/$(uname -m)-linux-gnu"; do
      [ -f "$d/$1" ] && { echo "$d"; return 0; }
    done
  done
  return 1
}

# find_lib NAME: prints the full path of libNAME.so or of a versioned libNAME.so.N (pip wheels ship only
# those), or nothing.
find_lib() {
  local r d f
  for r in "${roots[@]}"; do
    for d in "$r/lib" "$r/lib64" "$r/lib/$(uname -m)-linux-gnu"; do
      for f in "$d/lib$1.so" "$d"/lib"$1".so.[0-9]*; do
        [ -f "$f" ] && { echo "$f"; return 0; }
      done
    done
  done
  return 1
}

# build NAME HEADER... -- LIB...: compiles scripts/diag/NAME.cu into $dir/NAME, linking the libraries by
# full path with an rpath to their directories. Returns non-zero (after a JSON line) on any failure.
build() {
  local name="$1"; shift
  local incs=() libs=() rpaths=() h l d
  while [ "$1" != "--" ]; do
    if ! d="$(find_include "$1")"; then
      json "{\"step\":\"build\",\"target\":\"$name\",\"event\":\"error\",\"msg\":\"header $1 not found (set CUDNN_ROOT/CUBLAS_ROOT or pip install nvidia-cudnn-cu13 nvidia-cublas)\"}"
      return 1
    fi
    incs+=("-I$d"); shift
  done
  shift
  for l in "$@"; do
    if ! h="$(find_lib "$l")"; then
      json "{\"step\":\"build\",\"target\":\"$name\",\"event\":\"error\",\"msg\":\"library lib$l.so not found\"}"
      return 1
    fi
    libs+=("-Xlinker" "$h"); rpaths+=("-Xlinker" "-rpath=$(dirname "$h")")
  done
  local cmd=("$NVCC" "${flags[@]}" "${incs[@]}" "$here/$name.cu" -o "$dir/$name" "${libs[@]}" "${rpaths[@]}")
  echo "== build $name: ${cmd[*]}" >>"$log"
  if "${cmd[@]}" >>"$log" 2>&1; then
    json "{\"step\":\"build\",\"target\":\"$name\",\"event\":\"ok\",\"cmd\":\"$(esc "${cmd[*]}")\"}"
  else
    json "{\"step\":\"build\",\"target\":\"$name\",\"event\":\"error\",\"msg\":\"nvcc failed, see $log\",\"cmd\":\"$(esc "${cmd[*]}")\"}"
    return 1
  fi
}

# step NAME ARGS...: runs $dir/NAME ARGS under timeout, stdout to the JSONL, stderr to the log.
step() {
  local name="$1"; shift
  echo "== run $name $* ($(date -u +%FT%TZ))" >>"$log"
  local t0=$SECONDS
  timeout -k 10 "$STEP_TIMEOUT" "$dir/$name" "$@" >>"$jsonl" 2>>"$log"
  local rc=$?
  local status=ok
  [ $rc -ne 0 ] && status=failed
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && status=timeout
  json "{\"step\":\"run\",\"target\":\"$name\",\"args\":\"$*\",\"event\":\"step_exit\",\"rc\":$rc,\"status\":\"$status\",\"wall_s\":$((SECONDS - t0))}"
}

echo "== run_diag.sh $(date -u +%FT%TZ) on $(hostname)" >>"$log"
nvidia-smi >>"$log" 2>&1 || true

if [ "$ONLY" != gemm ] && build conv2d_cudnn_algos cudnn.h -- cudnn; then
  step conv2d_cudnn_algos fp32 4096 4096 32 32
  step conv2d_cudnn_algos bf16 4096 4096 32 32
fi
if [ "$ONLY" != conv ] && build gemm_bf16_check cublas_v2.h cublasLt.h -- cublasLt cublas; then
  step gemm_bf16_check 8191
  step gemm_bf16_check 4096
fi
json "{\"step\":\"all\",\"event\":\"done\",\"jsonl\":\"$jsonl\",\"log\":\"$log\"}"
