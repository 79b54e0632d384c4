"""A harness task from a PyTorch reference (KernelBench's format): the probe's report made a Task.

The candidate stays a C-ABI CUDA source: its prototype is derived from the reference (outputs, then the forward's
inputs, then the module's parameters and buffers in state_dict order, then the file's integer constants) and goes
through bench_tasks.prototype like every task's. The oracle is the reference itself, run in float64 on the CPU in
the sandbox on exactly the inputs (and parameters) the harness drew for the kernel (`TorchReference`). The harness's
baseline slot holds an empty stub: a PyTorch task's baselines are PyTorch eager and torch.compile (bench_tasks/pytorch/
timing.py), never a .cu of ours:
the stub's timing is removed from the result (`after_evaluation`).
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench_tasks import expr
from bench_tasks.prototype import Prototype, parse
from bench_tasks.spec import PRECISIONS, Arg, Task, TaskError, ToleranceSpec, validate
from settings import HarnessSettings, get_harness_settings

from .runner import Limits, ReferenceRefused, run_child

# Tolerances by precision: |out - ref| <= atol * max|ref| + rtol * |ref| per output (docs/pytorch-tasks.md says why).
TOLERANCES = {"fp32": ToleranceSpec(1e-4, 1e-4, "max_abs"), "bf16": ToleranceSpec(1e-2, 2e-2, "max_abs")}
C_FLOAT = {"fp32": "float", "bf16": "__nv_bfloat16"}
C_INT = {"int64": "int64_t", "int32": "int"}
C_RESERVED = {"int", "float", "double", "char", "long", "short", "void", "const", "auto", "register", "signed", "unsigned",
              "struct", "union", "enum", "switch", "case", "default", "goto", "sizeof", "static", "extern", "inline",
              "volatile", "typedef", "this", "new", "delete", "template", "class", "namespace", "operator", "friend",
              "private", "public", "protected", "virtual", "bool", "true", "false", "elem", "half", "dim3"}  # fmt: skip
PROBE_SEEDS = (1, 2)


@dataclass(frozen=True)
class Tensor:
    """One tensor of the reference: `source` its name there (forward argument, state_dict key, output index), `name`
    its C parameter's, `shapes` one per size, `stats` its values at the first size (min, max, mean, std)."""

    name: str
    source: str
    kind: str  # "output", "input", "param"
    dtype: str
    shapes: tuple[tuple[int, ...], ...]
    stats: Mapping[str, float] = field(default_factory=dict)

    def length(self, size: int) -> int:
        return max(1, math.prod(self.shapes[size]))


@dataclass(frozen=True)
class Probe:
    """What the sandboxed run of a reference reported (nothing of the file runs here)."""

    source: str
    constants: dict[str, int]
    sizes: tuple[dict[str, int], ...]  # every constant, at every size
    tensors: tuple[Tensor, ...]  # outputs, inputs, params: the prototype's order
    flops: tuple[int, ...]
    references: tuple[tuple[dict[str, np.ndarray], ...], ...] = ()  # per size, per seed: "input:x" / "param:w" / "output:0" -> float64

    def of(self, kind: str) -> list[Tensor]:
        return [t for t in self.tensors if t.kind == kind]


def probe(source: str, sizes: list[dict[str, int]], settings: HarnessSettings | None = None, limits: Limits | None = None) -> Probe:
    """Run the reference in the sandbox at every size (`[]`: the file's own constants) and collect its report."""
    result, arrays = run_child(
        source, {"mode": "probe", "sizes": sizes, "seeds": list(PROBE_SEEDS)}, settings or get_harness_settings(), limits or Limits()
    )
    rows = result["sizes"]
    _consistent(rows)
    names = _c_names(rows[0], result["constants"])
    tensors = []
    for kind, key in (("output", "outputs"), ("input", "inputs"), ("param", "params")):
        for i, t in enumerate(rows[0][key]):
            source_name = t.get("name", str(i))
            shapes = tuple(tuple(r[key][i]["shape"]) for r in rows)
            stats = {k: t[k] for k in ("min", "max", "mean", "std") if k in t}
            tensors.append(Tensor(names[(kind, source_name)], source_name, kind, t["dtype"], shapes, stats))
    references = tuple(tuple(_reference_arrays(ref["files"], arrays) for ref in r["references"]) for r in rows)
    return Probe(
        source, dict(result["constants"]), tuple(r["size"] for r in rows), tuple(tensors), tuple(int(r["flops"]) for r in rows), references
    )


