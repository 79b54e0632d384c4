"""Run a PyTorch reference file in the sandbox (bench_tasks/harness/sandbox.py): never in this process.

The child (child.py, staged next to the file in a fresh scratch directory) runs under the harness's bubblewrap
sandbox: no network, a cleared environment, only the Python installation and torch's site directory visible
read-only, a wall-clock limit and the sandbox's address-space limit. What it reports comes back as JSON and
.npy files; anything it fails with becomes a ReferenceRefused with the reason.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench_tasks.harness import sandbox as sb
from settings import HarnessSettings

CHILD = Path(__file__).with_name("child.py")
MAX_FILE_BYTES = 1 << 20  # a reference file is a page of Python, not a data set


@dataclass(frozen=True)
class Limits:
    """A reference run's bounds: wall-clock seconds of the file's own code (counted from when the child has imported
    torch, so that a loaded machine's slow start is not charged to the file), address space (bytes; RLIMIT_AS), torch
    threads, and the seconds allowed for the interpreter and torch to start (the sandbox kills the run at
    seconds + startup_seconds even where the file blocks the child's own alarm)."""

    seconds: float = 120.0
    memory_bytes: int = 8 << 30
    threads: int = 1
    startup_seconds: float = 90.0


class ReferenceRefused(ValueError):
    """A reference file that cannot be made a task; `kind` is the class of reason (syntax, format, random, dtype,
    outputs, inputs, sizes, state, time, memory, error, torch)."""

    def __init__(self, kind: str, reason: str, output: str = "") -> None:
        super().__init__(reason)
        self.kind, self.output = kind, output  # output: what the reference printed (its last 4000 characters)


def torch_site() -> Path:
    """The directory that holds the `torch` package (found without importing it)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ReferenceRefused(
            "torch", "PyTorch is not installed here: install the optional extra (pip install -e '.[torch]') to use PyTorch references"
        )
    return Path(next(iter(spec.submodule_search_locations))).resolve().parent


def _reachable(path: Path) -> bool:
    """Whether the sandbox's uid can reach `path` when the service runs as root (it runs as another uid then)."""
    if os.geteuid() != 0:
        return True
    return all(p.stat().st_mode & 0o001 for p in path.parents if p != Path("/")) and bool(path.stat().st_mode & 0o005)


def _python() -> tuple[str, list[Path]]:
    """(the interpreter to run, the directories it needs to see: its installation, where not under /usr, and torch's
    site directory). This process's interpreter, or the system's of the same version where the sandbox's uid cannot
    reach it (an interpreter under /root)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    own = Path(os.path.realpath(sys.executable)), Path(os.path.realpath(sys.base_prefix))
    for exe, prefix in (own, (Path("/usr/bin") / version, Path("/usr")), (Path("/usr/local/bin") / version, Path("/usr/local"))):
        if exe.is_file() and _reachable(exe):
            site = torch_site()
            if not _reachable(site):
                raise ReferenceRefused(
                    "torch", f"torch is installed at {site}, which the sandbox's uid cannot read: install it where every user can"
                )
            return str(exe), [*([prefix] if prefix != Path("/usr") else []), site]
    raise ReferenceRefused(
        "torch", f"no {version} interpreter the sandbox's uid can reach (this one is {own[0]}; install {version} under /usr)"
    )


def read_reference(path: Path) -> str:
    """The file's text, once it is a readable UTF-8 file of at most MAX_FILE_BYTES."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ReferenceRefused("format", f"{path.name} is {size} bytes; a reference file is at most {MAX_FILE_BYTES} bytes")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReferenceRefused("format", f"cannot read {path.name}: {exc}") from None


def run_child(
    source: str,
    request: dict[str, Any],
    settings: HarnessSettings,
    limits: Limits,
    files: dict[str, np.ndarray] | None = None,
    *,
    gpu: bool = False,
    staged: dict[str, Path] | None = None,
) -> tuple[dict, dict[str, np.ndarray]]:
    """Run child.py on `source` with `request` (its "mode" and arguments); `files`: arrays staged as NAME.npy;
    `staged`: files copied beside the reference under the given names; `gpu`: the evaluation's GPU is bound (the
    address-space limit does not apply then: CUDA maps far more than it uses). Returns (the child's result, the
    arrays it saved, by the file names its result gives). Raises ReferenceRefused."""
    if len(source.encode()) > MAX_FILE_BYTES:
        raise ReferenceRefused("format", f"the reference is longer than {MAX_FILE_BYTES} bytes")
    exe, visible = _python()
    box = sb.sandbox_for(settings.model_copy(update={"sandbox_max_memory_bytes": limits.memory_bytes}))
    with sb.scratch(settings, "cm-torchref-") as tmp:
        os.chmod(tmp, 0o755)
        (tmp / "reference.py").write_text(source)
        shutil.copy(CHILD, tmp / "child.py")
        (tmp / "out").mkdir()
        os.chmod(tmp / "out", 0o777)
        for name, values in (files or {}).items():
            np.save(tmp / f"{name}.npy", values)
        for name, path in (staged or {}).items():
            shutil.copy(path, tmp / name)
            os.chmod(tmp / name, 0o755)
        full = _absolute(request, tmp) | {
            "site": [str(visible[-1])],
            "threads": limits.threads,
            "seconds": limits.seconds,
            "reference": str(tmp / "reference.py"),
            "out": str(tmp / "out"),
            "env": _torch_env(tmp) if gpu else {},
        }
        (tmp / "request.json").write_text(json.dumps(full))
        rc, out = box.run(
            [exe, "-I", "-S", str(tmp / "child.py"), str(tmp / "request.json")],
            scratch=tmp,
            timeout=limits.seconds + limits.startup_seconds,
            shared=visible,
            gpu=gpu,
            what="the reference",
        )
        return _outcome(tmp, rc, out, limits)


def _torch_env(tmp: Path) -> dict[str, str]:
    """torch.compile's caches in the scratch directory, its compile workers in-process, and where libcuda is. USER and
    LOGNAME: the sandbox's user has no passwd entry, and inductor asks getpass.getuser() (which reads them first) for its
    cache's name (on the H100 torch.compile failed with "getpwuid(): uid not found: 65534" without them)."""
    env = {
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor"),
        "TRITON_CACHE_DIR": str(tmp / "triton"),
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
        "HOME": str(tmp),
    }
    libcuda = next((d for d in sb.driver_library_dirs() if (d / "libcuda.so.1").exists()), None)
    if libcuda is not None:
        env["TRITON_LIBCUDA_PATH"] = str(libcuda)
    return env


def _absolute(request: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The request with its staged file names (`@NAME`) made paths inside the scratch directory."""

    def fix(v: Any) -> Any:
        if isinstance(v, str) and v.startswith("@"):
            return str(tmp / f"{v[1:]}.npy")
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return v

    return fix(request)


def _outcome(tmp: Path, rc: int | None, out: str, limits: Limits) -> tuple[dict, dict[str, np.ndarray]]:
    said = out[-4000:]
    if rc is None:
        raise ReferenceRefused("time", f"the reference ran longer than {limits.seconds:.0f} s and was stopped (time limit)", said)
    if "CMERR sandbox" in out:
        line = next(ln for ln in out.splitlines() if ln.startswith("CMERR sandbox"))
        kind = "memory" if "memory" in line else "time" if "CPU" in line else "error"
        raise ReferenceRefused(kind, line.removeprefix("CMERR sandbox ").strip(), said)
    result_file = tmp / "result.json"
    if rc != 0 or not result_file.is_file():
        tail = out.strip()[-600:]
        if rc is not None and rc < 0:
            raise ReferenceRefused("error", f"the reference was killed by signal {-rc}: {tail}")
        raise ReferenceRefused("error", f"the reference's run failed (exit {rc}): {tail}")
    result = json.loads(result_file.read_text())
    if not result.get("ok"):
        raise ReferenceRefused(str(result.get("kind", "error")), str(result.get("reason", "the reference failed")), said)
    arrays = {}
    for path in _saved(result):
        p = Path(path)
        if p.parent == tmp / "out" and p.is_file() and not p.is_symlink():
            arrays[p.name] = np.load(p, allow_pickle=False)
    return result, arrays


def _saved(result: Any) -> list[str]:
    """Every .npy path named in the child's result."""
    if isinstance(result, str):
        return [result] if result.endswith(".npy") else []
    if isinstance(result, list):
        return [p for v in result for p in _saved(v)]
    if isinstance(result, dict):
        return [p for v in result.values() for p in _saved(v)]
    return []
