"""Bounds on what compiling untrusted code may leave behind (fault 9 of issue 10): an object or driver
over `max_object_bytes` is rejected, and the compile cache (objects/, drivers/) is pruned, least
recently used first, to `compile_cache_max_bytes`. Real nvcc in the real sandbox; no GPU."""

from __future__ import annotations

import os
import time
from pathlib import Path

from bench_tasks import load_task
from bench_tasks.harness import Verdict, compile_candidate, lru
from bench_tasks.harness import compile as cc
from settings import HarnessSettings
from tests.conftest import requires_nvcc

CANDIDATES = Path(__file__).parent / "candidates"
VARIANT = load_task("vector_add").variant("fp32")
# A host table of 256 KiB in the object's read-only data.
BLOB = '\nextern "C" const unsigned char cm_table[1 << 18] = {1};\n'


def _candidate(tag: str, extra: str = "") -> str:
    return (CANDIDATES / "fast.cu").read_text() + f"\n// variant {tag}\n" + extra


@requires_nvcc
def test_an_object_over_the_size_bound_is_rejected(tmp_path):
    settings = HarnessSettings(cache_dir=tmp_path / "cache", max_object_bytes=128 * 1024)
    big = compile_candidate(VARIANT, _candidate("big", BLOB), settings)
    assert big.verdict == Verdict.rejected and "CUDAMASTER_HARNESS__MAX_OBJECT_BYTES" in big.message, big.message
    assert compile_candidate(VARIANT, _candidate("small"), settings).ok


def _age(entry: Path, marker: str, seconds_ago: float) -> None:
    when = time.time() - seconds_ago
    os.utime(entry / marker, (when, when))


@requires_nvcc
def test_the_compile_cache_is_pruned_least_recently_used_first(tmp_path):
    settings = HarnessSettings(cache_dir=tmp_path / "cache")
    paths = [compile_candidate(VARIANT, _candidate(str(i)), settings).object_path.parent for i in range(3)]
    found = {e.path: e for e in lru.entries(settings.cache_dir / "objects", "log.txt")}
    assert set(paths) <= set(found)
    # Older than the grace period: the first one used longest ago, the second after it.
    _age(paths[0], "log.txt", 3 * cc.COMPILE_CACHE_GRACE_S)
    _age(paths[1], "log.txt", 2 * cc.COMPILE_CACHE_GRACE_S)
    _age(paths[2], "log.txt", 2 * cc.COMPILE_CACHE_GRACE_S)
    total = sum(e.size for e in lru.entries(settings.cache_dir / "objects", "log.txt"))
    # Room for all but the oldest: exactly it goes.
    bounded = settings.model_copy(update={"compile_cache_max_bytes": total - found[paths[0]].size})
    assert cc.prune_compile_cache(bounded) == found[paths[0]].size
    assert not paths[0].exists() and paths[1].exists() and paths[2].exists()
    # A hit counts as a use: the second is used now, so the third is now the least recently used.
    assert compile_candidate(VARIANT, _candidate("1"), settings).ok
    assert cc.prune_compile_cache(settings.model_copy(update={"compile_cache_max_bytes": 0})) == found[paths[2]].size
    assert paths[1].exists() and not paths[2].exists()


@requires_nvcc
def test_a_new_compile_prunes_the_cache_to_its_bound(tmp_path):
    settings = HarnessSettings(cache_dir=tmp_path / "cache", compile_cache_max_bytes=0)
    first = compile_candidate(VARIANT, _candidate("first"), settings).object_path.parent
    _age(first, "log.txt", 2 * cc.COMPILE_CACHE_GRACE_S)
    second = compile_candidate(VARIANT, _candidate("second"), settings).object_path.parent
    assert not first.exists() and second.exists()  # the new entry is within its grace period, the old one is not
