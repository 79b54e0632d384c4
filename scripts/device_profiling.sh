#!/usr/bin/env bash
# Profiling on the H200, from the repo root:   bash scripts/device_profiling.sh
#
# Needs there: nvidia-smi, nvcc, ncu (CUDAMASTER_PROFILING__NCU, else on PATH, else /opt/nvidia/nsight-compute/*/ncu
# or /usr/local/cuda/bin/ncu), and a python3 (PYTHON=...) that imports this repo's packages (pydantic and
# pydantic-settings carried as wheels, PYTHONPATH set to them and the repo root).
#
# What it does (about 3-5 minutes):
#   1. builds profiling/labelled/labelled.cu for sm_90;
#   2. profiles each labelled kernel once with ncu (--clock-control none, --profile-from-start off, the five
#      sections) and exports its raw and details pages as CSV;
#   3. scores the published and sol rules on them (expected classes from profiling/labelled/manifest.toml);
#   4. times one profile of a baseline through the CLI (cold: compiles; warm: cached);
#   5. profiles every baseline of every task variant into the corpus run.json (BASELINE_BUDGET_S, default 150 s);
#   6. fits both thresholds with Otsu on the corpus, on the labelled set and on both;
#   7. runs `pytest -m gpu tests/profiling`;
#   8. prints a summary table last.
#
# Output in $OUT (default ./out/device_profiling), at most 8 files, none in sub-folders:
#   profiling.tar.gz  everything: ncu_labelled/<kernel>.csv (raw page; commit as tests/fixtures/ncu/labelled/),
#                     ncu_labelled_details/<kernel>.csv (details page), ncu logs, labelled.json, run.json,
#                     run.failures.json, thresholds*.json, one_profile.json, pytest_gpu.txt, env.txt, summary.txt
#   summary.txt, labelled_score.txt, run.json, thresholds.json   (copies, for a quick look)
set -uo pipefail

OUT=${OUT:-$PWD/out/device_profiling}
PY=${PYTHON:-python3}
BUDGET=${BASELINE_BUDGET_S:-150}
JOBS=${PROFILE_JOBS:-12}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/cm-profiling.XXXXXX)
mkdir -p "$WORK/bin" "$WORK/rep" "$WORK/ncu_labelled" "$WORK/ncu_labelled_details"
T0=$(date +%s.%N)
ROWS=()

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
row() { ROWS+=("$(printf '%-28s %-22s %8s  %s' "$1" "$2" "$3" "$4")"); echo ">>> $1: $2 ($3 s) $4"; }
finish() {
  {
    printf '%-28s %-22s %8s  %s\n' "step" "result" "seconds" "detail"
    printf '%s\n' "${ROWS[@]}"
    printf '%-28s %-22s %8s\n' "total" "" "$(since "$T0")"
  } > "$WORK/summary.txt"
  tar -czf "$OUT/profiling.tar.gz" -C "$WORK" --exclude=./bin --exclude=./rep . 2>/dev/null
  cp "$WORK/summary.txt" "$OUT/summary.txt"
  for f in labelled_score.txt run.json thresholds.json; do [ -f "$WORK/$f" ] && cp "$WORK/$f" "$OUT/$f"; done
  echo
  echo "================ summary (work dir $WORK) ================"
  cat "$WORK/summary.txt"
}
trap finish EXIT

# ---- 0. tools ----------------------------------------------------------------------------------
NCU=${CUDAMASTER_PROFILING__NCU:-}
if [ -z "$NCU" ]; then
  NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -1 || true)
fi
if [ -z "$NCU" ] || ! [ -x "$(command -v "$NCU" || echo "$NCU")" ]; then
  row "find ncu" "FAILED" 0 "no ncu: set CUDAMASTER_PROFILING__NCU"; exit 1
fi
export CUDAMASTER_PROFILING__NCU="$NCU"
{
  echo "date: $(date -u +%FT%TZ)"; echo "git: $(git rev-parse HEAD 2>/dev/null)"
  nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  echo "ncu: $NCU: $("$NCU" --version | tail -1)"; echo "nvcc: $(nvcc --version | tail -1)"; echo "python: $("$PY" --version 2>&1)"
} > "$WORK/env.txt" 2>&1
cat "$WORK/env.txt"
if ! "$PY" -c "import profiling.cli, profiling.labelled, bench_tasks.harness" 2> "$WORK/import_error.txt"; then
  row "import profiling" "FAILED" 0 "$(tail -1 "$WORK/import_error.txt") (carry pydantic wheels, set PYTHONPATH)"; exit 1
fi

# ---- 1. build the labelled kernels ---------------------------------------------------------------
t=$(now)
if nvcc -O3 -gencode=arch=compute_90,code=sm_90 -o "$WORK/bin/labelled" profiling/labelled/labelled.cu > "$WORK/build.log" 2>&1; then
  row "build labelled" "ok" "$(since "$t")" ""
else
  row "build labelled" "FAILED" "$(since "$t")" "$(grep -m1 error "$WORK/build.log")"; exit 1
fi

# ---- 2. profile each labelled kernel ------------------------------------------------------------------
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
          --section Occupancy --section LaunchStats)
