"""The task data a bundle is generated from: every argument, every size, in one JSON-able document.

Everything per size is computed here, once, by the task's own code (lengths, scalar values, derived names,
tolerances, work): the bundle's C++ (task_data.h) and Python (task.json) read the numbers, never the
expressions, so a bundle cannot evaluate a task differently from the harness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench_tasks.data import reference_names
from bench_tasks.spec import Variant, parse_draw

# prototype dtype -> the bundle runtime's element kind (bundle_common.h's Kind)
KINDS = {"float32": "F32", "bfloat16": "BF16", "int32": "I32", "float64": "F64", "int64": "I64", "uint32": "U32", "uint64": "U64"}
TORCH_DTYPES = {
    "float32": "torch.float32",
    "bfloat16": "torch.bfloat16",
    "int32": "torch.int32",
    "float64": "torch.float64",
    "int64": "torch.int64",
    "uint32": "torch.uint32",
    "uint64": "torch.uint64",
}
SCALAR_CAST = {"bfloat16": "__float2bfloat16((float){v})", "float32": "(float){v}", "float64": "(double){v}"}


@dataclass(frozen=True)
class SizeEntry:
    label: str  # "edge 0", "paper 3"
    params: dict[str, int]


def _arg_doc(variant: Variant, position: int) -> dict[str, Any]:
    param = variant.prototype.params[position]
    arg = variant.arg_of(param)
    role = arg.role_for(variant.precision)
    doc: dict[str, Any] = {
        "name": arg.name,
        "param": param.name,
        "ctype": param.ctype,
        "const": param.const,
        "dtype": param.dtype,
        "kind": KINDS[param.dtype],
        "torch_dtype": TORCH_DTYPES[param.dtype],
        "role": role,
        "memory": "device" if role == "scalar" else arg.memory_for(variant.precision),
        "draw": None,
        "draw_params": [],
        "generated": False,
    }
    if role in ("input", "inout"):
        if arg.draw is not None:
            kind, params = parse_draw(arg.draw)
            doc.update(draw=kind, draw_params=params, draw_spec=arg.draw)
        else:
            doc["generated"] = True  # reference.generate() draws it (structured inputs: sparse indices, ...)
    return doc


def _size_doc(variant: Variant, entry: SizeEntry) -> dict[str, Any]:
    task, precision = variant.task, variant.precision
    names = task.names(entry.params, precision)
    lengths = task.lengths(entry.params, precision)
    scalars = task.scalar_values(entry.params, precision)
    flops, nbytes = task.work(entry.params, precision)
    tolerances = {}
    for out in variant.outputs():
        tol = variant.tolerance_for(out, names)
        tolerances[out] = {"atol": tol.atol, "rtol": tol.rtol, "max_abs": tol.scale == "max_abs"}
    return {
        "label": entry.label,
        "params": dict(entry.params),
        "names": dict(names),
        "reference_names": reference_names(variant, entry.params),
        "lengths": lengths,
        "scalars": scalars,
        "tolerance": tolerances,
        "complexity": task.complexity_of(entry.params),
        "flops": flops,
        "bytes": nbytes,
    }


def size_entries(variant: Variant, measured: list[dict[str, int]]) -> tuple[list[SizeEntry], list[SizeEntry]]:
    """(test sizes, bench sizes): the test checks the edge sizes and every size the job measured (its paper sizes, or a
    custom task's own); the benchmark times the measured sizes (the task's paper sizes when none were measured)."""
    task = variant.task
    bench_params = measured or task.size_list("paper")
    bench = [SizeEntry(f"size {i}", dict(p)) for i, p in enumerate(bench_params)]
    edge = [] if task.custom else [SizeEntry(f"edge {i}", dict(p)) for i, p in enumerate(task.sizes.get("edge", ()))]
    return edge + bench, bench


def task_document(variant: Variant, measured: list[dict[str, int]]) -> dict[str, Any]:
    """Everything the bundle's code needs about the task at this precision, with numbers per size."""
    task = variant.task
    test, bench = size_entries(variant, measured)
    return {
        "task": task.name,
        "category": task.category,
        "summary": task.summary,
        "precision": variant.precision,
        "custom": task.custom,
        "oracle": task.oracle,
        "entry": variant.entry,
        "candidate_entry": variant.candidate_entry,
        "prototype": variant.prototype.c_declaration(),
        "candidate_prototype": variant.candidate_prototype.c_declaration(),
        "size_names": sorted(bench[0].params) if bench else [],
        "args": [_arg_doc(variant, i) for i in range(len(variant.prototype.params))],
        "outputs": variant.outputs(),
        "has_generated": any(a.draw is None and a.role_for(variant.precision) in ("input", "inout") for a in task.args),
        "test_sizes": [_size_doc(variant, e) for e in test],
        "bench_sizes": [_size_doc(variant, e) for e in bench],
        "cost": {"complexity": task.complexity, "flops": task.flops, "bytes": task.bytes},
        "notes": dict(task.notes),
    }