def _reference_arrays(files: dict[str, str], arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {key: arrays[Path(path).name] for key, path in files.items() if Path(path).name in arrays}


def _consistent(rows: list[dict]) -> None:
    """The same inputs, parameters and outputs (names, dtypes, ranks) at every size."""
    first = rows[0]
    for i, row in enumerate(rows[1:], start=1):
        for key in ("inputs", "params", "outputs"):
            a = [(t.get("name"), t["dtype"], len(t["shape"])) for t in first[key]]
            b = [(t.get("name"), t["dtype"], len(t["shape"])) for t in row[key]]
            if a != b:
                raise ReferenceRefused(
                    "sizes", f"size {i} has other {key} than size 0 ({b} vs {a}): a task's arguments are the same at every size"
                )


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text).strip("_") or "t"
    return "t_" + name if name[0].isdigit() else name


def _c_names(row: dict, constants: dict[str, int]) -> dict[tuple[str, str], str]:
    """C parameter names for every tensor (outputs `out`/`out0`..., inputs as forward names them, parameters by their
    state_dict key with dots as underscores), unique and apart from the constants' names and C's words."""
    taken = set(constants) | C_RESERVED | set(keyword.kwlist)
    names: dict[tuple[str, str], str] = {}
    outs = row["outputs"]
    wanted = [("output", str(i), "out" if len(outs) == 1 else f"out{i}") for i in range(len(outs))]
    wanted += [("input", t["name"], _identifier(t["name"])) for t in row["inputs"]]
    wanted += [("param", t["name"], _identifier(t["name"])) for t in row["params"]]
    for kind, source, name in wanted:
        base, n = name[:48], 2
        while name in taken or name.startswith("len_"):
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names[(kind, source)] = name
    return names


# -- the prototype ---------------------------------------------------------------------------------------------------


def ctype(tensor: Tensor, precision: str) -> str:
    return C_FLOAT[precision] if tensor.dtype == "float32" else C_INT[tensor.dtype]


def dims(probe_: Probe) -> list[tuple[str, str]]:
    """The integer dimensions: every constant of the file, in file order, as (C type, name)."""
    out = []
    for name in probe_.constants:
        biggest = max(abs(s[name]) for s in probe_.sizes)
        out.append(("int64_t" if biggest > 2**31 - 1 else "int", name))
    return out


def prototype_text(probe_: Probe, entry: str, precision: str) -> str:
    """The C prototype: outputs, inputs, parameters and buffers (state_dict order), integer dimensions."""
    parts = []
    for t in probe_.tensors:
        const = "" if t.kind == "output" else "const "
        parts.append(f"{const}{ctype(t, precision)}* {t.name}")
    parts += [f"{c} {name}" for c, name in dims(probe_)]
    return f'extern "C" void {entry}({", ".join(parts)})'


def derived_prototype(probe_: Probe, entry: str, precision: str) -> Prototype:
    """The prototype, through the project's one parser of prototypes (bench_tasks.prototype)."""
    return parse(prototype_text(probe_, entry, precision))


