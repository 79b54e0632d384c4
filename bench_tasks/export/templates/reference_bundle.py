"""The task's float64 reference and input generator (reference/reference.py, copied from the cudamaster task
unchanged; the bench_tasks helpers it imports are copied under reference/bench_tasks)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "reference"))
_spec = importlib.util.spec_from_file_location("task_reference", HERE / "reference" / "reference.py")
assert _spec is not None and _spec.loader is not None
module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module)


def reference(x, p, precision):
    return module.reference(x, p, precision, None)


def generate(rng, names, precision):
    return module.generate(rng, names, precision)


def derive_names(names):
    return dict(module.derive(names)) if hasattr(module, "derive") else {}
