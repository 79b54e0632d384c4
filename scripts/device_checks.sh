#!/usr/bin/env bash
# GPU checks for the harness and the service on the H200, from the repo root:
#   OUT=/some/dir bash scripts/device_checks.sh STEP [STEP ...]
# Steps (each under its own time limit, logged to $OUT/<step>.log; a failing step does not stop the next):
#   gpu-tests       pytest -m gpu on tests/bench (all but the per-size baseline sweep), tests/graph, tests/service
#                   (GPU_TESTS="tests/graph tests/service" picks the folders)
#   baseline-sweep  pytest -m gpu: every baseline at every paper and edge size (tests/bench)
#   figures         scripts/harness_figures.py -> $OUT/harness_figures.json
#   large           scripts/check_baselines.py --sizes large -> $OUT/baseline_checks_large.json
#   edge            scripts/check_baselines.py --sizes edge  -> $OUT/baseline_checks_edge.json (CHECK_ARGS="--task spmv_csc"
#                   passes arguments on, for large and edge)
#   sandbox         cudamaster sandbox check --gpu -> $OUT/sandbox_check.json (probes inside the sandbox, a kernel,
#                   ncu), then scripts/sandbox_figures.py -> $OUT/sandbox_figures.json (~2 min)
#   timed-calls     pytest -m gpu: the timed-call checks (issue 13): honest kernel, adversaries, device draws
#   throughput      scripts/throughput_figures.py --only build --only spread --only wall -> $OUT/throughput_figures.json (build, spread;
#                   the JSON is written after each step)
#   suite           scripts/throughput_figures.py --only suite (bench run, every variant, paper, empty caches) -> $OUT/suite.json;
#                   bench run is stopped 20 s before the step's limit and what it finished is recorded (cut: true); its own
#                   results, saved after every variant, in $OUT/suite.run.json
#   vendor-tests    pytest -m gpu tests/bench/test_vendor_gpu.py (every vendor reference at every paper size; VENDOR_K
#                   selects, e.g. VENDOR_K="cublas or cudnn or cufft" and VENDOR_K="not cublas and not cudnn and not cufft")
#   vendor-paper    bench run --vendor --sizes paper, appended to $OUT/vendor_run.json (+ report); vendor-large: the large
#                   sizes; VENDOR_PRECISION=fp32|bf16 splits a step in two (each appends; what the file holds is skipped)
#   bench           bench run $BENCH_ARGS -> $OUT/bench_run.json (--append --skip-done: a second call continues it)
#   campaign        scripts/campaign_h200.py --out $OUT/campaign, stopping cleanly a minute before the step's limit
#                   (CAMPAIGN_ARGS="--resume" continues it in a later call on the same warm machine)
#   ray-tests       pytest -m gpu tests/cluster: a local Ray cluster on the real GPU(s), one worker per GPU, real candidates
#                   give the local evaluator's verdicts and speedups (~3 min)
#   ray-figures     scripts/ray_figures.py -> $OUT/ray_figures.json: Ray's overhead per evaluation vs local, and bench run's
#                   work over 12 variants through Ray on one GPU vs locally (RAY_FIGURES_ALL=1: every variant, ~10 min;
#                   RAY_FIGURES_ARGS="--repeats 3 --only overhead" passes arguments on)
#   Without Ray importable, the carried .whl-ray/ray-*.whl (a slim wheel, scripts/make_device_wheels.sh; carry .whl-ray
#   only in calls with ray-* steps) and its dependencies from .whl
#   are unpacked to /tmp/cm-ray-site and put on PYTHONPATH (no pip needed).
# Needs python3 with this repo importable (see scripts/make_device_wheels.sh) and nvcc; ncu for figures.
# Kernels run in the bubblewrap sandbox: without bwrap on PATH, .devsite/bubblewrap_*.deb (carried from
# scripts/make_device_wheels.sh) is unpacked to /tmp/bw and CUDAMASTER_HARNESS__SANDBOX_BWRAP points at it.
set -uo pipefail
OUT=${OUT:-$PWD/out/device_checks}
PY=${PYTHON:-python3}
LIMIT=${STEP_LIMIT_S:-280}  # figures needs ~320 s: give it STEP_LIMIT_S=540 alone
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
. scripts/device_bwrap.sh "$OUT/steps.txt"
if [[ " $* " == *" ray-"* ]] && ! $PY -c "import ray" 2>/dev/null; then
  if ls .whl-ray/ray-*.whl >/dev/null 2>&1; then
    rm -rf /tmp/cm-ray-site && mkdir -p /tmp/cm-ray-site
    for w in .whl-ray/ray-*.whl .whl/msgpack-*.whl .whl/protobuf-*.whl .whl/jsonschema*.whl .whl/referencing-*.whl \
             .whl/rpds_py-*.whl .whl/attrs-*.whl .whl/filelock-*.whl; do
      [ -f "$w" ] && $PY -m zipfile -e "$w" /tmp/cm-ray-site
    done
    chmod +x /tmp/cm-ray-site/ray/core/src/ray/gcs/gcs_server /tmp/cm-ray-site/ray/core/src/ray/raylet/raylet  # zipfile drops modes
    export PYTHONPATH=/tmp/cm-ray-site${PYTHONPATH:+:$PYTHONPATH}
  fi
  $PY -c "import ray; print('ray', ray.__version__, ray.__file__)" >> "$OUT/env.txt" 2>&1 || echo "no Ray: carry .whl and .whl-ray (scripts/make_device_wheels.sh)" | tee -a "$OUT/steps.txt"
