"""The service's PyTorch references (a job's `pytorch` field): the file is run only in the sandbox, never here.

The reference is probed at submit (bench_tasks.pytorch: shapes, dtypes, parameters, float64 references at every
size, randomness refused) within the service's time and memory limits; what cannot be made a task is a 422 with
the reason, and nothing is stored. The task made gets a fresh id (`pt_` + 16 hex digits: its C entry is
`pt_..._optimized`) and is stored (the `pytorch_tasks` table: the file and what its sandboxed run reported,
bench_tasks/pytorch/record.py) in the job's transaction, and registered with the harness. Every process rebuilds
it from the row, never by running the reference: at start-up (`register_all`, before jobs resume) and where a job
names it (app/stored_tasks.py); a Ray worker rebuilds it from its work item (bench_tasks/work.py).
"""

from __future__ import annotations

import logging
import secrets

from sqlalchemy.orm import Session

from bench_tasks.harness.sandbox import SandboxUnavailable
from bench_tasks.pytorch import Limits, PyTorchTask, ReferenceRefused, make_task, probe
from bench_tasks.pytorch.record import probe_arrays, probe_from, probe_meta
from bench_tasks.spec import TaskError, register_task, registered_task
from settings import ServiceSettings, get_harness_settings, load_settings

from .db.models import StoredPyTorchTask
from .db.types import utcnow
from .schemas import PyTorchTaskIn
from .services.errors import Invalid, Unavailable

log = logging.getLogger(__name__)

# What the refusal names in the body: a size problem is the sizes' fault, everything else the file's.
_FIELD = {"sizes": "sizes"}


class StoredTaskInvalid(ValueError):
    """A stored task (PyTorch or custom, app/stored_tasks.py) that cannot be rebuilt here; the message says which and why."""


def limits_of(settings: ServiceSettings) -> Limits:
    return Limits(seconds=settings.pytorch_reference_seconds, memory_bytes=settings.pytorch_reference_memory_bytes)


def checked_task(body: PyTorchTaskIn, precision: str, settings: ServiceSettings) -> PyTorchTask:
    """The task of a submitted reference (probed in the sandbox; not stored, not registered); raises Invalid (a 422
    naming the field and the reason) or Unavailable (no sandbox, no torch here)."""
    if len(body.sizes) > settings.max_custom_sizes:
        raise Invalid(("body", "pytorch", "sizes"), f"pytorch.sizes lists {len(body.sizes)} sizes; at most {settings.max_custom_sizes}")
    task_id = "pt_" + secrets.token_hex(8)
    limits = limits_of(settings)
    harness = get_harness_settings()
    try:
        probed = probe(body.reference_py, [dict(s) for s in body.sizes], harness, limits)
        return make_task(probed, task_id, precision, settings=harness, limits=limits, reference_name=body.name)
    except ReferenceRefused as exc:
        if exc.kind == "torch":
            raise Unavailable(f"cannot run PyTorch references here: {exc}") from None
        field = _FIELD.get(exc.kind, "reference_py")
        raise Invalid(("body", "pytorch", field), f"pytorch reference refused ({exc.kind}): {exc}") from None
    except TaskError as exc:
        raise Invalid(("body", "pytorch"), f"pytorch reference: {exc}") from None
    except SandboxUnavailable as exc:
        raise Unavailable(f"cannot run the PyTorch reference in a sandbox here: {exc}") from None


def store(session: Session, body: PyTorchTaskIn, precision: str, api_key_id: str | None, settings: ServiceSettings) -> PyTorchTask:
    """Probe the reference (`checked_task`), then register the task and add its row to the session (committed with
    the job, or the suite, by the caller): a refused reference stores and registers nothing."""
    task = checked_task(body, precision, settings)
    assert task.probe is not None
    arrays = probe_arrays(task.probe)
    if len(arrays) > settings.max_pytorch_stored_bytes:
        raise Invalid(
            ("body", "pytorch", "sizes"),
            f"pytorch reference: its float64 references at these sizes take {len(arrays)} bytes compressed; the limit is "
            f"{settings.max_pytorch_stored_bytes} (CUDAMASTER_SERVICE__MAX_PYTORCH_STORED_BYTES): give smaller sizes",
        )
    row = StoredPyTorchTask(
        id=task.name,
        api_key_id=api_key_id,
        name=body.name,
        precision=precision,
        reference_py=body.reference_py,
        probe=probe_meta(task.probe),
        reference_arrays=arrays,
        created_at=utcnow(),
    )
    register_task(task)
    session.add(row)
    return task


def to_task(row: StoredPyTorchTask, settings: ServiceSettings | None = None, *, arrays: bool = False) -> PyTorchTask:
    """The task of a stored row, rebuilt from what the sandboxed run reported (the reference is not run). `arrays`:
    with the float64 reference arrays (read from the database only then: the harness's oracle does not use them)."""
    try:
        probed = probe_from(row.reference_py, row.probe, row.reference_arrays if arrays else None)
        limits = limits_of(settings or load_settings().service)
        return make_task(probed, row.id, row.precision, settings=get_harness_settings(), limits=limits, reference_name=row.name)
    except (ValueError, KeyError, TypeError) as exc:  # TaskError, a record of another shape
        raise StoredTaskInvalid(f"stored PyTorch task {row.id} cannot be rebuilt: {exc or type(exc).__name__}") from None


def register(row: StoredPyTorchTask, settings: ServiceSettings | None = None) -> PyTorchTask:
    """Register a stored PyTorch task with the harness (once per process: a registered one is kept)."""
    known = registered_task(row.id)
    if isinstance(known, PyTorchTask):
        return known
    task = to_task(row, settings)
    register_task(task)
    return task


def register_all(session: Session, settings: ServiceSettings | None = None) -> int:
    """Register every stored PyTorch task (at start-up, before jobs resume); returns how many. One that cannot be
    rebuilt is reported in the log and skipped: its jobs fail with the reason when they resume."""
    count = 0
    for row in session.query(StoredPyTorchTask).all():
        try:
            register(row, settings)
            count += 1
        except StoredTaskInvalid as exc:
            log.warning("%s (%s): skipped", exc, row.name)
    return count
