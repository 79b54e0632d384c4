"""Custom tasks (the team's own kernel): validate, store, and register them with the harness.

A custom task's correctness oracle is its baseline's output on the same seeded inputs; the harness
compiles its baseline with the same symbol checks as a candidate. At submit the baseline is compiled
and checked (in the sandbox, no GPU needed) and its driver linked: a baseline that does not build or
is rejected is refused with its compile log, before anything is stored or any LLM is asked.
Registered tasks are loadable by their id (`ct_…`) in this process; the service registers every
stored one at start-up.
"""

from __future__ import annotations

import logging
import re
import secrets
import warnings

import numpy as np
from sqlalchemy.orm import Session

from bench_tasks import data, expr
from bench_tasks.harness import compile as harness_compile
from bench_tasks.harness.driver import driver_source
from bench_tasks.prototype import Param, Prototype, PrototypeError, parse
from bench_tasks.spec import INPUT_ROLES, Task, TaskError, custom_task, register_task
from bench_tasks.spec import validate as validate_task
from settings import HarnessSettings

from .db.models import CustomTask
from .db.types import utcnow
from .schemas import CustomArg, CustomTaskIn

log = logging.getLogger(__name__)


class CustomTaskInvalid(ValueError):
    """What is wrong with a custom task; `log`: the build's log when its baseline does not build (else None)."""

    def __init__(self, message: str, log: str | None = None) -> None:
        super().__init__(message)
        self.log = log


def check_baseline_builds(task: Task, precision: str, settings: HarnessSettings) -> None:
    """Compile the baseline as the harness will (sandboxed nvcc, prototype and symbol checks) and link its
    driver; raise CustomTaskInvalid with the verdict, the first error and the log. Objects are cached by
    content, so the job's own evaluation reuses them. Raises SandboxUnavailable when nothing can be
    compiled safely here."""
    variant = task.variant(precision)
    try:
        obj = harness_compile.compile_baseline(variant, settings)
        harness_compile.build_driver(variant, driver_source(variant, False), obj, None, settings)
    except harness_compile.BaselineError as exc:
        outcome = exc.outcome
        raise CustomTaskInvalid(f"baseline_cu: {outcome.verdict.value}: {outcome.message}", outcome.log) from None  # type: ignore[union-attr]
    except harness_compile.LinkError as exc:
        raise CustomTaskInvalid(
            f"baseline_cu does not link with the harness's driver: {harness_compile._first_error(str(exc))}", str(exc)
        ) from None


DRAW_CHECK_COUNT = 64  # values drawn from each input's `draw` at submit


def check_draws(task: Task, precision: str) -> None:
    """Draw a few values from every input's `draw`, as an evaluation will, and convert them to the
    parameter's type: a draw that raises, or gives values the type cannot hold (inf, NaN, out of
    range), is refused here rather than failing the job at its first evaluation."""
    variant = task.variant(precision)
    rng = np.random.default_rng(0)
    for arg in task.args:
        if arg.role_for(precision) not in INPUT_ROLES or not arg.draw:
            continue
        dtype = variant.param(arg.name).dtype
        try:
            with warnings.catch_warnings(), np.errstate(all="raise", under="ignore"):
                warnings.simplefilter("error")
                values = data.draw(arg.draw, rng, DRAW_CHECK_COUNT, single=dtype in ("float32", "bfloat16"))
                stored = data.to_storage(values, dtype)
                back = data.to_float64(stored, dtype)
        except Exception as exc:  # noqa: BLE001 - any failure of the draw is the submitter's to fix
            raise CustomTaskInvalid(f"args.{arg.name}.draw {arg.draw!r} cannot be drawn: {exc}") from None
        if not np.all(np.isfinite(back)) or not np.allclose(back, np.asarray(values, dtype=np.float64), rtol=1e-2, atol=0):
            raise CustomTaskInvalid(
                f"args.{arg.name}.draw {arg.draw!r} gives values a {dtype} cannot hold "
                f"(e.g. {np.asarray(values).reshape(-1)[0]!r}); keep its parameters finite and within range"
            )


_ELEMENT_BYTES = {"float": 4, "__nv_bfloat16": 2}  # bytes per element of the float buffer types (`elem` in expressions)


def validate(task: CustomTaskIn, precision: str, *, max_sizes: int, max_elements_per_size: int) -> None:
    """Raise CustomTaskInvalid naming the first problem. `max_sizes` and `max_elements_per_size` (all buffers
    of one size together) are the service's bounds (CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES, CUDAMASTER_SERVICE__MAX_CUSTOM_ELEMENTS)."""
    if len(task.sizes) > max_sizes:
        raise CustomTaskInvalid(f"sizes: {len(task.sizes)} sizes; the limit is {max_sizes} (CUDAMASTER_SERVICE__MAX_CUSTOM_SIZES)")
    proto = _checked_prototype(task)
    float_types = {p.ctype for p in proto.params if p.pointer and p.ctype in _ELEMENT_BYTES}
    if precision == "bf16" and "__nv_bfloat16" not in float_types:
        raise CustomTaskInvalid("precision bf16 needs at least one __nv_bfloat16 buffer in the prototype")
    elem = _ELEMENT_BYTES.get(next(iter(float_types), "float"), 4)
    for i, size in enumerate(task.sizes):
        _check_size(task, proto, i, size, elem, max_elements_per_size)
    if not re.search(r"\b" + re.escape(proto.name) + r"\s*\(", task.baseline_cu):
        raise CustomTaskInvalid(f"baseline_cu does not define {proto.name}(...); it must implement the prototype")


