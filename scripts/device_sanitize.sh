#!/usr/bin/env bash
# compute-sanitizer on the GPU machine (issue 41), from the repo root, in two calls of the device's 10-minute limit:
#   OUT=/some/dir bash scripts/device_sanitize.sh 1   # ~4 min: the GPU tests (each positive control flagged by its tool,
#                                                    # an honest kernel clean under all four) -> $OUT/sanitizer_gpu_tests.xml;
#                                                    # then the controls and 6 baselines ONE AT A TIME -> $OUT/sanitize_solo.json
#                                                    # (the time per kernel, four tools, alone on the GPU: the figure for docs/results)
#   OUT=/some/dir bash scripts/device_sanitize.sh 2   # ~5-8 min: the honest corpus (37), the BF16 twins (50) and the
#                                                    # 100 baselines, 8 kernels at once -> $OUT/sanitize_sweep.json
#   A part cut short by its deadline says `left_out` > 0 in its JSON: run it again on the same machine with RESUME=1
#   (what the file holds is kept, the rest is done).
# Each JSON record: provenance (command, commit, date, host), the GPU and driver, the settings, per kernel its verdicts,
# seconds and whether it is as expected (ok: true; false: a finding, listed in summary.*.unexpected; null: not_run).
# On a GPU whose runtime refuses compute-sanitizer (some H200 machines, gVisor: "Device not supported") every verdict is
# not_run with that reason: the records say so and the GPU tests skip; nothing fails as if it were clean.
# Kernels run in the bubblewrap sandbox: without bwrap on PATH, .devsite/bubblewrap_*.deb is unpacked (as device_checks.sh).
set -uo pipefail
OUT=${OUT:-$PWD/out/device_sanitize}
PY=${PYTHON:-python3}
WORKERS=${WORKERS:-8}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
. scripts/device_bwrap.sh "$OUT/steps.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer;
  compute-sanitizer --version 2>/dev/null || /usr/local/cuda/bin/compute-sanitizer --version; } >> "$OUT/env.txt" 2>&1
resume=${RESUME:+--resume}
case ${1:-} in
  1)
    timeout -k 5 200 $PY -m pytest -m gpu -n 0 -q -rfEs -p no:cacheprovider --timeout 120 \
      --junitxml="$OUT/sanitizer_gpu_tests.xml" tests/bench/test_sanitizer_gpu.py 2>&1 | tee "$OUT/sanitizer_gpu_tests.log" | tail -20
    timeout -k 5 330 $PY scripts/sanitize_sweep.py --what controls,solo --workers 1 --deadline-s 300 \
      --out "$OUT/sanitize_solo.json" $resume 2>&1 | tee "$OUT/sanitize_solo.log" | tail -40 ;;
  2)
    # 8 kernels share the GPU: a tool's limit is raised so contention is not read as "time limit" (recorded in the JSON)
    export CUDAMASTER_HARNESS__SANITIZER_TOOL_TIMEOUT_S=${SWEEP_TOOL_TIMEOUT_S:-45}
    timeout -k 5 570 $PY scripts/sanitize_sweep.py --what honest,twins,baselines --workers "$WORKERS" --deadline-s 520 \
      --out "$OUT/sanitize_sweep.json" $resume 2>&1 | tee "$OUT/sanitize_sweep.log" | tail -60 ;;
  *) echo "usage: OUT=DIR bash scripts/device_sanitize.sh 1|2   (RESUME=1 continues a part cut short)"; exit 2 ;;
esac