def shape_doc(probe_: Probe) -> str:
    """What each parameter holds, for the user, the planner and the coder: shapes per size, row-major, contiguous."""
    lines = []
    for t in probe_.tensors:
        shapes = ", ".join("[" + ", ".join(map(str, s)) + "]" for s in dict.fromkeys(t.shapes))
        what = {"output": f"output {t.source}", "input": f"forward input {t.source}", "param": f"state_dict[{t.source!r}]"}[t.kind]
        lines.append(f"{t.name}: {what}, {t.dtype} in the reference, shape {shapes} (row-major, contiguous)")
    sizes = "; ".join(", ".join(f"{k}={v}" for k, v in s.items()) for s in probe_.sizes)
    lines.append(f"integer dimensions: the file's constants ({sizes})")
    return "\n".join(lines)


# -- draws -----------------------------------------------------------------------------------------------------------


def _num(x: float) -> str:
    return f"{x:.6g}"


def draw_for(t: Tensor) -> str:
    """How the harness draws this input: like the reference's own values (rand, randn, a module's init). A constant
    parameter (LayerNorm's ones, a zero bias) is drawn around its value, so that a kernel which ignores it fails."""
    s = t.stats
    if not s:
        return "uniform(0, 1)"
    lo, hi = s["min"], s["max"]
    if t.dtype in C_INT:
        return f"randint({int(lo)}, {int(hi) + 1})"
    if lo == hi:
        return (
            f"uniform({_num(lo * 0.5)}, {_num(lo * 1.5)})"
            if lo > 0
            else f"uniform({_num(lo * 1.5)}, {_num(lo * 0.5)})"
            if lo < 0
            else "uniform(-0.5, 0.5)"
        )
    if lo >= 0 and hi <= 1:
        return "uniform(0, 1)"
    if abs(s["mean"]) < 0.2 and 0.8 < s["std"] < 1.2 and t.kind == "input":
        return "normal(0, 1)"
    return f"uniform({_num(lo)}, {_num(hi)})"


# -- the task --------------------------------------------------------------------------------------------------------


def _stub(proto_text: str) -> str:
    return (
        "// A PyTorch task's baseline slot: empty. Its baselines are PyTorch eager and torch.compile (timed by\n"
        f"// bench_tasks/pytorch/timing.py); the candidate is checked against the float64 reference.\n{proto_text} {{}}\n"
    )


class TorchReference:
    """The oracle of a PyTorch task, as the harness calls a reference.py: `reference(inputs, names, precision, sample)`
    runs the model in float64 in the sandbox on the stored inputs and parameters (flat float64 arrays by C name)."""

    def __init__(self, task: PyTorchTask) -> None:
        self.task = task

    def reference(
        self, inputs: dict[str, np.ndarray], names: Mapping[str, float], precision: str, sample: Any = None
    ) -> dict[str, np.ndarray]:
        p = self.task.probe
        assert p is not None
        index = self.task.size_index(names)
        request: dict[str, Any] = {"mode": "reference", "size": p.sizes[index], "params": {}, "inputs": []}
        files = {}
        for t in p.tensors:
            if t.kind == "output":
                continue
            files[t.name] = np.asarray(inputs[t.name], dtype=np.float64 if t.dtype == "float32" else np.int64)
            if t.kind == "param":
                request["params"][t.source] = f"@{t.name}"
            else:
                request["inputs"].append([f"@{t.name}", list(t.shapes[index])])
        result, arrays = run_child(p.source, request, self.task.settings or get_harness_settings(), self.task.limits, files)
        outputs = [Path(f).name for f in result["outputs"]]
        return {t.name: arrays[outputs[i]] for i, t in enumerate(p.of("output"))}


