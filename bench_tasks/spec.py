"""Task specs: `bench_tasks/tasks/<name>/task.toml` + `baseline.cu` + `reference.py`.

A task is data (the TOML: prototypes, argument roles and lengths, sizes, complexity, FLOPs and
bytes, tolerances, input draws) plus a baseline .cu we wrote and a float64 reference in numpy.
See `bench_tasks/README.md` for the format.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from . import expr
from .prototype import Prototype, parse

TASKS_DIR = Path(__file__).parent / "tasks"
PRECISIONS = ("fp32", "bf16")
ROLES = ("input", "output", "accumulate", "inout", "scalar")
SIZE_SETS = ("paper", "large", "edge", "all")
ELEM_BYTES = {"fp32": 4, "bf16": 2}

Precision = Literal["fp32", "bf16"]
_REFRESH_RE = re.compile(r"^\s*(keep|(uniform|normal|randint|const)\s*\([^)]*\))\s*$")


class TaskError(ValueError):
    """A task name, precision, size set or spec is not valid; the message says what is."""


@dataclass(frozen=True)
class Arg:
    name: str
    role: str
    length: str | None = None  # expression of the size parameters, for buffers
    value: str | None = None  # expression, for scalars
    draw: str | None = None  # e.g. "uniform(-1, 1)"; None: the task's generate() provides it
    # Between timed calls: a draw spec (values redrawn on the device) or "keep"; None: the `draw`
    # if there is one, else kept (see bench_tasks/refresh.py and FORMAT item 6).
    refresh: str | None = None


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


@dataclass(frozen=True)
class Variant:
    """One task at one precision: what a kernel must export and how it is checked."""

    task: "Task"
    precision: str
    prototype: Prototype

    @property
    def entry(self) -> str:
        return self.prototype.name

    @property
    def candidate_entry(self) -> str:
        return self.prototype.name + "_optimized"

    @property
    def candidate_prototype(self) -> Prototype:
        return self.prototype.renamed(self.candidate_entry)

    @property
    def tolerance(self) -> Tolerance:
        return self.task.tolerance[self.precision]

    @property
    def key(self) -> str:
        return f"{self.task.name}/{self.precision}"


@dataclass(frozen=True)
class Task:
    name: str
    category: str
    summary: str
    directory: Path
    prototypes: dict[str, Prototype]
    args: tuple[Arg, ...]
    sizes: dict[str, tuple[dict[str, int], ...]]
    derived: dict[str, str]
    complexity: str
    flops: str
    bytes: str
    tolerance: dict[str, Tolerance]
    notes: dict[str, str] = field(default_factory=dict)
    # A custom task (the team's own kernel) carries its baseline's text and has no float64
    # reference: its correctness oracle is the baseline's output on the same inputs.
    baseline_text: str | None = None
    oracle: str = "reference"  # "reference" (float64, reference.py) or "baseline"

    # -- lookups -------------------------------------------------------------------------------
    def variant(self, precision: str) -> Variant:
        if precision not in self.prototypes:
            raise TaskError(f"unknown precision {precision!r} for task {self.name}: choose one of {', '.join(PRECISIONS)}")
        return Variant(self, precision, self.prototypes[precision])

    def variants(self) -> list[Variant]:
        return [self.variant(p) for p in PRECISIONS if p in self.prototypes]

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)

    @property
    def baseline_path(self) -> Path:
        return self.directory / "baseline.cu"

    def baseline_source(self) -> str:
        return self.baseline_text if self.baseline_text is not None else self.baseline_path.read_text()

    @property
    def custom(self) -> bool:
        return self.baseline_text is not None

    def size_list(self, size_set: str) -> list[dict[str, int]]:
        if self.custom and size_set in SIZE_SETS:  # a custom task has one list of sizes
            return list(self.sizes["paper"])
        if size_set == "all":
            return list(self.sizes["paper"]) + list(self.sizes["large"])
        if size_set not in self.sizes:
            raise TaskError(f"unknown size set {size_set!r}: choose one of {', '.join(SIZE_SETS)}")
        return list(self.sizes[size_set])

    # -- size expressions ----------------------------------------------------------------------
    def names(self, params: dict[str, int], precision: str) -> dict[str, float]:
        """Size parameters plus derived ones plus `elem` (bytes of one element at `precision`)."""
        names: dict[str, float] = dict(params)
        names["elem"] = ELEM_BYTES[precision]
        for key, expression in self.derived.items():
            names[key] = expr.evaluate_int(expression, names)
        return names

    def lengths(self, params: dict[str, int], precision: str) -> dict[str, int]:
        names = self.names(params, precision)
        return {a.name: expr.evaluate_int(a.length, names) for a in self.args if a.role != "scalar"}

    def scalar_values(self, params: dict[str, int], precision: str) -> dict[str, float]:
        names = self.names(params, precision)
        return {a.name: expr.evaluate(a.value, names) for a in self.args if a.role == "scalar"}

    def complexity_of(self, params: dict[str, int]) -> int:
        return int(expr.evaluate(self.complexity, self.names(params, "fp32")))

    def work(self, params: dict[str, int], precision: str) -> tuple[float, float]:
        """(FLOPs, bytes) of one call: the minimum any implementation must do."""
        names = self.names(params, precision)
        return float(expr.evaluate(self.flops, names)), float(expr.evaluate(self.bytes, names))

    # -- code ----------------------------------------------------------------------------------
    @property
    def reference_module(self) -> ModuleType | None:
        return None if self.oracle == "baseline" else _load_reference(self.directory)


@cache
def _load_reference(directory: Path) -> ModuleType:
    path = directory / "reference.py"
    spec = importlib.util.spec_from_file_location(f"bench_tasks.tasks.{directory.name}.reference", path)
    if spec is None or spec.loader is None:
        raise TaskError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "reference"):
        raise TaskError(f"{path} defines no reference(x, p, sample)")
    return module


def _require(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise TaskError(f"{where}: missing key {key!r}")
    return data[key]


def load_task_file(path: Path) -> Task:
    where = str(path)
    data = tomllib.loads(path.read_text())
    name = _require(data, "name", where)
    protos = {p: parse(t) for p, t in _require(data, "prototype", where).items()}
    for p in protos:
        if p not in PRECISIONS:
            raise TaskError(f"{where}: unknown precision {p!r}")
    args = []
    for arg_name, a in _require(data, "args", where).items():
        role = _require(a, "role", f"{where} args.{arg_name}")
        if role not in ROLES:
            raise TaskError(f"{where}: args.{arg_name}.role {role!r} is not one of {ROLES}")
        refresh = a.get("refresh")
        if refresh is not None and (role not in ("input", "inout") or not _REFRESH_RE.match(str(refresh))):
            raise TaskError(f"{where}: args.{arg_name}.refresh {refresh!r} must be \"keep\" or a draw such as "
                            "\"uniform(-1, 1)\", on an input or inout argument")
        args.append(Arg(arg_name, role, a.get("length"), None if a.get("value") is None else str(a["value"]), a.get("draw"),
                        None if refresh is None else str(refresh)))
    sizes = {k: tuple(dict(s) for s in v) for k, v in _require(data, "sizes", where).items()}
    cost = _require(data, "cost", where)
    tol = {p: Tolerance(float(t["atol"]), float(t["rtol"])) for p, t in _require(data, "tolerance", where).items()}
    task = Task(
        name=name,
        category=_require(data, "category", where),
        summary=data.get("summary", ""),
        directory=path.parent,
        prototypes=protos,
        args=tuple(args),
        sizes=sizes,
        derived=dict(data.get("derived", {})),
        complexity=str(_require(cost, "complexity", where)),
        flops=str(_require(cost, "flops", where)),
        bytes=str(_require(cost, "bytes", where)),
        tolerance=tol,
        notes=dict(data.get("notes", {})),
    )
    validate(task)
    return task


def validate(task: Task) -> None:
    """Cross-check the TOML against the prototypes; raise TaskError naming the first problem."""
    where = f"task {task.name}"
    for set_name in ("paper",) if task.custom else ("paper", "large"):
        if not task.sizes.get(set_name):
            raise TaskError(f"{where}: size set {set_name!r} is empty")
    by_name = {a.name: a for a in task.args}
    for precision, proto in task.prototypes.items():
        expected = task.name if precision == "fp32" else f"{task.name}_bf16"
        if not task.custom and proto.name != expected:
            raise TaskError(f"{where}: {precision} entry is {proto.name!r}, expected {expected!r}")
        names = [p.name for p in proto.params]
        if sorted(names) != sorted(by_name):
            raise TaskError(f"{where}: {precision} prototype parameters {names} differ from args {sorted(by_name)}")
        for p in proto.params:
            a = by_name[p.name]
            if p.pointer != (a.role != "scalar"):
                raise TaskError(f"{where}: {p.name} is {'a pointer' if p.pointer else 'a scalar'} but has role {a.role}")
            if a.role == "input" and p.pointer and not p.const and not task.custom and task.notes.get("nonconst_inputs") is None:
                raise TaskError(f"{where}: input {p.name} is not const in {precision}; explain in notes.nonconst_inputs")
    from .refresh import refresh_draw  # here: refresh imports this module

    for variant in task.variants():
        for a in task.args:
            refresh_draw(variant, a.name)
    for sizes in task.sizes.values():
        for params in sizes:
            for precision in task.prototypes:
                task.lengths(params, precision)
                task.scalar_values(params, precision)
                task.work(params, precision)
            task.complexity_of(params)


_REGISTERED: dict[str, Task] = {}


def register_task(task: Task) -> None:
    """Make a task built in code (a custom task) loadable by name in this process."""
    validate(task)
    _REGISTERED[task.name] = task


def load_task(name: str) -> Task:
    if name in _REGISTERED:
        return _REGISTERED[name]
    return _load_builtin(name)


def custom_task(name: str, precision: str, prototype: str, args: dict[str, dict[str, Any]], sizes: list[dict[str, int]],
                baseline_source: str, *, complexity: str | None = None, tolerance: tuple[float, float] | None = None,
                summary: str = "") -> Task:
    """A task from a team's own kernel: one precision, its baseline's output as the oracle.

    `args` maps each parameter to {role, length | value, draw?}; inputs default to uniform(-1, 1).
    Complexity defaults to the total output length; the roofline floor counts bytes only.
    """
    if precision not in PRECISIONS:
        raise TaskError(f"unknown precision {precision!r}: choose one of {', '.join(PRECISIONS)}")
    proto = parse(prototype)
    arg_list = []
    for arg_name, a in args.items():
        role = a.get("role")
        if role not in ROLES:
            raise TaskError(f"args.{arg_name}.role {role!r} is not one of {ROLES}")
        draw = a.get("draw") or ("uniform(-1, 1)" if role in ("input", "inout") else None)
        arg_list.append(Arg(arg_name, role, a.get("length"), None if a.get("value") is None else str(a["value"]), draw))
    outputs = [a for a in arg_list if a.role in ("output", "accumulate", "inout")]
    if not outputs:
        raise TaskError("a custom task needs at least one output argument (role output, accumulate or inout)")
    buffers = [f"({a.length})*{proto.param(a.name).itemsize}" for a in arg_list if a.role != "scalar"]
    atol, rtol = tolerance or ((1e-2, 1e-2) if precision == "bf16" else (1e-5, 1e-4))
    task = Task(name=name, category="custom", summary=summary or f"custom task {proto.name}", directory=Path("."),
                prototypes={precision: proto}, args=tuple(arg_list), sizes={"paper": tuple(dict(s) for s in sizes)},
                derived={}, complexity=complexity or " + ".join(f"({a.length})" for a in outputs), flops="0",
                bytes=" + ".join(buffers), tolerance={precision: Tolerance(atol, rtol)},
                notes={"oracle": "the baseline's output on the same inputs"}, baseline_text=baseline_source, oracle="baseline")
    validate(task)
    return task


@cache
def _load_builtin(name: str) -> Task:
    path = TASKS_DIR / name / "task.toml"
    if not path.is_file():
        known = ", ".join(task_names())
        raise TaskError(f"unknown task {name!r}; known tasks: {known} (see `cudamaster bench list`)")
    return load_task_file(path)


def task_names() -> list[str]:
    return sorted(p.parent.name for p in TASKS_DIR.glob("*/task.toml"))


def all_tasks() -> list[Task]:
    return [load_task(n) for n in task_names()]
