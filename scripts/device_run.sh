#!/usr/bin/env bash
# One device call: install the carried wheels, then run device_checks.sh steps given as arguments.
# Usage (from the repo root, on the device, with .whl and .devsite carried; .whl-ray too for ray-* steps): COMMIT=<sha> OUT=<dir> bash scripts/device_run.sh gpu-tests:195 ray-tests:200
# DEADLINE_S=<s> caps every step's limit at what is left of that many seconds from the start (the call's own limit):
# a last step given a generous limit then stops itself in time and keeps what it finished.
set -u
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl $(ls .whl-ray/*.whl 2>/dev/null) >/tmp/pip.log 2>&1 || tail -5 /tmp/pip.log
export PYTHONPATH=/tmp/site:$PWD
export CUDAMASTER_GIT_COMMIT=${COMMIT:-unknown}
. scripts/device_bwrap.sh
echo "setup $(( $(date +%s) - T0 )) s"
for item in "$@"; do  # STEP:LIMIT_S
  limit=${item#*:}
  if [ -n "${DEADLINE_S:-}" ]; then
    left=$(( DEADLINE_S - ($(date +%s) - T0) ))
    [ "$left" -lt "$limit" ] && limit=$left
    [ "$limit" -lt 10 ] && { echo ">>> ${item%%:*} skipped: ${left} s left of DEADLINE_S"; continue; }
  fi
  OUT=$OUT STEP_LIMIT_S=$limit bash scripts/device_checks.sh "${item%%:*}"
done
df -h /tmp | tail -1
