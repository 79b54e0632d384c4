#!/usr/bin/env bash
# On the GPU machine (issue 41), from the repo root: six jobs' kernels evaluated by the harness, exported with
# `cudamaster export`, built (CMake, else nvcc via build.sh: recorded), tested, benchmarked against the job's speedups,
# and their PyTorch bindings built (setup.py) and tested with the machine's torch. Writes $OUT/device_export.json,
# each bundle under $OUT/export/<variant>/ and its log in $OUT/export/<variant>.log. About 5-6 minutes on an H100.
#   OUT=/some/dir CUDAMASTER_GIT_COMMIT=<commit> bash scripts/device_export.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out/device_export}
PY=${PYTHON:-python3}
mkdir -p "$OUT/export"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
. scripts/device_bwrap.sh
{ nvidia-smi --query-gpu=name,driver_version --format=csv; command -v cmake || echo "cmake: missing"; date -u; } > "$OUT/env.txt" 2>&1
timeout -k 5 "${STEP_LIMIT_S:-560}" $PY scripts/device_export.py "$OUT/export" "$@"
rc=$?
cp "$OUT/export/device_export.json" "$OUT/device_export.json" 2>/dev/null
exit $rc
