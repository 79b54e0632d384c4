"""Task specs: `bench_tasks/tasks/<name>/task.toml` + `baseline.cu` + `reference.py`.

A task is data (the TOML: prototypes, argument roles and lengths, sizes, complexity, FLOPs and
bytes, tolerances, input draws) plus a baseline .cu we wrote and a float64 reference in numpy.
See `bench_tasks/README.md` for the format.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, get_args

from . import expr
from .prototype import Param, Prototype, parse

if TYPE_CHECKING:
    from settings import HarnessSettings

TASKS_DIR = Path(__file__).parent / "tasks"
# A variant's precision and a size set: defined here, once (graph.contract re-exports them for the API, CLI and dashboard).
Precision = Literal["fp32", "bf16"]
SizeSet = Literal["paper", "large", "edge", "all"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
DEFAULT_PRECISION: Precision = "fp32"  # the job spec's default (graph.contract.DEFAULT_PRECISION) and the CLIs'
SIZE_SETS: tuple[SizeSet, ...] = get_args(SizeSet)
ROLES = ("input", "output", "accumulate", "inout", "scalar")
OUTPUT_ROLES = ("output", "accumulate", "inout")
INPUT_ROLES = ("input", "inout")
MEMORIES = ("device", "host")
SCALES = ("max_abs",)
ELEM_BYTES = {"fp32": 4, "bf16": 2}
DRAWS = {"uniform": 2, "normal": 2, "randint": 2, "const": 1}  # kind -> number of parameters
KEEP = "keep"
SHUFFLE = "shuffle"  # refresh: the dataset's own values, permuted per timed call (bench_tasks/refresh.py)

ARG_KEYS = ("role", "length", "value", "draw", "memory", "refresh", "param")
TOLERANCE_KEYS = ("atol", "rtol", "scale")
TASK_KEYS = ("name", "category", "summary", "spec", "prototype", "args", "derived", "sizes", "cost", "tolerance", "notes")
COST_KEYS = ("complexity", "flops", "bytes")

PerPrecision = str | Mapping[str, str]  # one value for every precision, or a table keyed by precision

_DRAW_RE = re.compile(r"^\s*(\w+)\s*\(([^)]*)\)\s*$")


class TaskError(ValueError):
    """A task name, precision, size set or spec is not valid; the message says what is."""


def parse_draw(spec: str) -> tuple[str, list[float]]:
    """`uniform(-1, 1)` -> ("uniform", [-1.0, 1.0]); raises TaskError naming what is wrong."""
    m = _DRAW_RE.match(spec) if isinstance(spec, str) else None
    if not m:
        raise TaskError(f"cannot parse draw {spec!r}; use uniform(a, b), normal(mu, sigma), randint(a, b) or const(v)")
    kind = m.group(1)
    if kind not in DRAWS:
        raise TaskError(f"unknown draw {kind!r} in {spec!r}; use one of {', '.join(DRAWS)}")
    try:
        params = [float(v) for v in m.group(2).split(",") if v.strip()]
    except ValueError:
        raise TaskError(f"draw {spec!r}: parameters must be numbers") from None
    if len(params) != DRAWS[kind]:
        raise TaskError(f"draw {spec!r}: {kind} takes {DRAWS[kind]} parameter(s), got {len(params)}")
    return kind, params


def _per_precision(value: PerPrecision, precision: str, what: str) -> str:
    if isinstance(value, str):
        return value
    if precision not in value:
        raise TaskError(f"{what} has no entry for precision {precision!r} (it has {', '.join(value)})")
    return value[precision]


def _unknown_keys(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TaskError(f"{where}: unknown key {key!r}{hint}; allowed keys: {', '.join(allowed)}")


@dataclass(frozen=True)
class Arg:
    """One kernel parameter. `role` and `memory` are one value or a table keyed by precision
    (e.g. {fp32 = "accumulate", bf16 = "output"}): read them with role_for() / memory_for()."""

    name: str
    role: PerPrecision
    length: str | None = None  # expression of the size parameters, for buffers
    value: str | None = None  # expression, for scalars
    draw: str | None = None  # e.g. "uniform(-1, 1)"; None: the task's generate() provides it
    memory: PerPrecision = "device"  # "device" or "host" (plain pageable host memory)
    refresh: str | None = None  # a draw spec, "keep", or None (the default: see refresh_for)
    param: PerPrecision | None = None  # the prototype's parameter name where it differs (e.g. {bf16 = "out"})

    def role_for(self, precision: str) -> str:
        return _per_precision(self.role, precision, f"args.{self.name}.role")

    def memory_for(self, precision: str) -> str:
        return _per_precision(self.memory, precision, f"args.{self.name}.memory")

    def param_name(self, precision: str) -> str:
        """The name of this argument in the prototype of `precision` (the arg's own name by default)."""
        if self.param is None or (not isinstance(self.param, str) and precision not in self.param):
            return self.name
        return _per_precision(self.param, precision, f"args.{self.name}.param")

    def roles(self) -> set[str]:
        """Every role the argument has, over all precisions."""
        return {self.role} if isinstance(self.role, str) else set(self.role.values())

    @property
    def scalar(self) -> bool:
        return "scalar" in self.roles()

    def is_output(self, precision: str) -> bool:
        return self.role_for(precision) in OUTPUT_ROLES

    def refresh_for(self) -> str | None:
        """How an input is redrawn between timed calls: a draw spec, or None to keep it as it is.

        Default: an argument with a `draw` is redrawn with it; one produced by generate() is kept."""
        if self.refresh == KEEP:
            return None
        return self.refresh if self.refresh is not None else self.draw


@dataclass(frozen=True)
class Tolerance:
    """Numbers for one output at one size: |out - ref| <= atol' + rtol * |ref|, with atol' = atol,
    or atol * max|ref| over the compared elements when scale == "max_abs"."""

    atol: float
    rtol: float
    scale: str | None = None


@dataclass(frozen=True)
class ToleranceSpec:
    """A tolerance as written in task.toml: numbers or expressions over the size names and `elem`."""

    atol: float | str
    rtol: float | str
    scale: str | None = None

    def resolve(self, names: Mapping[str, float]) -> Tolerance:
        atol, rtol = float(expr.evaluate(self.atol, names)), float(expr.evaluate(self.rtol, names))
        for key, v in (("atol", atol), ("rtol", rtol)):
            if not math.isfinite(v) or v < 0:
                raise TaskError(f"tolerance {key} = {getattr(self, key)!r} gave {v}; it must be finite and >= 0")
        return Tolerance(atol, rtol, self.scale)


@dataclass(frozen=True)
class Variant:
    """One task at one precision: what a kernel must export and how it is checked."""

    task: Task
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

    def param(self, arg_name: str) -> Param:
        """The prototype parameter of argument `arg_name` (its C type, pointer, const)."""
        return self.prototype.param(self.task.arg(arg_name).param_name(self.precision))

    def arg_of(self, param: Param) -> Arg:
        """The argument that prototype parameter `param` is."""
        for a in self.task.args:
            if a.param_name(self.precision) == param.name:
                return a
        raise KeyError(param.name)

    def outputs(self) -> list[str]:
        """The arguments compared with the reference (roles output, accumulate and inout)."""
        return [a.name for a in self.task.args if a.is_output(self.precision)]

    def tolerance_for(self, output: str, names: Mapping[str, float]) -> Tolerance:
        """The tolerance of `output` at one size; `names` = task.names(params, precision) (or more)."""
        spec = self.task.tolerance_outputs.get(output, {}).get(self.precision) or self.task.tolerance[self.precision]
        return spec.resolve(names)

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
    tolerance: dict[str, ToleranceSpec]
    notes: dict[str, str] = field(default_factory=dict)
    tolerance_outputs: dict[str, dict[str, ToleranceSpec]] = field(default_factory=dict)  # output -> precision -> spec
    # A custom task (the team's own kernel) carries its baseline's text and has no float64
    # reference: its correctness oracle is the baseline's output on the same inputs.
    baseline_text: str | None = None
    oracle: str = "reference"  # "reference" (float64, reference.py) or "baseline"
    _derived_cache: dict[tuple, dict[str, int]] = field(default_factory=dict, compare=False, repr=False)

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
        """Size parameters plus `elem` (bytes of one element at `precision`) plus the `[derived]`
        expressions plus what reference.py's derive(names) returns (deterministic in the sizes)."""
        names = self._base_names(params, precision)
        derive = self._derive_hook()
        if derive is not None:
            key = (tuple(sorted(names.items())), precision)
            if key not in self._derived_cache:
                self._derived_cache[key] = self._call_derive(derive, names)
            names.update(self._derived_cache[key])
        return names

    def _base_names(self, params: dict[str, int], precision: str) -> dict[str, float]:
        names: dict[str, float] = dict(params)
        names["elem"] = ELEM_BYTES[precision]
        for key, expression in self.derived.items():
            names[key] = expr.evaluate_int(expression, names)
        return names

    def _derive_hook(self) -> Callable[[dict], dict] | None:
        if self.oracle == "baseline" or not _defines_derive(self.directory):
            return None  # the reference (numpy, scipy) is loaded when a check needs it, not to list or validate tasks
        module = self.reference_module
        return getattr(module, "derive", None) if module is not None else None

    def _call_derive(self, derive: Callable[[dict], dict], names: dict[str, float]) -> dict[str, int]:
        where = f"task {self.name}: reference.derive({ {k: v for k, v in names.items() if k != 'elem'} })"
        extra = derive(dict(names))
        if not isinstance(extra, Mapping):
            raise TaskError(f"{where} returned {type(extra).__name__}, expected a dict of names to integers")
        out: dict[str, int] = {}
        for k, v in extra.items():
            if not isinstance(k, str) or not k.isidentifier():
                raise TaskError(f"{where}: {k!r} is not a name")
            if k in names:
                raise TaskError(f"{where}: {k!r} is already a size parameter or derived name; derive() may only add names")
            if isinstance(v, bool) or not float(v).is_integer():
                raise TaskError(f"{where}: {k} = {v!r} is not an integer")
            out[k] = int(v)
        return out

    def lengths(self, params: dict[str, int], precision: str) -> dict[str, int]:
        names = self.names(params, precision)
        return {a.name: expr.evaluate_int(a.length, names) for a in self.args if not a.scalar}  # type: ignore[arg-type]

    def scalar_values(self, params: dict[str, int], precision: str) -> dict[str, float]:
        names = self.names(params, precision)
        return {a.name: expr.evaluate(a.value, names) for a in self.args if a.scalar}  # type: ignore[arg-type]

    def complexity_of(self, params: dict[str, int]) -> int:
        return int(expr.evaluate(self.complexity, self.names(params, "fp32")))

    def work(self, params: dict[str, int], precision: str) -> tuple[float, float]:
        """(FLOPs, bytes) of one call: the minimum any implementation must do."""
        names = self.names(params, precision)
        return float(expr.evaluate(self.flops, names)), float(expr.evaluate(self.bytes, names))

    def roofline_floor_us(self, params: dict[str, int], precision: str, settings: HarnessSettings) -> float:
        """The least time one call can take on the settings' GPU (us): its FLOPs at peak, or its bytes at peak bandwidth."""
        flops, nbytes = self.work(params, precision)
        peak = settings.peak_flops_bf16 if precision == "bf16" else settings.peak_flops_fp32
        return max(flops / peak, nbytes / settings.peak_bytes_per_s) * 1e6

    # -- code ----------------------------------------------------------------------------------
    def after_evaluation(self, result: Any, run: Any) -> Any:
        """A kind of task's own measurements once the harness has evaluated a candidate (`run`: the evaluation's
        request: source text, sizes, settings, flags, timing). Tasks of task.toml add none; PyTorch references time
        their eager and torch.compile baselines (bench_tasks/pytorch/timing.py)."""
        return result

    @property
    def reference_module(self) -> ModuleType | None:
        return None if self.oracle == "baseline" else _load_reference(self.directory)


@cache
def _defines_derive(directory: Path) -> bool:
    """Whether the task's reference.py defines `derive` at its top level (read, not run)."""
    path = directory / "reference.py"
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError):
        return True  # loading it says what is wrong
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "derive":
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "derive" for t in targets):
            return True
        if isinstance(node, ast.ImportFrom | ast.Import) and any((a.asname or a.name) == "derive" for a in node.names):
            return True
    return False


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


