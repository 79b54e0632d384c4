#!/usr/bin/env bash
# One device call over several issues' device scripts, set up once (wheels, bubblewrap), each part under its own time
# limit, each part's files packed into one $OUT/<part>.tgz (a device call brings back at most 8 files) with its log.
#   COMMIT=<sha> OUT=<dir> bash scripts/device_session.sh PART:LIMIT_S [PART:LIMIT_S ...]
# Parts: i39 (scripts/device_i39.sh adversarial honest campaign), i39-bench (device_i39.sh bench), i39-tolerance,
#   synccheck-probe (scripts/diag/synccheck_probe.py), sanitize1 / sanitize2 (scripts/device_sanitize.sh 1 / 2), pytorch (scripts/device_pytorch.sh),
#   export (scripts/device_export.sh; EXPORT_ONLY=a,b passes --only), gpu-suite:<shard> (scripts/device_gpu_suite.sh).
# Carry .whl and .devsite (scripts/make_device_wheels.sh).
set -u
T0=$(date +%s)
OUT=${OUT:?OUT is the folder whose files come back}
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/tmp/pip.log 2>&1 || tail -5 /tmp/pip.log
export PYTHONPATH=/tmp/site:$PWD CUDAMASTER_GIT_COMMIT=${COMMIT:-unknown} PYTHONUNBUFFERED=1
. scripts/device_bwrap.sh
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; echo "commit ${COMMIT:-unknown}"; } | tee "$OUT/env.txt"
echo "setup $(($(date +%s) - T0)) s"
for item in "$@"; do
  part=${item%%:*} limit=${item#*:} dir=/tmp/parts/${item%%:*}
  mkdir -p "$dir"
  t0=$(date +%s)
  echo ">>> $part (limit $limit s) at $((t0 - T0)) s"
  case $part in
    i39) OUT=$dir DEADLINE_S=$limit timeout -k 5 "$limit" bash scripts/device_i39.sh adversarial honest campaign ;;
    i39-bench) OUT=$dir DEADLINE_S=$limit timeout -k 5 "$limit" bash scripts/device_i39.sh bench ;;
    i39-tolerance) OUT=$dir DEADLINE_S=$limit timeout -k 5 "$limit" bash scripts/device_i39.sh tolerance ;;
    synccheck-probe) timeout -k 5 "$limit" python3 scripts/diag/synccheck_probe.py > "$dir/synccheck_probe.json" ;;
    sanitize1) OUT=$dir timeout -k 5 "$limit" bash scripts/device_sanitize.sh 1 ;;
    sanitize2) OUT=$dir timeout -k 5 "$limit" bash scripts/device_sanitize.sh 2 ;;
    pytorch) OUT=$dir timeout -k 5 "$limit" bash scripts/device_pytorch.sh ;;
    export) OUT=$dir STEP_LIMIT_S=$((limit - 10)) timeout -k 5 "$limit" bash scripts/device_export.sh ${EXPORT_ONLY:+--only "$EXPORT_ONLY"} ;;
    gpu-suite=*) OUT=$dir DEADLINE_S=$limit timeout -k 5 "$limit" bash scripts/device_gpu_suite.sh "${part#gpu-suite=}" ;;
    *) echo "unknown part $part" ;;
  esac > "$dir/part.log" 2>&1
  echo "<<< $part rc $? in $(($(date +%s) - t0)) s"
  tail -n 25 "$dir/part.log"
  # records and logs only (an export's builds made its archive too large to come back)
  (cd /tmp/parts && find "$part" -type f -size -4M \( -name '*.json' -o -name '*.jsonl' -o -name '*.xml' -o -name '*.log' \
     -o -name '*.txt' -o -name '*.md' \) -print0 | tar -czf "$OUT/${part//[^A-Za-z0-9_.-]/_}.tgz" --null -T -)
done
