"""Inputs and float64 references that do not depend on the candidate, cached on disk.

The check datasets (seeds 1, 2, 3) of a size are drawn once per (task version, precision, size,
seed) and their float64 references (when computed in full, below the sampling thresholds) are stored
apart from them (in cache_dir, which no sandbox sees, while a driver sees its datasets): every later evaluation of any candidate reads them instead of drawing and computing again.
The task version is a hash of task.toml and reference.py, so editing a task invalidates its entries.
The fresh dataset (a new secret seed per evaluation), sampled references (a new secret sample each
time) and the timed-call checks (inputs redrawn under a secret key) are never cached.

Entries are directories written aside and renamed into place; `ready` marks a complete one (the
driver waits for it). The cache is bounded by `data_cache_bytes` (datasets and their references
together): the least recently used entries go first, never one used within the run time limit
(`run_timeout_s`, plus a minute: another evaluation may be reading it). Whatever the bound, nothing is
added while its file system has less than `data_cache_min_free_bytes` free: the evaluation then draws
into its own scratch directory, as for a custom task (a whole-suite run once filled the H200's disk).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

import numpy as np

from bench_tasks import data
from bench_tasks.spec import Variant
from settings import HarnessSettings

from . import lru


def task_version(variant: Variant) -> str | None:
    """A hash of what the data and references depend on; None for a custom task (nothing to cache by)."""
    task = variant.task
    if task.custom:
        return None
    h = hashlib.sha256()
    for name in ("task.toml", "reference.py"):
        path = task.directory / name
        h.update(path.read_bytes() if path.exists() else b"")
        h.update(b"\0")
    return h.hexdigest()[:20]


def _key(variant: Variant, params: dict[str, int], seed: int) -> str | None:
    version = task_version(variant)
    if version is None:
        return None
    text = json.dumps([variant.task.name, version, variant.precision, sorted(params.items()), seed])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


T = TypeVar("T")
_inflight: dict[str, Future] = {}
_inflight_lock = threading.Lock()


def single_flight(key: str, work: Callable[[], T]) -> T:
    """`work()`, run once at a time per `key` in this process: a thread asking for a key whose work is under
    way waits for that work's answer (or its exception) instead of doing it again (the pipeline's prefetch
    and an evaluation asking for the same dataset or reference)."""
    with _inflight_lock:
        running = _inflight.get(key)
        if running is None:
            mine: Future = Future()
            _inflight[key] = mine
    if running is not None:
        return running.result()
    try:
        value = work()
    except BaseException as exc:
        mine.set_exception(exc)
        raise
    else:
        mine.set_result(value)
        return value
    finally:
        with _inflight_lock:
            _inflight.pop(key, None)


def write_dataset(variant: Variant, params: dict[str, int], seed: int, directory: Path) -> Path:
    """Draw one dataset into `directory` (written aside, renamed into place, `ready` last)."""
    tmp = directory.with_name(f"{directory.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, arr in data.generate(variant, params, seed).items():
        arr.tofile(tmp / f"{name}.bin")
    (tmp / "ready").write_text("")
    try:
        tmp.rename(directory)
    except OSError:  # another thread or process finished the same entry first
        shutil.rmtree(tmp, ignore_errors=True)
    return directory


def data_cache_root(settings: HarnessSettings) -> Path:
    """Where cached datasets live: beside the scratch directories (the system temp dir unless `scratch_root`
    is set), not in `cache_dir`. The sandboxed driver, running as an unprivileged uid, reads them read-only
    at their own path, so every parent must be traversable; they hold generated inputs only, no secret.
    One directory per service uid, refused if another user owns it (no planted directory or link)."""
    root = (settings.scratch_root or Path(tempfile.gettempdir())) / f"cudamaster-data-{os.getuid()}"
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    st = root.lstat()
    if st.st_uid != os.getuid() or not root.is_dir() or root.is_symlink():
        raise RuntimeError(f"{root} is not a directory owned by this user: remove it, or set CUDAMASTER_HARNESS__SCRATCH_ROOT")
    return root


class DataCache:
    def __init__(self, settings: HarnessSettings):
        self.root = data_cache_root(settings)
        self.refs = settings.cache_dir / "references"  # not visible to any sandbox
        self.limit = settings.data_cache_bytes
        self.min_free = settings.data_cache_min_free_bytes
        self.grace_s = settings.run_timeout_s + 60.0

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def has_room(self) -> bool:
        """Whether new entries may be written: the cache's file systems keep `min_free` bytes free."""
        try:
            return all(shutil.disk_usage(_existing(d)).free >= self.min_free for d in (self.root, self.refs))
        except OSError:
            return False

    def entry(self, variant: Variant, params: dict[str, int], seed: int) -> Path | None:
        """The dataset's directory in the cache (None: not cacheable); it may not exist yet."""
        key = _key(variant, params, seed) if self.enabled else None
        return None if key is None else self.root / key

    def ready(self, variant: Variant, params: dict[str, int], seed: int) -> Path | None:
        """The cached dataset's directory if it is complete now, else None."""
        directory = self.entry(variant, params, seed)
        return directory if directory is not None and (directory / "ready").exists() else None

    def dataset(self, variant: Variant, params: dict[str, int], seed: int, fallback: Path) -> Path:
        """The dataset's directory: the cache entry (drawn now if missing), or `fallback` when not cacheable."""
        directory = self.entry(variant, params, seed)
        if directory is None:
            return write_dataset(variant, params, seed, fallback)
        if (directory / "ready").exists():
            _touch(directory)
            return directory
        if not self.has_room():
            return write_dataset(variant, params, seed, fallback)
        # one draw per entry at a time in this process: a second thread waits for the first one's
        return single_flight(f"dataset {directory}", lambda: _ready_or_write(variant, params, seed, directory))

    def publish(self, variant: Variant, params: dict[str, int], seed: int, drawn: Path) -> None:
        """Move a dataset drawn outside the cache (during an evaluation, once its driver has ended) into it."""
        directory = self.entry(variant, params, seed)
        if directory is None or (directory / "ready").exists() or not (drawn / "ready").exists() or not self.has_room():
            return
        tmp = directory.with_name(f"{directory.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            os.rename(drawn, tmp)
        except OSError:  # another file system: copy
            shutil.copytree(drawn, tmp)
        try:
            tmp.rename(directory)
        except OSError:  # another evaluation published it first
            shutil.rmtree(tmp, ignore_errors=True)

    def _ref_dir(self, variant: Variant, params: dict[str, int], seed: int) -> Path | None:
        # References live apart from the datasets: a sandboxed driver sees its datasets, never the answers.
        key = _key(variant, params, seed) if self.enabled else None
        return None if key is None else self.refs / key

    def has_reference(self, variant: Variant, params: dict[str, int], seed: int) -> bool:
        """Whether the full float64 reference of a cached dataset is stored (without reading it)."""
        directory = self._ref_dir(variant, params, seed)
        return directory is not None and (directory / "reference.json").exists()

    def reference(self, variant: Variant, params: dict[str, int], seed: int) -> dict[str, np.ndarray] | None:
        """The full float64 reference of a cached dataset, or None."""
        directory = self._ref_dir(variant, params, seed)
        if directory is None or not (directory / "reference.json").exists():
            return None
        try:
            names = json.loads((directory / "reference.json").read_text())
            return {n: np.load(directory / f"ref_{n}.npy") for n in names}
        except (OSError, ValueError):  # being written by another evaluation, or removed by a prune
            return None

    def full_reference(
        self, variant: Variant, params: dict[str, int], seed: int, compute: Callable[[], dict[str, np.ndarray]]
    ) -> tuple[dict[str, np.ndarray], bool]:
        """The full float64 reference of a check dataset: from the cache, else `compute()` (stored when there
        is room), one computation per entry at a time in this process. Returns (reference, computed here)."""
        stored = self.reference(variant, params, seed)
        if stored is not None:
            return stored, False
        directory = self._ref_dir(variant, params, seed)
        if directory is None:
            return compute(), True
        computed: list[bool] = []

        def work() -> dict[str, np.ndarray]:
            again = self.reference(variant, params, seed)  # stored while this thread waited for the lock
            if again is not None:
                return again
            ref = compute()
            computed.append(True)
            self.store_reference(variant, params, seed, ref)
            return ref

        return single_flight(f"reference {directory}", work), bool(computed)

    def store_reference(self, variant: Variant, params: dict[str, int], seed: int, ref: dict[str, np.ndarray]) -> None:
        directory = self._ref_dir(variant, params, seed)
        if directory is None or not self.has_room():
            return
        directory.mkdir(parents=True, exist_ok=True)
        for name, values in ref.items():
            tmp = directory / f"ref_{name}.{os.getpid()}.{threading.get_ident()}.tmp.npy"
            np.save(tmp, np.asarray(values, dtype=np.float64))
            tmp.replace(directory / f"ref_{name}.npy")
        tmp = directory / f"reference.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(sorted(ref)))
        tmp.replace(directory / "reference.json")  # last, and atomically: a reader sees all of it or nothing

    def prune(self, released: Collection[Path] = ()) -> int:
        """Remove least recently used entries until the cache fits its bound; returns bytes removed.

        `released`: entries this process has finished reading (bench run's pipeline, once a variant is
        evaluated): they may go before the grace period that protects entries other evaluations may be
        reading (a whole suite runs within it, and would otherwise grow the cache past its bound)."""
        if not self.enabled or not self.root.exists():
            return 0
        # An entry's size counts its float64 references too (kept apart, in cache_dir/references).
        found = [lru.Entry(e.used, e.size + _bytes(self.refs / e.path.name), e.path) for e in lru.entries(self.root, "ready")]
        return lru.prune(
            found,
            self.limit,
            self.grace_s,
            also_remove=lambda d: shutil.rmtree(self.refs / d.name, ignore_errors=True),
            released=set(released),
        )


def _ready_or_write(variant: Variant, params: dict[str, int], seed: int, directory: Path) -> Path:
    if (directory / "ready").exists():  # drawn by the thread this one waited for
        _touch(directory)
        return directory
    return write_dataset(variant, params, seed, directory)


def _bytes(directory: Path) -> int:
    return sum(f.stat().st_size for f in directory.iterdir() if f.is_file()) if directory.is_dir() else 0


def _existing(path: Path) -> Path:
    """`path`, or its nearest ancestor that exists (where its file system is, before it is created)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _touch(directory: Path) -> None:
    lru.touch(directory / "ready")
