#!/usr/bin/env bash
# One device step: the BF16 tolerance audit's twins (tests/bench/test_bf16_tolerance.py, GPU test, kernel=twin only;
# the baselines at every edge and paper size and seed are test_harness_gpu.py's every_baseline sweep). Writes
# $OUT/gpu_tests.xml for scripts/record_device_run.sh. Usage, after scripts/device_run.sh's setup (PYTHONPATH, bwrap):
#   OUT=<dir> LIMIT_S=<s> bash scripts/device_bf16_twins.sh
set -u
ids=$(python3 -m pytest -m gpu -q --collect-only -p no:cacheprovider tests/bench/test_bf16_tolerance.py 2>/dev/null | grep -E -- '-twin\]$')
echo "$(echo "$ids" | wc -l) twins"
timeout -k 5 "${LIMIT_S:-540}" python3 -m pytest -m gpu -n 0 -q -rfE -p no:cacheprovider --timeout 240 --durations=15 \
  --junitxml="$OUT/gpu_tests.xml" $ids
