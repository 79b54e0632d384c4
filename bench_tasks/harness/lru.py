"""Least-recently-used pruning of an on-disk cache made of entry directories, bounded in bytes.

An entry's last use is the modification time of its marker file (touched on every hit). Pruning removes
the least recently used entries until the cache fits its bound, and never removes an entry used in the
last `grace_s` seconds (another process may be reading it) nor one whose lock another process holds.
Used by the data cache (datacache.py) and the compile cache (compile.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

_lock = threading.Lock()  # one prune at a time in this process (the removals are idempotent across processes)


@dataclass(frozen=True)
class Entry:
    used: float  # the marker's mtime
    size: int  # bytes of the files in the entry
    path: Path


def touch(marker: Path) -> None:
    """Record a use of the entry whose marker this is."""
    with contextlib.suppress(OSError):
        os.utime(marker)


def entries(root: Path, marker: str) -> list[Entry]:
    """The complete entries under `root` (directories holding `marker`)."""
    found: list[Entry] = []
    if not root.is_dir():
        return found
    for d in root.iterdir():
        try:  # entries come and go while other processes work
            if d.is_dir() and (d / marker).exists():
                size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
                found.append(Entry((d / marker).stat().st_mtime, size, d))
        except OSError:
            continue
    return found


def _unlocked(entry: Path) -> bool:
    """True when no process holds the entry's lock (`.lock`, see compile._locked); an entry without one is free."""
    lock = entry / ".lock"
    if not lock.exists():
        return True
    try:
        with open(lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle, fcntl.LOCK_UN)
            return True
    except OSError:
        return False


def prune(
    found: Iterable[Entry],
    limit: int,
    grace_s: float,
    also_remove: Callable[[Path], None] | None = None,
    released: Collection[Path] = (),
) -> int:
    """Remove least recently used entries until the total fits `limit`; returns the bytes removed.
    Entries in `released` (their user is done with them) are not protected by `grace_s`."""
    with _lock:
        ordered = sorted(found, key=lambda e: e.used)
        total = sum(e.size for e in ordered)
        removed = 0
        now = time.time()
        for e in ordered:
            if total - removed <= limit:
                break
            if (now - e.used < grace_s and e.path not in released) or not _unlocked(e.path):
                continue
            shutil.rmtree(e.path, ignore_errors=True)
            if also_remove is not None:
                also_remove(e.path)
            removed += e.size
        return removed
