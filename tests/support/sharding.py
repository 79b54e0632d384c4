"""`--shard I/N`: run only the I-th of N shards of the selected tests (after `-m`, `-k` and the rest have deselected
theirs), so that a suite longer than one device call runs in several (scripts/device_gpu_suite.sh). Every selected
test is in exactly one shard. Round-robin by default (parametrized sweeps spread their heavy items over the shards);
`--shard-blocks` takes contiguous blocks instead (a module's tests stay together and share their module fixtures)."""

from __future__ import annotations

import re

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("shard")
    group.addoption("--shard", default=None, metavar="I/N", help="run shard I (1..N) of N of the selected tests")
    group.addoption("--shard-blocks", action="store_true", help="--shard takes contiguous blocks, not every N-th test")


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise pytest.UsageError(f"--shard {text!r}: give I/N with 1 <= I <= N, e.g. --shard 2/4")
    return int(m[1]), int(m[2])


def shard_of(count: int, index: int, shards: int, blocks: bool) -> list[int]:
    """The positions (0..count-1) of shard `index` (1-based) of `shards`."""
    if blocks:
        return list(range((index - 1) * count // shards, index * count // shards))
    return list(range(index - 1, count, shards))


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected theirs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    text = config.getoption("shard")
    if not text:
        return
    index, shards = parse_shard(text)
    keep = set(shard_of(len(items), index, shards, config.getoption("shard_blocks")))
    dropped = [item for i, item in enumerate(items) if i not in keep]
    items[:] = [item for i, item in enumerate(items) if i in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