def _checked_prototype(task: CustomTaskIn) -> Prototype:
    """The parsed prototype, once it names the task and each of its parameters is described once, by an arg of
    the matching kind: a buffer (with a `length`) for a pointer, a scalar (with a `value`) otherwise."""
    try:
        proto = parse(task.prototype)
    except PrototypeError as exc:
        raise CustomTaskInvalid(f"prototype: {exc}") from None
    if proto.name != task.name:
        raise CustomTaskInvalid(f"prototype function is {proto.name!r} but the task name is {task.name!r}; use the same name")
    names = [p.name for p in proto.params]
    if sorted(names) != sorted(task.args):
        raise CustomTaskInvalid(f"prototype parameters {names} differ from args {sorted(task.args)}; describe each parameter once")
    for p in proto.params:
        arg = task.args[p.name]
        if p.pointer != (arg.role != "scalar"):
            raise CustomTaskInvalid(f"{p.name} is {'a pointer' if p.pointer else 'a scalar'} but has role {arg.role!r}")
        if p.pointer and not arg.length:
            raise CustomTaskInvalid(f"buffer {p.name} needs a `length` expression")
        if not p.pointer and arg.value is None:
            raise CustomTaskInvalid(f"scalar {p.name} needs a `value` expression")
    return proto


def _check_size(task: CustomTaskIn, proto: Prototype, i: int, size: dict[str, int], elem: int, max_elements: int) -> None:
    """Size `i` (`sizes[i]`) names its parameters within bounds, and every arg's `length` or `value` evaluates
    at it (with `elem`, the bytes of the float type), its buffers holding at most `max_elements` together."""
    if not size:
        raise CustomTaskInvalid(f'sizes[{i}] is empty: give the size parameters, e.g. {{"N": 1024}}')
    for key, value in size.items():
        if not re.fullmatch(r"[A-Za-z_]\w{0,31}", key) or not 0 <= value <= expr.INT_MAX:
            raise CustomTaskInvalid(f"sizes[{i}]: {key}={str(value)[:40]} must be a name and an integer in 0..2^63-1")
    bound = dict(size) | {"elem": elem}
    elements = 0
    for p in proto.params:
        elements += _checked_value(task.args[p.name], p, p.name, bound, f"sizes[{i}] {size}")
    if elements > max_elements:
        raise CustomTaskInvalid(
            f"sizes[{i}] {size}: its buffers hold {elements} elements together; the limit is "
            f"{max_elements} per size (CUDAMASTER_SERVICE__MAX_CUSTOM_ELEMENTS)"
        )


def _checked_value(arg: CustomArg, param: Param, arg_name: str, names: dict[str, int], where: str) -> int:
    """Evaluate a buffer's `length` (checked 1..2^31) or a scalar's `value` (checked against its C type) with the
    bounded evaluator (bench_tasks/expr.py); returns the buffer's element count (0 for a scalar)."""
    scalar = arg.role == "scalar"
    expression = arg.value if scalar else arg.length
    try:
        if not scalar:
            return expr.evaluate_length(expression, names)  # type: ignore[arg-type]
        expr.check_ctype(expr.evaluate(expression, names), param.ctype, f"the value of {param.ctype} {arg_name}")  # type: ignore[arg-type]
        return 0
    except expr.ExpressionError as exc:
        raise CustomTaskInvalid(f"args.{arg_name}: {exc} (at {where})") from None


def store(
    session: Session, task: CustomTaskIn, precision: str, api_key_id: str | None, *, harness: HarnessSettings, commit: bool = True
) -> tuple[CustomTask, Task]:
    """Build the harness task and check that its baseline builds first (nothing invalid is kept, nothing
    registered), register it, then store the row (`commit=False`: in the caller's transaction,
    committed with the job)."""
    row = CustomTask(
        id="ct_" + secrets.token_hex(8),
        api_key_id=api_key_id,
        name=task.name,
        precision=precision,
        spec={"prototype": task.prototype, "args": {k: v.model_dump() for k, v in task.args.items()}, "sizes": task.sizes},
        baseline_source=task.baseline_cu,
        created_at=utcnow(),
    )
    try:
        built = to_task(row)
        validate_task(built)
    except TaskError as exc:
        raise CustomTaskInvalid(str(exc)) from None
    check_draws(built, precision)
    check_baseline_builds(built, precision, harness)
    register(row)
    session.add(row)
    if commit:
        session.commit()
    return row, built


def to_task(row: CustomTask) -> Task:
    spec = row.spec
    return custom_task(
        row.id,
        row.precision,
        spec["prototype"],
        spec["args"],
        spec["sizes"],
        row.baseline_source,
        summary=f"custom task {row.name} (the team's own kernel; oracle: its baseline's output)",
    )


def register(row: CustomTask) -> Task:
    """Register a stored custom task with the harness; raises CustomTaskInvalid if it cannot be built."""
    try:
        task = to_task(row)
        register_task(task)
    except (ValueError, KeyError, TypeError) as exc:  # TaskError, PrototypeError, ExpressionError; a row of another shape
        raise CustomTaskInvalid(str(exc) or type(exc).__name__) from None
    return task


def register_all(session: Session) -> int:
    """Register every stored custom task (at start-up, before jobs resume); returns how many. One that fails
    today's checks (stored before a check existed, e.g. a value its C type cannot hold) is reported in the log
    and skipped: its jobs fail with the reason when they resume. Each check is bounded (bench_tasks/expr.py),
    so this never delays /health."""
    count = 0
    for row in session.query(CustomTask).all():
        try:
            register(row)
            count += 1
        except CustomTaskInvalid as exc:
            log.warning("stored custom task %s (%s) skipped: it fails the checks: %s", row.id, row.name, exc)
    return count
