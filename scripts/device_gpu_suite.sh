#!/usr/bin/env bash
# The whole GPU suite on the device machine: every `gpu` test (tests/), in shards that each fit one device call (10
# minutes), recorded together by scripts/record_device_run.sh (gpu_suite_<sha>.json: every test id and its outcome,
# and every collected GPU test that ran in no shard).
#
# Usage (from the repo root, on the device, with .whl and .devsite carried; .whl-ray too for `ray`):
#   COMMIT=<sha> OUT=<dir> [DEADLINE_S=570] bash scripts/device_gpu_suite.sh SHARD [SHARD ...]
# SHARD:
#   collect      every GPU test's node id -> $OUT/gpu_collected.txt (once, in any call: the record's checklist)
#   timed:I/N    shard I of N of the GPU tests that time kernels, run jobs or profile (all but the sweeps and Ray's:
#                tests/bench, tests/graph, tests/service, tests/profiling, the vendor references and their compile
#                checks), contiguous blocks (a module's tests share its fixtures), serial -> $OUT/gpu_timed-I-of-N.xml
#   sweep:I-J/N  shards I to J of N of the correctness sweeps (no timing: test_every_baseline_passes_every_size_and_seed,
#                the 200-variant baseline sweep, and the BF16 twins of tests/bench/test_bf16_tolerance.py), round-robin,
#                run side by side on the one GPU -> $OUT/gpu_sweep-K-of-N.xml each
#   ray          tests/cluster's GPU tests, a local Ray cluster on the real GPU(s) (scripts/device_checks.sh ray-tests)
#                -> $OUT/gpu_ray.xml
#   copy-bandwidth  scripts/copy_bandwidth.py: host<->device copy figures -> $OUT/copy_bandwidth.json (~20 s)
# Steps share DEADLINE_S (seconds from the start; the device's call limit is 600): a step gets what is left, a step
# with less than 30 s left is not started (steps.txt says so, and the record lists its tests as not run).
# What comes back (the device returns at most 8 files): env.txt, steps.txt, suite_log.txt (each step's last lines),
# gpu_collected.txt and the XML files: at most 4 sweep shards in one call (3 with `collect`).
# PostgreSQL: the device has no server (no package manager, no network; earlier device runs used SQLite). Without one
# at $CUDAMASTER_TEST_POSTGRES (default 127.0.0.1:5432) the [postgresql] variants are deselected, not skipped, and
# the record lists them under not_run.
set -u
T0=$(date +%s)
OUT=${OUT:?set OUT to the call\'s output folder}
DEADLINE_S=${DEADLINE_S:-570}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
LOGS=/tmp/gpu_suite_logs && rm -rf "$LOGS" && mkdir -p "$LOGS"
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/tmp/pip.log 2>&1 || tail -5 /tmp/pip.log
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
export CUDAMASTER_GIT_COMMIT=${COMMIT:-unknown} PYTHONUNBUFFERED=1
# GPU runs start each test server as `python -m uvicorn` (the path validated on the device: scripts/device_checks.sh).
export CUDAMASTER_TEST_FORKSERVER=${CUDAMASTER_TEST_FORKSERVER:-0}
. scripts/device_bwrap.sh "$OUT/steps.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; date -u; } > "$OUT/env.txt" 2>&1
echo "sandbox bwrap: ${CUDAMASTER_HARNESS__SANDBOX_BWRAP:-$(command -v bwrap)}" >> "$OUT/env.txt"

TESTS=${GPU_SUITE_TESTS:-tests}  # the suite's root (a test of this script narrows it)
SWEEPS="every_baseline_passes_every_size_and_seed or baseline_and_its_twin_pass"
NOT_HERE=""  # what this machine cannot run, deselected (the record's not_run)
if ! $PY scripts/ci_check.py postgres >/dev/null 2>&1; then
  NOT_HERE=" and not postgresql"
  echo "PostgreSQL not reachable (${CUDAMASTER_TEST_POSTGRES:-127.0.0.1:5432}): [postgresql] variants deselected" | tee -a "$OUT/steps.txt"
fi
PYTEST=($PY -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider --timeout 300)

left() { echo $(( DEADLINE_S - ($(date +%s) - T0) )); }

run_step() {  # NAME CMD...: under what is left of DEADLINE_S, logged to $LOGS/NAME.log
  local name=$1 limit t0 rc
  shift
  limit=$(left)
  if [ "$limit" -lt 30 ]; then
    echo ">>> $name not started: ${limit} s left of DEADLINE_S=$DEADLINE_S" | tee -a "$OUT/steps.txt"
    return 0
  fi
  t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "$LOGS/$name.log" 2>&1
  rc=$?
  echo ">>> $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a "$OUT/steps.txt"
}

for step in "$@"; do
  case $step in
    collect)
      "${PYTEST[@]}" --collect-only "$TESTS" > "$OUT/gpu_collected.txt" 2>&1
      echo ">>> collect: $(grep -c '::' "$OUT/gpu_collected.txt") GPU tests" | tee -a "$OUT/steps.txt" ;;
    timed:*/*)
      shard=${step#timed:}
      run_step "timed-${shard/\//-of-}" "${PYTEST[@]}" --shard "$shard" --shard-blocks --ignore=tests/cluster \
        --junitxml="$OUT/gpu_timed-${shard/\//-of-}.xml" "$TESTS" -k "not ($SWEEPS)$NOT_HERE" ;;
    sweep:*-*/*)
      range=${step#sweep:}; n=${range#*/}; first=${range%%-*}; last=${range%/*}; last=${last#*-}
      pids=()
      for ((i = first; i <= last; i++)); do
        run_step "sweep-$i-of-$n" "${PYTEST[@]}" --shard "$i/$n" --junitxml="$OUT/gpu_sweep-$i-of-$n.xml" \
          "$TESTS" -k "($SWEEPS)$NOT_HERE" &
        pids+=($!)
      done
      wait "${pids[@]}" ;;
    ray)
      limit=$(left)
      if [ "$limit" -lt 30 ]; then
        echo ">>> ray not started: ${limit} s left" | tee -a "$OUT/steps.txt"
      else
        OUT=$LOGS STEP_LIMIT_S=$limit bash scripts/device_checks.sh ray-tests >/dev/null 2>&1
        cat "$LOGS/steps.txt" >> "$OUT/steps.txt" 2>/dev/null
        [ -f "$LOGS/ray_tests.xml" ] && mv "$LOGS/ray_tests.xml" "$OUT/gpu_ray.xml"
      fi ;;
    copy-bandwidth) run_step copy-bandwidth $PY scripts/copy_bandwidth.py --output "$OUT/copy_bandwidth.json" ;;
    *) echo "unknown shard $step (collect, timed:I/N, sweep:I-J/N, ray, copy-bandwidth)" | tee -a "$OUT/steps.txt" ;;
  esac
done
for log in "$LOGS"/*.log; do
  [ -f "$log" ] || continue
  { echo "==== $(basename "$log")"; tail -40 "$log"; } >> "$OUT/suite_log.txt"
done
echo "total $(( $(date +%s) - T0 )) s" | tee -a "$OUT/steps.txt"
