"""The service's PyTorch references (a job's `pytorch` field): the file is run only in the sandbox, never here.

The reference is probed at submit (bench_tasks.pytorch: shapes, dtypes, parameters, float64 references at every
size, randomness refused) within the service's time and memory limits; what cannot be made a task is a 422 with
the reason, and nothing is stored. The task made is registered with the harness under a fresh id (`pt_` + 16 hex
digits: its C entry is `pt_..._optimized`), like a custom task, in this process.
"""

from __future__ import annotations

import secrets

from bench_tasks.harness.sandbox import SandboxUnavailable
from bench_tasks.pytorch import Limits, PyTorchTask, ReferenceRefused, make_task, probe
from bench_tasks.spec import TaskError, register_task
from settings import ServiceSettings, get_harness_settings

from .schemas import PyTorchTaskIn
from .services.errors import Invalid, Unavailable

# What the refusal names in the body: a size problem is the sizes' fault, everything else the file's.
_FIELD = {"sizes": "sizes"}


def checked_task(body: PyTorchTaskIn, precision: str, settings: ServiceSettings) -> PyTorchTask:
    """The task of a submitted reference, registered; raises Invalid (a 422 naming the field and the reason) or
    Unavailable (no sandbox, no torch here)."""
    if len(body.sizes) > settings.max_custom_sizes:
        raise Invalid(("body", "pytorch", "sizes"), f"pytorch.sizes lists {len(body.sizes)} sizes; at most {settings.max_custom_sizes}")
    task_id = "pt_" + secrets.token_hex(8)
    limits = Limits(seconds=settings.pytorch_reference_seconds, memory_bytes=settings.pytorch_reference_memory_bytes)
    harness = get_harness_settings()
    try:
        probed = probe(body.reference_py, [dict(s) for s in body.sizes], harness, limits)
        task = make_task(probed, task_id, precision, settings=harness, limits=limits, reference_name=body.name)
    except ReferenceRefused as exc:
        if exc.kind == "torch":
            raise Unavailable(f"cannot run PyTorch references here: {exc}") from None
        field = _FIELD.get(exc.kind, "reference_py")
        raise Invalid(("body", "pytorch", field), f"pytorch reference refused ({exc.kind}): {exc}") from None
    except TaskError as exc:
        raise Invalid(("body", "pytorch"), f"pytorch reference: {exc}") from None
    except SandboxUnavailable as exc:
        raise Unavailable(f"cannot run the PyTorch reference in a sandbox here: {exc}") from None
    register_task(task)
    return task