@dataclass(frozen=True)
class PyTorchTask(Task):
    """A Task whose oracle is a PyTorch reference run in the sandbox; its lengths and counted FLOPs per size are the
    probe's (`len_<arg>`, `flops_counted`)."""

    probe: Probe | None = None
    limits: Limits = field(default_factory=Limits)
    settings: HarnessSettings | None = None
    reference_name: str = ""

    @property
    def reference_module(self) -> Any:
        return TorchReference(self)

    def after_evaluation(self, result: Any, run: Any) -> Any:
        """The stub's speedups hidden; once the candidate is ok, eager and torch.compile timed against it."""
        from .timing import measure_baselines

        return measure_baselines(self, result, run.text, run.size_list, run.settings, run.extra_flags, run.timing)

    def size_index(self, names: Mapping[str, float]) -> int:
        assert self.probe is not None
        for i, size in enumerate(self.probe.sizes):
            if all(names.get(k) == v for k, v in size.items()):
                return i
        raise TaskError(f"task {self.name}: {dict(names)} is not one of the sizes its reference was run at; run it at those sizes")

    def _derive_hook(self) -> Callable[[dict], dict] | None:
        probe_ = self.probe
        assert probe_ is not None

        def derive(names: dict) -> dict:
            i = self.size_index(names)
            return {f"len_{t.name}": t.length(i) for t in probe_.tensors} | {"flops_counted": probe_.flops[i]}

        return derive


def check_name(name: str, precision: str) -> None:
    """A task's name is its C entry's (an identifier); its precision one of PRECISIONS. Raises TaskError."""
    if precision not in PRECISIONS:
        raise TaskError(f"unknown precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
    entry = _identifier(name)
    if entry != name or len(name) > 64:
        raise TaskError(f"task name {name!r} must be a C identifier of at most 64 characters (e.g. {entry[:64]!r})")


def make_task(
    probe_: Probe,
    name: str,
    precision: str,
    *,
    complexity: str | None = None,
    settings: HarnessSettings | None = None,
    limits: Limits | None = None,
    reference_name: str = "",
) -> PyTorchTask:
    """The harness task of a probed reference at one precision; raises TaskError naming what is wrong."""
    check_name(name, precision)
    proto = derived_prototype(probe_, name, precision)
    args = [
        Arg(t.name, "output" if t.kind == "output" else "input", f"len_{t.name}", None, None if t.kind == "output" else draw_for(t))
        for t in probe_.tensors
    ]
    args += [Arg(n, "scalar", None, n) for _, n in dims(probe_)]
    outputs = probe_.of("output")
    counted = all(f > 0 for f in probe_.flops)
    elem = {t.name: ("elem" if t.dtype == "float32" else str(np.dtype(t.dtype).itemsize)) for t in probe_.tensors}
    task = PyTorchTask(
        name=name,
        category="pytorch",
        summary=f"PyTorch reference {reference_name or name} (KernelBench format); oracle: the model in float64",
        directory=Path("."),
        prototypes={precision: proto},
        args=tuple(args),
        sizes={"paper": tuple({k: s[k] for k in probe_.constants} for s in probe_.sizes)},
        derived={},
        complexity=complexity or ("flops_counted" if counted else " + ".join(f"len_{t.name}" for t in outputs)),
        flops="flops_counted",
        bytes=" + ".join(f"len_{t.name} * {elem[t.name]}" for t in probe_.tensors),
        tolerance={precision: TOLERANCES[precision]},
        notes={"oracle": "the PyTorch reference in float64 on the CPU, in the sandbox", "shapes": shape_doc(probe_)},
        baseline_text=_stub(proto.text),
        probe=probe_,
        limits=limits or Limits(),
        settings=settings,
        reference_name=reference_name,
    )
    if complexity:
        _check_complexity(task)
    validate(task)
    return task


def _check_complexity(task: PyTorchTask) -> None:
    """A user's cost expression evaluates at every size to a positive number."""
    for size in task.size_list("paper"):
        try:
            value = expr.evaluate(task.complexity, task.names(size, next(iter(task.prototypes))))
        except expr.ExpressionError as exc:
            raise TaskError(f"complexity {task.complexity!r}: {exc}") from None
        if not value > 0:
            raise TaskError(f"complexity {task.complexity!r} is {value} at {size}; it must be positive")