def _table_or_str(value: Any, what: str) -> PerPrecision:
    """A value that is one string or a table keyed by precision."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in PRECISIONS:
                raise TaskError(f"{what}: unknown precision {k!r} in the table; use {', '.join(PRECISIONS)}")
            if not isinstance(v, str):
                raise TaskError(f"{what}.{k} must be a string, got {v!r}")
        return dict(value)
    raise TaskError(f"{what} must be a string or a table keyed by precision, got {value!r}")


def _parse_arg(arg_name: str, a: Any, where: str) -> Arg:
    what = f"{where}: args.{arg_name}"
    if not isinstance(a, dict):
        raise TaskError(f'{what} must be a table like {{ role = "input", length = "N" }}, got {a!r}')
    _unknown_keys(a, ARG_KEYS, what)
    role = _table_or_str(_require(a, "role", what), f"{what}.role")
    memory = _table_or_str(a.get("memory", "device"), f"{what}.memory")
    param = None if a.get("param") is None else _table_or_str(a["param"], f"{what}.param")
    for key in ("length", "value", "draw", "refresh"):
        if (key in a and not isinstance(a[key], (str, int, float))) or isinstance(a.get(key), bool):
            raise TaskError(f"{what}.{key} must be a string or a number, got {a[key]!r}")
    value = a.get("value")
    length = a.get("length")
    return Arg(
        arg_name,
        role,
        None if length is None else str(length),
        None if value is None else str(value),
        a.get("draw"),
        memory,
        a.get("refresh"),
        param,
    )


def _parse_tolerance_entry(t: Any, what: str) -> ToleranceSpec:
    if not isinstance(t, dict):
        raise TaskError(f"{what} must be a table like {{ atol = 1e-5, rtol = 1e-4 }}, got {t!r}")
    _unknown_keys(t, TOLERANCE_KEYS, what)
    values = []
    for key in ("atol", "rtol"):
        v = _require(t, key, what)
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise TaskError(f"{what}.{key} must be a number or an expression string, got {v!r}")
        values.append(float(v) if isinstance(v, (int, float)) else v)
    scale = t.get("scale")
    if scale is not None and scale not in SCALES:
        raise TaskError(f"{what}.scale {scale!r} is not one of {', '.join(SCALES)}")
    return ToleranceSpec(values[0], values[1], scale)


def _parse_tolerance(table: Any, where: str) -> tuple[dict[str, ToleranceSpec], dict[str, dict[str, ToleranceSpec]]]:
    what = f"{where}: [tolerance]"
    if not isinstance(table, dict):
        raise TaskError(f"{what} must be a table keyed by precision")
    _unknown_keys(table, (*PRECISIONS, "outputs"), what)
    base = {p: _parse_tolerance_entry(t, f"{what} {p}") for p, t in table.items() if p in PRECISIONS}
    outputs: dict[str, dict[str, ToleranceSpec]] = {}
    for out, per in table.get("outputs", {}).items():
        w = f"{where}: [tolerance.outputs.{out}]"
        if not isinstance(per, dict):
            raise TaskError(f"{w} must be a table keyed by precision")
        _unknown_keys(per, PRECISIONS, w)
        outputs[out] = {p: _parse_tolerance_entry(t, f"{w} {p}") for p, t in per.items()}
    return base, outputs


def load_task_file(path: Path, *, check: bool = True) -> Task:
    """The task of a task.toml; `check` False skips `validate` (the sizes' expressions), for listing only."""
    where = str(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{where}: not valid TOML: {exc}") from None
    _unknown_keys(data, TASK_KEYS, where)
    name = _require(data, "name", where)
    protos = {p: parse(t) for p, t in _require(data, "prototype", where).items()}
    for p in protos:
        if p not in PRECISIONS:
            raise TaskError(f"{where}: unknown precision {p!r}")
    args = [_parse_arg(arg_name, a, where) for arg_name, a in _require(data, "args", where).items()]
    sizes_table = _require(data, "sizes", where)
    _unknown_keys(sizes_table, ("paper", "large", "edge"), f"{where}: [sizes]")
    sizes = {k: tuple(dict(s) for s in v) for k, v in sizes_table.items()}
    cost = _require(data, "cost", where)
    _unknown_keys(cost, COST_KEYS, f"{where}: [cost]")
    tolerance, tolerance_outputs = _parse_tolerance(_require(data, "tolerance", where), where)
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
        tolerance=tolerance,
        notes=dict(data.get("notes", {})),
        tolerance_outputs=tolerance_outputs,
    )
    if check:
        validate(task)
    return task


def _validate_arg(task: Task, a: Arg, where: str) -> None:
    what = f"{where}: args.{a.name}"
    _validate_per_precision(task, a, what)
    if a.scalar and a.roles() != {"scalar"}:
        raise TaskError(f"{what}: a scalar is a scalar in every precision (roles {sorted(a.roles())})")
    if a.scalar:
        _validate_scalar(a, what)
    else:
        _validate_buffer(a, what)


def _validate_per_precision(task: Task, a: Arg, what: str) -> None:
    """An argument's role and memory: one allowed value, or one for each of the task's precisions."""
    for field_name, allowed in (("role", ROLES), ("memory", MEMORIES)):
        value = getattr(a, field_name)
        table = {p: value for p in task.prototypes} if isinstance(value, str) else value
        missing = [p for p in task.prototypes if p not in table]
        if missing:
            raise TaskError(f"{what}.{field_name} has no entry for precision {', '.join(missing)}")
        for precision, v in table.items():
            if v not in allowed:
                raise TaskError(f"{what}.{field_name} {v!r} ({precision}) is not one of {', '.join(allowed)}")


def _validate_scalar(a: Arg, what: str) -> None:
    for key in ("length", "draw", "refresh"):
        if getattr(a, key) is not None:
            raise TaskError(f"{what}: a scalar has a `value`, not a `{key}`")
    if a.value is None:
        raise TaskError(f"{what}: a scalar needs a `value` expression")
    if a.memory != "device":
        raise TaskError(f"{what}: a scalar is passed by value; `memory` applies to buffers only")


def _validate_buffer(a: Arg, what: str) -> None:
    if a.length is None:
        raise TaskError(f"{what}: a buffer needs a `length` expression")
    if a.value is not None:
        raise TaskError(f"{what}: a buffer has a `length`, not a `value`")
    reads = a.roles() & set(INPUT_ROLES)
    if (a.draw is not None or a.refresh is not None) and not reads:
        raise TaskError(f"{what}: `draw` and `refresh` apply to inputs (roles input, inout), not to role {a.role!r}")
    if a.draw is not None:
        try:
            parse_draw(a.draw)
        except TaskError as exc:
            raise TaskError(f"{what}.draw: {exc}") from None
    if a.refresh is not None and a.refresh not in (KEEP, SHUFFLE):
        try:
            parse_draw(a.refresh)
        except TaskError as exc:
            raise TaskError(f'{what}.refresh: must be "keep", "shuffle" or a draw spec: {exc}') from None


def validate(task: Task) -> None:
    """Cross-check the TOML against the prototypes; raise TaskError naming the first problem."""
    where = f"task {task.name}"
    for set_name in ("paper",) if task.custom else ("paper", "large"):
        if not task.sizes.get(set_name):
            raise TaskError(f"{where}: size set {set_name!r} is empty")
    for a in task.args:
        _validate_arg(task, a, where)
    for precision, proto in task.prototypes.items():
        _validate_prototype(task, precision, proto, where)
    from .refresh import refresh_draw  # here: refresh imports this module

    for variant in task.variants():  # redraws between timed calls fit each argument's type
        for a in task.args:
            refresh_draw(variant, a.name)
    _validate_tolerance_outputs(task, where)
    derive = task._derive_hook()
    for set_name, sizes in task.sizes.items():
        for params in sizes:
            try:
                _validate_size(task, params, derive)
            except (expr.ExpressionError, TaskError) as exc:
                raise TaskError(f"{where}: size {set_name} {params}: {exc}") from None


def _validate_prototype(task: Task, precision: str, proto: Prototype, where: str) -> None:
    """One precision's prototype against the args: its entry's name, its parameters, their roles and constness."""
    expected = task.name if precision == "fp32" else f"{task.name}_bf16"
    if not task.custom and proto.name != expected:
        raise TaskError(f"{where}: {precision} entry is {proto.name!r}, expected {expected!r}")
    names = [p.name for p in proto.params]
    as_params = sorted(a.param_name(precision) for a in task.args)
    if sorted(names) != as_params:
        raise TaskError(
            f"{where}: {precision} prototype parameters {names} differ from args {as_params} "
            '(an argument named differently in one prototype says so with param = { <precision> = "<name>" })'
        )
    variant = task.variant(precision)
    for p in proto.params:
        a = variant.arg_of(p)
        role = a.role_for(precision)
        if p.pointer != (role != "scalar"):
            raise TaskError(f"{where}: {p.name} is {'a pointer' if p.pointer else 'a scalar'} but has role {role} ({precision})")
        if role == "input" and p.pointer and not p.const and not task.custom and task.notes.get("nonconst_inputs") is None:
            raise TaskError(f"{where}: input {p.name} is not const in {precision}; explain in notes.nonconst_inputs")
    if precision not in task.tolerance:
        raise TaskError(f"{where}: [tolerance] has no entry for {precision}")
    if not task.variant(precision).outputs():
        raise TaskError(f"{where}: no output argument in {precision} (roles output, accumulate or inout)")


def _validate_tolerance_outputs(task: Task, where: str) -> None:
    by_name = {a.name: a for a in task.args}
    for out, per in task.tolerance_outputs.items():
        if out not in by_name or not any(by_name[out].is_output(p) for p in task.prototypes):
            raise TaskError(
                f"{where}: [tolerance.outputs.{out}] names no output argument (outputs: "
                f"{', '.join(sorted({o for p in task.prototypes for o in task.variant(p).outputs()}))})"
            )
        for precision in per:
            if precision not in task.prototypes:
                raise TaskError(f"{where}: [tolerance.outputs.{out}] has {precision!r}, which the task does not have")


def _validate_size(task: Task, params: dict[str, int], derive: Callable[[dict], dict] | None) -> None:
    """One size in every precision: its derived names, lengths and scalars, work and tolerances evaluate."""
    for precision in task.prototypes:
        names = task.names(params, precision)
        if derive is not None:  # deterministic in the sizes: a second call gives the same names
            base = task._base_names(params, precision)
            if task._call_derive(derive, base) != {k: v for k, v in names.items() if k not in base}:
                raise TaskError("reference.derive() gave other names on a second call: it must depend on the sizes only")
        variant = task.variant(precision)
        _check_values(task, variant, params)
        task.work(params, precision)
        for out in variant.outputs():
            variant.tolerance_for(out, names)
    task.complexity_of(params)


def _check_values(task: Task, variant: Variant, params: dict[str, int]) -> None:
    """Every buffer length within 1..expr.MAX_LENGTH, every scalar within its C type's range (issue 30)."""
    for name, length in task.lengths(params, variant.precision).items():
        if not 1 <= length <= expr.MAX_LENGTH:
            raise TaskError(f"args.{name}: length {length} must be between 1 and 2^31")
    for name, value in task.scalar_values(params, variant.precision).items():
        expr.check_ctype(value, variant.param(name).ctype, f"args.{name}: value {task.arg(name).value!r}")


_REGISTERED: dict[str, Task] = {}


def register_task(task: Task) -> None:
    """Make a task built in code (a custom task, or one rebuilt from a work item) loadable by name in this process."""
    if _REGISTERED.get(task.name) is task:
        return
    validate(task)
    _REGISTERED[task.name] = task


def registered_task(name: str) -> Task | None:
    """The task registered under `name` in this process (`register_task`), or None."""
    return _REGISTERED.get(name)


def load_task(name: str) -> Task:
    if name in _REGISTERED:
        return _REGISTERED[name]
    return _load_builtin(name)


def custom_task(
    name: str,
    precision: str,
    prototype: str,
    args: dict[str, dict[str, Any]],
    sizes: list[dict[str, int]],
    baseline_source: str,
    *,
    complexity: str | None = None,
    tolerance: tuple[float, float] | None = None,
    summary: str = "",
) -> Task:
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
        # Only the fields that apply to the role are kept (the API's model carries all of them).
        draw = (a.get("draw") or "uniform(-1, 1)") if role in INPUT_ROLES else None
        scalar = role == "scalar"
        length = None if scalar or a.get("length") is None else str(a["length"])
        value = None if not scalar or a.get("value") is None else str(a["value"])
        arg_list.append(Arg(arg_name, role, length, value, draw))
    outputs = [a for a in arg_list if a.is_output(precision)]
    if not outputs:
        raise TaskError("a custom task needs at least one output argument (role output, accumulate or inout)")
    buffers = [f"({a.length})*{proto.param(a.name).itemsize}" for a in arg_list if not a.scalar]
    atol, rtol = tolerance or ((1e-2, 1e-2) if precision == "bf16" else (1e-5, 1e-4))
    task = Task(
        name=name,
        category="custom",
        summary=summary or f"custom task {proto.name}",
        directory=Path("."),
        prototypes={precision: proto},
        args=tuple(arg_list),
        sizes={"paper": tuple(dict(s) for s in sizes)},
        derived={},
        complexity=complexity or " + ".join(f"({a.length})" for a in outputs),
        flops="0",
        bytes=" + ".join(buffers),
        tolerance={precision: ToleranceSpec(atol, rtol)},
        notes={"oracle": "the baseline's output on the same inputs"},
        baseline_text=baseline_source,
        oracle="baseline",
    )
    validate(task)
    return task


# A built-in task's name is the name of its folder under tasks/, nothing else: never a path.
TASK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def unknown_task(name: object) -> str:
    """What to say about a task name that is not a task: the closest names (RELU for relu), not all fifty. The CLI,
    the API and the campaigns say this one thing."""
    text, names = str(name)[:80], task_names()
    close = [n for n in names if n.lower() == text.lower()] or difflib.get_close_matches(text, names, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else "the tasks are listed by `cudamaster bench list` and GET /api/v1/tasks"
    return f"unknown task {text!r}: {hint}"


@cache
def _load_builtin(name: str) -> Task:
    known = task_names()
    if not isinstance(name, str) or TASK_NAME.fullmatch(name) is None or name not in known:
        raise TaskError(unknown_task(name))
    return load_task_file(TASKS_DIR / name / "task.toml")


def task_names() -> list[str]:
    return sorted(p.parent.name for p in TASKS_DIR.glob("*/task.toml"))


def all_tasks() -> list[Task]:
    return [load_task(n) for n in task_names()]


def listed_tasks() -> list[Task]:
    """The built-in tasks as their TOML declares them, unvalidated (fast: `cudamaster bench list`); running or
    checking one loads it with `load_task`, which validates it."""
    return [load_task_file(TASKS_DIR / n / "task.toml", check=False) for n in task_names()]
