"""PyTorch references (KernelBench's format) as harness tasks. docs/pytorch-tasks.md describes them.

A reference file is untrusted Python: it runs only in the sandbox (runner.py runs child.py there); this process
never imports it, and imports torch nowhere (the child does, in the sandbox). `load_reference` makes one file a
task; `import_directory` a suite of a folder's files, with the reason for each file it refuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bench_tasks.spec import DEFAULT_PRECISION, TaskError
from settings import HarnessSettings

from .runner import Limits, ReferenceRefused, read_reference
from .task import Probe, PyTorchTask, check_name, make_task, probe, shape_doc

__all__ = [
    "Imported",
    "Limits",
    "Probe",
    "PyTorchTask",
    "ReferenceRefused",
    "import_directory",
    "load_reference",
    "make_task",
    "probe",
    "reference_files",
    "shape_doc",
    "task_name",
]


def task_name(path: Path) -> str:
    """`19_ReLU.py` -> `pt_19_relu`: the task's (and the C entry's) name."""
    stem = re.sub(r"\W+", "_", path.stem).strip("_").lower() or "model"
    return f"pt_{stem}"[:64]


def load_reference(
    path: Path | None = None,
    *,
    source: str | None = None,
    name: str | None = None,
    sizes: list[dict[str, int]] | None = None,
    precision: str = DEFAULT_PRECISION,
    complexity: str | None = None,
    settings: HarnessSettings | None = None,
    limits: Limits | None = None,
) -> PyTorchTask:
    """The task of one reference (a file, or its `source`): probed in the sandbox at `sizes` (default: the file's own
    constants). Raises ReferenceRefused (the file cannot be a task) or TaskError (a bad name, precision or cost)."""
    if source is None:
        if path is None:
            raise TaskError("give a reference file or its source")
        source = read_reference(path)
    name = name or task_name(path or Path("model.py"))
    check_name(name, precision)  # before the (slow) sandboxed run
    probed = probe(source, list(sizes or []), settings, limits)
    return make_task(
        probed, name, precision, complexity=complexity, settings=settings, limits=limits, reference_name=(path.name if path else name)
    )


@dataclass
class Imported:
    """A folder of references as a suite: the tasks made, and each refused file with its reason."""

    tasks: list[PyTorchTask] = field(default_factory=list)
    refused: list[tuple[Path, str, str]] = field(default_factory=list)  # (file, kind, reason)


def reference_files(directory: Path) -> list[Path]:
    """A folder's reference files: every `*.py` but `__init__.py`, sorted; not recursive (`bench import`, `suite push`)."""
    if not directory.is_dir():
        raise TaskError(f"{directory} is not a directory: give a folder of reference files (e.g. a KernelBench checkout's level1/)")
    return [p for p in sorted(directory.glob("*.py")) if p.name != "__init__.py"]


def import_directory(
    directory: Path, *, precision: str = DEFAULT_PRECISION, settings: HarnessSettings | None = None, limits: Limits | None = None
) -> Imported:
    """Every `*.py` file of `directory` (sorted; not recursive) as a task at its own constants. Files stay where
    they are: nothing is copied."""
    out = Imported()
    names: set[str] = set()
    for path in reference_files(directory):
        name = task_name(path)
        if name in names:
            out.refused.append((path, "name", f"its task name {name} is another file's too: rename one"))
            continue
        try:
            out.tasks.append(load_reference(path, name=name, precision=precision, settings=settings, limits=limits))
            names.add(name)
        except (ReferenceRefused, TaskError) as exc:
            out.refused.append((path, getattr(exc, "kind", "task"), str(exc)))
    return out
