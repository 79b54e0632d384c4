"""Work items: everything one compile, evaluation or profile needs, so that any worker can run it.

A `WorkItem` carries the task's DEFINITION (a built-in task's task.toml, reference.py and
baseline.cu; a custom task's prototype, arguments, sizes and baseline), the candidate source, flags,
sizes, the harness settings that shape the measurement, and the kind of work. A worker rebuilds the
Task from the item (`TaskDefinition.build`): it never looks a name up in a process-local registry, so
a custom task runs on a worker that never saw it, and a worker with an older checkout measures the
task as the submitter defined it.

Compile once: a compile's object (the whole compile-cache entry, `CompiledObject`) travels with the
evaluation of the same source, and the evaluating worker installs it in its own cache before the
harness looks there, so nvcc does not run a second time on another host.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from settings import HarnessSettings

from .harness.result import SANITIZER_TOOLS
from .spec import Task, custom_task, load_task_file

WorkKind = Literal["compile", "evaluate", "profile", "sanitize"]

# Harness settings that belong to the machine a worker runs on, never to the work: where its caches
# and tools are, which GPU it owns, how its sandbox is set up. Every other harness setting shapes the
# measurement (flags, arch, seeds, timing, tolerances of the checks, roofline) and travels with the item.
MACHINE_LOCAL = frozenset(
    {
        "nvcc",
        "compute_sanitizer",
        "cache_dir",
        "gpu",
        "vendor_paths",
        "sandbox",
        "sandbox_bwrap",
        "allow_unsandboxed",
        "sandbox_uid",
        "sandbox_max_processes",
        "sandbox_max_open_files",
        "sandbox_max_file_bytes",
        "sandbox_max_cpu_s",
        "sandbox_scratch_bytes",
        "sandbox_max_files",
        "sandbox_tmp_bytes",
        "sandbox_ro_paths",
        "scratch_root",
        "data_workers",
        "data_cache_bytes",
    }
)


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


class BuiltinDefinition(BaseModel):
    """A task defined by files (an MSKernelBench task): their full text."""

    kind: Literal["files"] = "files"
    name: str
    task_toml: str
    reference_py: str
    baseline_cu: str

    @property
    def digest(self) -> str:
        return _digest(self.kind, self.name, self.task_toml, self.reference_py, self.baseline_cu)

    def build(self, root: Path) -> Task:
        """Write the files under `root/<digest>/<name>/` (once) and load the task from there."""
        directory = Path(root) / self.digest / self.name
        if not (directory / "ready").exists():
            tmp = directory.with_name(f".{self.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.mkdir(parents=True, exist_ok=True)
            for filename, text in (("task.toml", self.task_toml), ("reference.py", self.reference_py), ("baseline.cu", self.baseline_cu)):
                (tmp / filename).write_text(text)
            (tmp / "ready").write_text("")
            with contextlib.suppress(OSError):  # another worker thread or process wrote the same definition first
                os.replace(tmp, directory)
        return load_task_file(directory / "task.toml")


class CustomDefinition(BaseModel):
    """A team's own kernel (app/custom_tasks.py): one precision, its baseline's output as the oracle."""

    kind: Literal["custom"] = "custom"
    name: str
    precision: str
    prototype: str
    args: dict[str, dict[str, Any]]
    sizes: list[dict[str, int]]
    baseline_cu: str
    summary: str = ""

    @property
    def digest(self) -> str:
        return _digest(self.kind, self.model_dump_json())

    def build(self, root: Path) -> Task:
        return custom_task(self.name, self.precision, self.prototype, self.args, self.sizes, self.baseline_cu, summary=self.summary)


class PyTorchDefinition(BaseModel):
    """A PyTorch reference (bench_tasks/pytorch): its text and what its sandboxed probe reported, without the
    reference arrays (record.py); the worker rebuilds the task from the report, never by probing the file again."""

    kind: Literal["pytorch"] = "pytorch"
    name: str
    precision: str
    reference_py: str
    probe: dict[str, Any]
    complexity: str
    reference_name: str = ""
    limits: dict[str, float] = Field(default_factory=dict)

    @property
    def digest(self) -> str:
        return _digest(self.kind, self.model_dump_json())

    def build(self, root: Path) -> Task:
        from .pytorch import Limits, make_task
        from .pytorch.record import probe_from

        defaults = Limits()
        limits = Limits(**{k: type(getattr(defaults, k))(v) for k, v in self.limits.items() if hasattr(defaults, k)})
        probed = probe_from(self.reference_py, self.probe)
        return make_task(probed, self.name, self.precision, complexity=self.complexity, limits=limits, reference_name=self.reference_name)


AnyDefinition = BuiltinDefinition | CustomDefinition | PyTorchDefinition
TaskDefinition = Annotated[AnyDefinition, Field(discriminator="kind")]


def _pytorch_definition(task: Task) -> PyTorchDefinition | None:
    from .pytorch import PyTorchTask
    from .pytorch.record import probe_meta

    if not isinstance(task, PyTorchTask) or task.probe is None:
        return None
    ((precision, _),) = task.prototypes.items()
    limits = {k: float(v) for k, v in vars(task.limits).items()}
    return PyTorchDefinition(
        name=task.name,
        precision=precision,
        reference_py=task.probe.source,
        probe=probe_meta(task.probe),
        complexity=task.complexity,
        reference_name=task.reference_name,
        limits=limits,
    )


def definition_of(task: Task) -> AnyDefinition:
    """The definition a worker rebuilds `task` from (read here, where the task is known)."""
    if (torch_definition := _pytorch_definition(task)) is not None:
        return torch_definition
    if task.custom:
        ((precision, proto),) = task.prototypes.items()
        args = {a.name: {"role": a.role, "length": a.length, "value": a.value, "draw": a.draw} for a in task.args}
        return CustomDefinition(
            name=task.name,
            precision=precision,
            prototype=proto.text,
            args=args,
            sizes=[dict(s) for s in task.sizes["paper"]],
            baseline_cu=task.baseline_source(),
            summary=task.summary,
        )
    return BuiltinDefinition(
        name=task.name,
        task_toml=(task.directory / "task.toml").read_text(),
        reference_py=(task.directory / "reference.py").read_text(),
        baseline_cu=task.baseline_source(),
    )


_BUILT: dict[str, Task] = {}
_BUILT_LOCK = threading.Lock()


def build_task(definition: AnyDefinition, root: Path) -> Task:
    """The Task of `definition` (built once per process and definition digest: a changed definition is a new task)."""
    with _BUILT_LOCK:
        task = _BUILT.get(definition.digest)
        if task is None:
            task = _BUILT[definition.digest] = definition.build(Path(root) / "task-definitions")
        return task


class CompiledObject(BaseModel):
    """One entry of the compile cache (cache_dir/objects/KEY): the object, its symbol listing, the
    localised object and the compile log, as the compiling worker left them."""

    key: str
    files: dict[str, bytes]

    @classmethod
    def read(cls, cache_dir: Path, key: str) -> CompiledObject | None:
        directory = Path(cache_dir) / "objects" / key
        if not key or not (directory / "ok").exists():
            return None
        files = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file() and not p.name.startswith(".")}
        return cls(key=key, files=files)

    def install(self, cache_dir: Path) -> bool:
        """Put the entry in this machine's cache unless it is there; returns whether it was written.

        Written aside and renamed into place, `ok` last, so a reader never sees half an entry. An
        entry made by another nvcc or sandbox has another key and is simply never looked up here."""
        if not self.key or "/" in self.key or self.key.startswith(".") or "ok" not in self.files:
            raise ValueError(f"not a compile cache entry: {self.key!r}")
        directory = Path(cache_dir) / "objects" / self.key
        if (directory / "ok").exists():
            return False
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in sorted(self.files.items(), key=lambda kv: kv[0] == "ok"):
            if "/" in name or name.startswith("."):
                raise ValueError(f"bad file name in a compile cache entry: {name!r}")
            tmp = directory / f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_bytes(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, directory / name)
        return True


class WorkItem(BaseModel):
    """One compile, evaluation or profile, complete: no lookup on the worker."""

    kind: WorkKind
    job_id: str = Field("", description="the job the work is for (the fair queue's key); '' for work of no job")
    task: TaskDefinition
    precision: str
    source: str | None = Field(None, description="the candidate; None: the baseline alone")
    flags: list[str] = []
    sizes: str = "paper"
    implementation: Literal["candidate", "vendor"] = "candidate"
    profile_mode: str = "filtered"
    rows: list[dict[str, Any]] | None = Field(None, description="profile: the evaluation's rows (roofline position)")
    harness: dict[str, Any] = Field(default_factory=dict, description="the measurement's harness settings (not the machine-local ones)")
    compiled: CompiledObject | None = Field(None, description="the compile node's object for this source and flags")
    gpu_model: str | None = Field(None, description="run only on a GPU of this model (the job's first measurement's)")
    tools: tuple[str, ...] = Field(SANITIZER_TOOLS, description="sanitize: the compute-sanitizer tools to run")

    @property
    def task_name(self) -> str:
        return self.task.name

    def settings_on(self, local: HarnessSettings) -> HarnessSettings:
        """This machine's settings with the item's measurement settings over them."""
        return local.model_copy(update={k: v for k, v in self.harness.items() if k not in MACHINE_LOCAL})

    def summary(self) -> str:
        what = "baseline" if self.source is None else hashlib.sha256(self.source.encode()).hexdigest()[:10]
        return f"{self.kind} {self.task.name}/{self.precision} {what}"


def measurement_settings(settings: HarnessSettings) -> dict[str, Any]:
    """The harness settings an item carries (JSON-able)."""
    return json.loads(settings.model_dump_json(exclude=set(MACHINE_LOCAL)))


def work_item(kind: WorkKind, task: Task, precision: str, source: str | None, *, settings: HarnessSettings, **fields: Any) -> WorkItem:
    return WorkItem(
        kind=kind, task=definition_of(task), precision=precision, source=source, harness=measurement_settings(settings), **fields
    )
