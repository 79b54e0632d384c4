"""The corpus of honest kernels (tests/bench/honest, issue 29): correct kernels in the styles people write,
which the harness must accept. On the CPU each compiles, passes the symbol checks and links into its driver
(what `bench eval --compile-only` checks); on the GPU each evaluates `ok`."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness.evaluate import compile_only
from tests.conftest import Ahead, requires_nvcc

HONEST = Path(__file__).parent / "honest"
CORPUS = tomllib.loads((HONEST / "manifest.toml").read_text())["kernel"]
FILES = [k["file"] for k in CORPUS]
BY_FILE = {k["file"]: k for k in CORPUS}


def _link(file: str, settings) -> tuple[Verdict, str, str]:
    """What `bench eval --compile-only` does: (verdict, message, log)."""
    entry = BY_FILE[file]
    return compile_only(entry["task"], entry["precision"], (HONEST / file).read_bytes(), settings=settings, extra_flags=entry.get("flags"))


def test_the_corpus_covers_thirty_kernels_ten_tasks_both_precisions_and_every_class():
    assert len(FILES) == len(set(FILES)) >= 30
    assert sorted(p.relative_to(HONEST).as_posix() for p in HONEST.rglob("*.cu")) == sorted(FILES)  # none left out
    assert len({k["task"] for k in CORPUS}) >= 10
    assert Counter(k["precision"] for k in CORPUS).keys() == {"fp32", "bf16"}
    assert {k["class"] for k in CORPUS if "class" in k} == {1, 2, 3, 4, 5, 6}
    for k in CORPUS:  # the file's name says its precision
        assert Path(k["file"]).name.startswith(k["precision"] + "_"), k["file"]


@pytest.fixture(scope="module")
def linked(request, harness_settings) -> Ahead:
    """Every collected corpus kernel compiled and linked at once on all cores (objects shared through the cache)."""
    return Ahead(request, "test_an_honest_kernel_compiles_and_links_without_a_gpu", ("file",), lambda f: _link(f, harness_settings))


@requires_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("file", FILES)
def test_an_honest_kernel_compiles_and_links_without_a_gpu(file, linked):
    verdict, message, _ = linked.get(file)
    assert verdict == Verdict.ok, f"{file}: {verdict}: {message}"


@pytest.mark.gpu
@pytest.mark.parametrize("file", FILES)
def test_an_honest_kernel_is_ok_on_the_gpu_at_edge_and_paper_sizes(file, harness_settings):
    entry = BY_FILE[file]
    source = (HONEST / file).read_text()
    for sizes in ("edge", "paper"):
        result = evaluate(
            entry["task"],
            entry["precision"],
            source,
            sizes,
            settings=harness_settings,
            extra_flags=entry.get("flags"),
            timing=sizes == "paper",
        )
        assert result.verdict == Verdict.ok, f"{file} at {sizes} sizes: {result.verdict}: {result.message}"
        assert all(row.passed for row in result.rows)
