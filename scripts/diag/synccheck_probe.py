"""Which planted barrier misuse does synccheck report on this GPU? (issue 41: the divergent-__syncthreads control
is not reported on an H100, sm_90: threads that exit count as arrived). Prints each probe's verdict as JSON."""

import json
import sys
from pathlib import Path

from bench_tasks.harness.sanitize import sanitize
from settings import get_harness_settings

here = Path(__file__).parent
out = {}
for name in sys.argv[1:] or ["synccheck_probe_a.cu", "synccheck_probe_b.cu"]:
    (verdict,) = sanitize("vector_add", "fp32", (here / name).read_text(), settings=get_harness_settings(), tools=["synccheck"])
    out[name] = verdict.model_dump(mode="json")
print(json.dumps(out, indent=1))
