#!/usr/bin/env bash
# PyTorch references (issue 42) on the GPU machine: the gpu-marked tests of tests/bench/test_pytorch_refs.py (four
# honest kernels `ok` with their speedups over PyTorch eager and torch.compile, timed interleaved in the sandboxed
# torch process; four wrong ones refused) and a JSON record under $OUT (device_pytorch.json; timings.jsonl: per
# task and size the eager, compile and candidate medians in us and both speedups, and P over eager).
# Run from the repository root:
#   bash scripts/device_pytorch.sh      (about 4-6 minutes on an H100: 6 references probed in the sandbox, 9 evaluations,
#                                        6 torch.compile compiles at one size each; `bench run --suite` twice on relu)
# The device's own torch (2.11) is used: do not install the [torch] extra there.
set -uo pipefail
OUT=${OUT:-/tmp/device_pytorch}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTEST_PLUGINS=xdist.plugin,pytest_timeout
python3 - <<'PY' > "$OUT/torch.txt" 2>&1
import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
rm -f "$OUT/timings.jsonl"
CM_PYTORCH_TIMINGS="$OUT/timings.jsonl" timeout ${STEP_LIMIT_S:-540} python3 -m pytest -n 0 -p no:cacheprovider -q -m gpu tests/bench/test_pytorch_refs.py \
  --junitxml="$OUT/junit.xml" > "$OUT/pytest.txt" 2>&1
rc=$?
python3 - "$OUT" "$rc" <<'PY'
import json, os, sys, xml.etree.ElementTree as ET
out, rc = sys.argv[1], int(sys.argv[2])
cases = []
junit = ET.parse(f"{out}/junit.xml").getroot().iter("testcase") if os.path.exists(f"{out}/junit.xml") else []
for case in junit:
    failed = case.find("failure") is not None or case.find("error") is not None
    skipped = case.find("skipped") is not None
    cases.append({"test": case.get("name"), "seconds": float(case.get("time", 0)), "outcome": "failed" if failed else "skipped" if skipped else "passed"})
timings = [json.loads(line) for line in open(f"{out}/timings.jsonl")] if os.path.exists(f"{out}/timings.jsonl") else []
record = {"timings": timings, "pytest_rc": rc, "torch": open(f"{out}/torch.txt").read().strip(), "gpu": open(f"{out}/gpu.txt").read().strip(), "tests": cases}
json.dump(record, open(f"{out}/device_pytorch.json", "w"), indent=1)
print(json.dumps({k: v for k, v in record.items() if k != "tests"}), sum(c["outcome"] == "passed" for c in cases), "passed of", len(cases))
PY
tail -25 "$OUT/pytest.txt"
exit $rc
