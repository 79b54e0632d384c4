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
if [ -z "${CUDAMASTER_HARNESS__SANDBOX_BWRAP:-}" ] && ! command -v bwrap >/dev/null; then  # as scripts/device_checks.sh
  deb=$(ls .devsite/bubblewrap_*.deb 2>/dev/null | head -1)
  if [ -n "$deb" ]; then
    rm -rf /tmp/bw && dpkg -x "$deb" /tmp/bw && export CUDAMASTER_HARNESS__SANDBOX_BWRAP=/tmp/bw/usr/bin/bwrap
  else
    echo "no bubblewrap: carry .devsite/ (scripts/make_device_wheels.sh); kernels will be refused"
  fi
fi
{ nvidia-smi --query-gpu=name,driver_version --format=csv; command -v cmake || echo "cmake: missing"; date -u; } > "$OUT/env.txt" 2>&1
timeout -k 5 "${STEP_LIMIT_S:-560}" $PY scripts/device_export.py "$OUT/export" "$@"
rc=$?
cp "$OUT/export/device_export.json" "$OUT/device_export.json" 2>/dev/null
exit $rc
