#!/usr/bin/env bash
# GPU checks for the harness and the service on the H200, from the repo root:
#   OUT=/some/dir bash scripts/device_checks.sh STEP [STEP ...]
# Steps (each under its own time limit, logged to $OUT/<step>.log; a failing step does not stop the next):
#   gpu-tests       pytest -m gpu on tests/bench (all but the per-size baseline sweep), tests/graph, tests/service
#   baseline-sweep  pytest -m gpu: every baseline at every paper and edge size (tests/bench)
#   figures         scripts/harness_figures.py -> $OUT/harness_figures.json
#   large           scripts/check_baselines.py --sizes large -> $OUT/baseline_checks_large.json
#   edge            scripts/check_baselines.py --sizes edge  -> $OUT/baseline_checks_edge.json
#   vendor-tests    pytest -m gpu tests/bench/test_vendor_gpu.py (every vendor reference at every paper size; VENDOR_K
#                   selects, e.g. VENDOR_K="cublas or cudnn or cufft" and VENDOR_K="not cublas and not cudnn and not cufft")
#   vendor-paper    bench run --vendor --sizes paper, appended to $OUT/vendor_run.json (+ report); vendor-large: the large
#                   sizes; VENDOR_PRECISION=fp32|bf16 splits a step in two (each appends)
# Needs python3 with this repo importable (see scripts/make_device_wheels.sh) and nvcc; ncu for figures.
set -uo pipefail
OUT=${OUT:-$PWD/out/device_checks}
PY=${PYTHON:-python3}
LIMIT=${STEP_LIMIT_S:-280}  # figures needs ~320 s: give it STEP_LIMIT_S=540 alone
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; date -u; } > "$OUT/env.txt" 2>&1
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    gpu-tests) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/gpu_tests.xml" tests/bench tests/graph tests/service -k "not every_baseline and not vendor" ;;
    vendor-tests) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/vendor_tests.xml" tests/bench/test_vendor_gpu.py ${VENDOR_K:+-k "$VENDOR_K"} ;;
    vendor-paper|vendor-large)
      sizes=${step#vendor-}
      timeout -k 5 "$LIMIT" $PY -m app.cli bench run --vendor --sizes "$sizes" ${VENDOR_PRECISION:+-p "$VENDOR_PRECISION"} \
        -o "$OUT/vendor_run.json" --append
      $PY -m app.cli bench report "$OUT/vendor_run.json" -o "$OUT/vendor_report" ;;
    baseline-sweep) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/baseline_sweep.xml" tests/bench -k every_baseline ;;
    figures) timeout -k 5 "$LIMIT" $PY scripts/harness_figures.py --output "$OUT/harness_figures.json" ;;
    large) timeout -k 5 "$LIMIT" $PY scripts/check_baselines.py --sizes large --output "$OUT/baseline_checks_large.json" ;;
    edge) timeout -k 5 "$LIMIT" $PY scripts/check_baselines.py --sizes edge --output "$OUT/baseline_checks_edge.json" ;;
    *) echo "unknown step $step"; continue ;;
  esac > "$OUT/$step.log" 2>&1
  rc=$?
  echo ">>> $step rc=$rc $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
  tail -5 "$OUT/$step.log"
done
