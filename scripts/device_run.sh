#!/usr/bin/env bash
# One device call: install the carried wheels, then run device_checks.sh steps given as arguments.
# Usage (from the repo root, on the device, with .whl and .devsite carried): COMMIT=<sha> OUT=<dir> bash scripts/device_run.sh gpu-tests:195 ray-tests:200
set -u
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/tmp/pip.log 2>&1 || tail -5 /tmp/pip.log
export PYTHONPATH=/tmp/site:$PWD
export CUDAMASTER_GIT_COMMIT=${COMMIT:-unknown}
rm -rf /tmp/bw && dpkg -x .devsite/bubblewrap_*.deb /tmp/bw && export CUDAMASTER_HARNESS__SANDBOX_BWRAP=/tmp/bw/usr/bin/bwrap
echo "setup $(( $(date +%s) - T0 )) s"
for item in "$@"; do  # STEP:LIMIT_S
  OUT=$OUT STEP_LIMIT_S=${item#*:} bash scripts/device_checks.sh "${item%%:*}"
done
df -h /tmp | tail -1
