"""Issue 29's BF16 tolerance audit: for every BF16 variant, two honest kernels that sum in different orders
with FP32 accumulation, the baseline and a twin (tests/bench/bf16_twins/<task>.cu: a tree, blocked or split
reduction, another scan or FFT algorithm, or for elementwise tasks another organisation), both pass every
edge and paper size with three check seeds and a fresh one. The tolerance of each task and the reason for it
are one table in bench_tasks/README.md ("BF16 tolerances"), whose tolerance column must match task.toml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness.evaluate import compile_only
from bench_tasks.spec import ToleranceSpec, task_names
from tests.conftest import Ahead, requires_nvcc

TWINS = Path(__file__).parent / "bf16_twins"
TWIN_TASKS = sorted(p.stem for p in TWINS.glob("*.cu"))
BF16_TASKS = [name for name in task_names() if "bf16" in load_task(name).prototypes]
README = Path(__file__).resolve().parents[2] / "bench_tasks" / "README.md"
CHECK_SEEDS = [1, 2, 3]  # evaluate adds a fresh seed drawn at run time (result.seeds[-1])


def _twin(task: str) -> str:
    return (TWINS / f"{task}.cu").read_text()


def test_every_bf16_variant_has_a_twin():
    assert TWIN_TASKS == BF16_TASKS


def test_every_twin_is_a_bf16_task_and_says_which_order_differs():
    for task in TWIN_TASKS:
        assert task in BF16_TASKS, task
        head = _twin(task).splitlines()[0]
        assert head.startswith(f"// BF16 twin of {task}:"), f"{task}: the first line says what order differs, not {head!r}"


@pytest.fixture(scope="module")
def linked(request, harness_settings) -> Ahead:
    """Every collected twin compiled and linked at once on all cores (objects shared through the cache)."""
    return Ahead(
        request,
        "test_a_twin_compiles_and_links_without_a_gpu",
        ("task",),
        lambda t: compile_only(t, "bf16", _twin(t), settings=harness_settings),
    )


@requires_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("task", TWIN_TASKS)
def test_a_twin_compiles_and_links_without_a_gpu(task, linked):
    verdict, message, _ = linked.get(task)
    assert verdict == Verdict.ok, f"{task}: {verdict}: {message}"


# -- the table in bench_tasks/README.md ------------------------------------------------------------------


def _spec_text(spec: ToleranceSpec) -> str:
    """A tolerance as the README's table writes it: `atol A, rtol R` (`× max|ref|` when scaled)."""

    def number(v: float | str) -> str:
        return v if isinstance(v, str) else f"{v:g}"

    scaled = " × max\\|ref\\|" if spec.scale == "max_abs" else ""
    return f"atol `{number(spec.atol)}`{scaled}, rtol `{number(spec.rtol)}`"


def tolerance_cell(task: str) -> str:
    """The tolerance column of `task`'s row: the BF16 tolerance, then any per-output ones."""
    t = load_task(task)
    cell = _spec_text(t.tolerance["bf16"])
    for output, per in sorted(t.tolerance_outputs.items()):
        if "bf16" in per:
            cell += f"; {output}: {_spec_text(per['bf16'])}"
    return cell


def _readme_rows() -> dict[str, list[str]]:
    text = README.read_text()
    start = text.index("## BF16 tolerances")
    end = text.find("\n## ", start)
    section = text[start : end if end >= 0 else len(text)]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 3 and cells[0].startswith("`") and cells[0].endswith("`"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_the_readme_table_has_one_row_per_bf16_task_with_its_tolerance_from_task_toml_and_a_reason():
    rows = _readme_rows()
    assert sorted(rows) == BF16_TASKS
    for task, (tolerance, why) in rows.items():
        assert tolerance == tolerance_cell(task), f"{task}: README says {tolerance!r}, task.toml {tolerance_cell(task)!r}"
        assert len(why) > 20, f"{task}: say why"


# -- on the GPU --------------------------------------------------------------------------------------


def _all_sizes(task: str) -> list[dict[str, int]]:
    """Edge and paper sizes in one list: one evaluation (one driver start) per kernel."""
    t = load_task(task)
    return t.size_list("edge") + t.size_list("paper")


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["baseline", "twin"])
@pytest.mark.parametrize("task", BF16_TASKS)
def test_the_baseline_and_its_twin_pass_every_edge_and_paper_size_with_three_seeds_and_a_fresh_one(task, kernel, harness_settings):
    """One evaluation per kernel (edge and paper sizes in one driver), the baseline's first: the twin's reuses its
    cached check datasets and references. `-k twin` runs the twins alone (test_harness_gpu's sweep covers the
    baselines per size set too)."""
    source = None if kernel == "baseline" else _twin(task)
    result = evaluate(task, "bf16", source, _all_sizes(task), seeds=CHECK_SEEDS, timing=False, settings=harness_settings)
    fresh = result.seeds[-1]
    assert result.verdict == Verdict.ok, f"{task} {kernel} (fresh seed {fresh}): {result.verdict}: {result.message}"
    assert len(result.rows) == len(_all_sizes(task))
    for row in result.rows:
        assert row.passed, f"{task} {kernel} at {row.params} (fresh seed {fresh}): {[c.message for c in row.checks if not c.passed]}"
        assert {c.seed for c in row.checks} == {*CHECK_SEEDS, fresh}, row.params
        assert all(c.checked_elements > 0 for c in row.checks), row.params