fi
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; date -u; } > "$OUT/env.txt" 2>&1
# GPU runs are serial and few: their service tests start each server as `python -m uvicorn` (the path validated on
# the H200), not forked (tests/support/forkserver.py: a CPU-suite speed-up, not yet run there).
export CUDAMASTER_TEST_FORKSERVER=${CUDAMASTER_TEST_FORKSERVER:-0}
echo "sandbox bwrap: ${CUDAMASTER_HARNESS__SANDBOX_BWRAP:-$(command -v bwrap)}" >> "$OUT/env.txt"
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    gpu-tests) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/gpu_tests.xml" ${GPU_TESTS:-tests/bench tests/graph tests/service} -k "not every_baseline and not vendor" ;;
    vendor-tests) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/vendor_tests.xml" tests/bench/test_vendor_gpu.py ${VENDOR_K:+-k "$VENDOR_K"} ;;
    vendor-paper|vendor-large)
      sizes=${step#vendor-}
      timeout -k 5 "$LIMIT" $PY -m app.cli bench run --vendor --sizes "$sizes" ${VENDOR_PRECISION:+-p "$VENDOR_PRECISION"} \
        -o "$OUT/vendor_run.json" --append --skip-done
      $PY -m app.cli bench report "$OUT/vendor_run.json" -o "$OUT/vendor_report" ;;
    bench) timeout -k 5 "$LIMIT" $PY -m app.cli bench run ${BENCH_ARGS:-} -o "$OUT/bench_run.json" --append --skip-done ;;
    campaign) timeout -k 5 "$LIMIT" $PY scripts/campaign_h200.py --out "$OUT/campaign" --stop-after $((LIMIT - 60)) ${CAMPAIGN_ARGS:-} ;;
    baseline-sweep) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/baseline_sweep.xml" tests/bench -k every_baseline ;;
    figures) timeout -k 5 "$LIMIT" $PY scripts/harness_figures.py --output "$OUT/harness_figures.json" ;;
    large) timeout -k 5 "$LIMIT" $PY scripts/check_baselines.py --sizes large ${CHECK_ARGS:-} --output "$OUT/baseline_checks_large.json" ;;
    edge) timeout -k 5 "$LIMIT" $PY scripts/check_baselines.py --sizes edge ${CHECK_ARGS:-} --output "$OUT/baseline_checks_edge.json" ;;
    sandbox) timeout -k 5 "$LIMIT" sh -c "$PY -m app.cli sandbox check --gpu --json '$OUT/sandbox_check.json'; \
                 $PY scripts/sandbox_figures.py --output '$OUT/sandbox_figures.json'" ;;
    timed-calls) timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider --timeout 240 \
                 --junitxml="$OUT/timed_calls.xml" tests/bench/test_harness_gpu.py \
                 -k "timed or replay or honest or lazy or structure or device_draws or call_count" ;;
    throughput) timeout -k 5 "$LIMIT" $PY scripts/throughput_figures.py --only build --only spread --only wall --output "$OUT/throughput_figures.json" ;;
    suite) timeout -k 5 "$LIMIT" $PY scripts/throughput_figures.py --only suite --suite-limit-s $((LIMIT - 20)) \
                 --output "$OUT/suite.json" ;;
    ray-tests) CUDAMASTER_TEST_RAY_GPUS=detect timeout -k 5 "$LIMIT" $PY -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider \
                 --timeout 600 --junitxml="$OUT/ray_tests.xml" tests/cluster ;;
    ray-figures) timeout -k 5 "$LIMIT" $PY scripts/ray_figures.py --output "$OUT/ray_figures.json" ${RAY_FIGURES_ALL:+--all} ${RAY_FIGURES_ARGS:-} ;;
    *) echo "unknown step $step"; continue ;;
  esac > "$OUT/$step.log" 2>&1
  rc=$?
  echo ">>> $step rc=$rc $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
  tail -5 "$OUT/$step.log"
done
