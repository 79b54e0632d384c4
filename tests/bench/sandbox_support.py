"""Helpers for the sandbox tests: the attack corpus, scratch roots the sandbox user can reach, and running
the real driver without a GPU (its constructors run before main, so host-code attacks happen anyway)."""

from __future__ import annotations

import ctypes
import importlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench_tasks.harness import EvaluationResult, evaluate
from bench_tasks.harness import sandbox as sb
from settings import HarnessSettings

EVALUATE_MODULE = importlib.import_module("bench_tasks.harness.evaluate")  # the package exports the function under this name
ATTACKS = Path(__file__).parent / "candidates" / "attacks"
REPO = Path(__file__).resolve().parents[2]
SMALL = [{"N": 1024}]


def attack_source(name: str, **subs: object) -> str:
    """kit.h + the attack, with its @PLACEHOLDERS@ filled in."""
    text = (ATTACKS / "kit.h").read_text() + "\n" + (ATTACKS / name).read_text()
    for key, value in subs.items():
        text = text.replace(f"@{key}@", str(value))
    left = [m for m in re.findall(r"@[A-Z_]+@", text) if m != "@NAME@"]
    assert not left, f"{name}: placeholders not filled: {left}"
    return text


def libc_offset(frm: str, to: str) -> int:
    """Address of libc's `to` minus that of `frm` in this machine's libc (the sandbox binds the same file)."""
    libc = ctypes.CDLL("libc.so.6")

    def addr(name: str) -> int:
        return ctypes.cast(getattr(libc, name), ctypes.c_void_p).value or 0

    return addr(to) - addr(frm)


@contextmanager
def scratch_root() -> Iterator[Path]:
    """A scratch root under the system temp dir that the sandbox's uid can traverse (pytest's tmp_path cannot be)."""
    root = Path(tempfile.mkdtemp(prefix="cm-sandbox-test-"))
    os.chmod(root, 0o711)
    try:
        yield root
    finally:
        sb.remove_scratch(root)


def settings_with(base: HarnessSettings, root: Path, **update: object) -> HarnessSettings:
    return base.model_copy(
        update={
            "scratch_root": root,
            "run_timeout_s": 30.0,
            "sandbox_scratch_bytes": 64 << 20,
            "sandbox_max_file_bytes": 32 << 20,
            **update,
        }
    )


def evaluate_without_gpu(source: str, settings: HarnessSettings, monkeypatch) -> tuple[EvaluationResult, Path]:
    """FAKE GPU CHECK: evaluate() with its GPU check switched off, so the real driver runs in the real sandbox
    here; its constructors (the attacks) run at load, then CUDA initialisation fails. Returns the result and
    the evaluation's kept scratch directory."""
    monkeypatch.setattr(EVALUATE_MODULE, "require_gpu", lambda settings: None)
    result = evaluate("vector_add", "fp32", source, SMALL, settings=settings, keep_workdir=True, timing=False)
    return result, only_workdir(settings)


def evaluate_with_gpu(source: str, settings: HarnessSettings) -> tuple[EvaluationResult, Path]:
    result = evaluate("vector_add", "fp32", source, SMALL, settings=settings, keep_workdir=True, timing=False)
    return result, only_workdir(settings)


def only_workdir(settings: HarnessSettings) -> Path:
    assert settings.scratch_root is not None
    dirs = sorted(settings.scratch_root.glob("cm-eval-*"))
    assert len(dirs) == 1, dirs
    return dirs[0]


def attack_lines(text: str) -> dict[str, int]:
    """The kit's `ATTACK <what> rc=<n>` report lines."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^ATTACK (\S+) rc=(-?\d+)$", text, re.M)}


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line mentions `text` (e.g. a scratch directory): none may outlive their sandbox."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return [p for p in found if p != os.getpid()]


def bwrap_works(settings: HarnessSettings) -> tuple[bool, str]:
    why = sb.describe(settings)
    return why.startswith("bwrap"), why


def have_nvcc() -> bool:
    return shutil.which(os.environ.get("CUDAMASTER_HARNESS__NVCC", "nvcc")) is not None