t=$(now); ok=0; failed=0; first_fail=""
for name in $("$WORK/bin/labelled" --list); do
  k=$(now)
  log="$WORK/ncu_labelled/$name.log"
  if timeout -k 10 180 "$NCU" --clock-control none --profile-from-start off --print-units base "${SECTIONS[@]}" \
       -o "$WORK/rep/$name" -f "$WORK/bin/labelled" "$name" > "$log" 2>&1 \
     && "$NCU" -i "$WORK/rep/$name.ncu-rep" --csv --page raw --print-units base > "$WORK/ncu_labelled/$name.csv" 2>> "$log" \
     && "$NCU" -i "$WORK/rep/$name.ncu-rep" --csv --page details --print-units base > "$WORK/ncu_labelled_details/$name.csv" 2>> "$log"; then
    ok=$((ok + 1)); echo "  $name: $(since "$k") s"
  else
    failed=$((failed + 1)); rm -f "$WORK/ncu_labelled/$name.csv" "$WORK/ncu_labelled_details/$name.csv"
    why=$(grep -m1 -E "ERR_NVGPUCTRPERM|Failed to initialize|==ERROR==|CUDA error" "$log" || tail -1 "$log")
    first_fail=${first_fail:-"$name: $why"}
    echo "  $name FAILED: $why"
    if grep -qE "ERR_NVGPUCTRPERM|Failed to initialize the profiler" "$log"; then
      echo "  ncu cannot read counters on this machine; stopping the labelled loop"; break
    fi
  fi
done
row "profile labelled kernels" "$ok ok, $failed failed" "$(since "$t")" "$first_fail"

# ---- 3. score both rules on them -------------------------------------------------------------------
t=$(now)
if [ "$ok" -gt 0 ]; then
  COLUMNS=140 "$PY" -m profiling score-labelled "$WORK/ncu_labelled" --save-json "$WORK/labelled.json" 2>&1 | tee "$WORK/labelled_score.txt"
  row "score labelled (30 %, 60 %)" "done" "$(since "$t")" "$(grep -E '^(published|sol):' "$WORK/labelled_score.txt" | tr '\n' ' ')"
fi

# ---- 4. one profile's wall time through the CLI -----------------------------------------------------------
for pass in cold warm; do
  t=$(now)
  if "$PY" -m profiling run vector_add -p fp32 --save-json "$WORK/one_profile.json" --tokens > "$WORK/one_profile_$pass.txt" 2>&1; then
    row "one profile ($pass)" "ok" "$(since "$t")" "vector_add/fp32 baseline: $(head -1 "$WORK/one_profile_$pass.txt" | sed 's/.*: //')"
  else
    row "one profile ($pass)" "FAILED" "$(since "$t")" "$(tail -1 "$WORK/one_profile_$pass.txt")"
  fi
done
cat "$WORK/one_profile_warm.txt"

# ---- 5. every baseline: the corpus ----------------------------------------------------------------------------
t=$(now)
COLUMNS=160 "$PY" -m profiling baselines --out "$WORK/run.json" --jobs "$JOBS" --budget-s "$BUDGET" > "$WORK/baselines.txt" 2>&1
rc=$?
cat "$WORK/baselines.txt"
n_ok=$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$WORK/run.json" 2>/dev/null || echo 0)
n_fail=$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$WORK/run.failures.json" 2>/dev/null || echo 0)
row "profile baselines" "$n_ok ok, $n_fail failed/skipped" "$(since "$t")" "rc $rc, budget ${BUDGET} s"

# ---- 6. Otsu thresholds ---------------------------------------------------------------------------------------
t=$(now)
fit() {  # corpus out label
  if "$PY" -m profiling fit-thresholds "$1" --out "$2" > "$2.txt" 2>&1; then
    row "fit thresholds ($3)" "ok" "$(since "$t")" "$(sed 's/ from .*//' "$2.txt")"
  else
    row "fit thresholds ($3)" "FAILED" "$(since "$t")" "$(tail -1 "$2.txt")"
  fi
}
[ -s "$WORK/run.json" ] && fit "$WORK/run.json" "$WORK/thresholds.json" "baselines"
[ -s "$WORK/labelled.json" ] && fit "$WORK/labelled.json" "$WORK/thresholds_labelled.json" "labelled"
if [ -s "$WORK/run.json" ] && [ -s "$WORK/labelled.json" ]; then
  "$PY" -c "import json,sys; json.dump(json.load(open(sys.argv[1])) + json.load(open(sys.argv[2])), open(sys.argv[3], 'w'))" \
    "$WORK/run.json" "$WORK/labelled.json" "$WORK/all.json" && fit "$WORK/all.json" "$WORK/thresholds_all.json" "baselines+labelled"
fi
if [ -s "$WORK/thresholds.json" ] && [ "$ok" -gt 0 ]; then
  COLUMNS=140 "$PY" -m profiling score-labelled "$WORK/ncu_labelled" --thresholds "$WORK/thresholds.json" > "$WORK/labelled_score_fitted.txt" 2>&1
  row "score labelled (fitted)" "done" "" "$(grep -E '^(published|sol):' "$WORK/labelled_score_fitted.txt" | tr '\n' ' ')"
fi

# ---- 7. GPU tests ----------------------------------------------------------------------------------------------
t=$(now)
"$PY" -m pytest -q -m gpu -n 0 -p no:cacheprovider tests/profiling > "$WORK/pytest_gpu.txt" 2>&1
rc=$?
row "pytest -m gpu tests/profiling" "rc $rc" "$(since "$t")" "$(tail -1 "$WORK/pytest_gpu.txt")"
