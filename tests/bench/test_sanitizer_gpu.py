"""compute-sanitizer on the GPU (issue 41): each positive control is flagged by its tool; the honest corpus, the BF16
twins and the 100 baselines have no findings (a baseline's known finding is documented in its task.toml's
`[notes] sanitizer`). A GPU whose runtime refuses the tool (some H200 machines) gives not_run: these tests then skip,
saying so, and never pass as clean.

The sweeps (about 180 kernels, up to a minute each) run only with CUDAMASTER_SANITIZER_SWEEP=1;
scripts/device_sanitize.sh runs them in parallel, with a JSON record of the time per kernel."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from bench_tasks import all_tasks, load_task
from bench_tasks.harness.result import SANITIZER_TOOLS, SanitizerStatus, SanitizerVerdict
from bench_tasks.harness.sanitize import documented_findings, sanitize

HERE = Path(__file__).parent
CONTROLS = HERE / "sanitizer_controls"
HONEST = HERE / "honest"
TWINS = HERE / "bf16_twins"
PLANTED = {
    "memcheck": ("memcheck_oob_read.cu", "oob_read_kernel"),
    "racecheck": ("racecheck_missing_syncthreads.cu", "race_kernel"),
    "initcheck": ("initcheck_unwritten_scratch.cu", "scratch_kernel"),
    "synccheck": ("synccheck_syncwarp_mask.cu", "syncwarp_mask_kernel"),
}
sweep = pytest.mark.skipif(
    os.environ.get("CUDAMASTER_SANITIZER_SWEEP") != "1", reason="the sanitizer sweeps run with CUDAMASTER_SANITIZER_SWEEP=1"
)


def _ran(verdicts: list[SanitizerVerdict]) -> list[SanitizerVerdict]:
    refused = [v for v in verdicts if v.status == SanitizerStatus.not_run and "refuses" in v.reason]
    if refused:
        pytest.skip(f"compute-sanitizer cannot run on this GPU: {refused[0].reason}")
    return verdicts


def _clean(verdicts: list[SanitizerVerdict], allowed: dict[str, str] | None = None) -> None:
    for v in _ran(verdicts):
        if v.tool in (allowed or {}):
            continue
        assert v.status == SanitizerStatus.clean, f"{v.tool}: {v.status.value} {v.reason} {v.kernel} {v.report[:6]}"


@pytest.mark.gpu
@pytest.mark.parametrize("tool", SANITIZER_TOOLS)
def test_each_positive_control_is_flagged_by_its_tool(tool, harness_settings):
    file, kernel = PLANTED[tool]
    (verdict,) = _ran(sanitize("vector_add", "fp32", (CONTROLS / file).read_text(), settings=harness_settings, tools=[tool]))
    assert verdict.status == SanitizerStatus.findings, f"{tool} missed its planted defect: {verdict}"
    assert verdict.kernel.startswith(kernel) and verdict.errors >= 1 and verdict.report


@pytest.mark.gpu
def test_an_honest_kernel_is_clean_under_all_four_tools(harness_settings):
    """One kernel without a defect through every tool at both sizes: the controls' findings are the defects'."""
    source = (HONEST / "vector_add" / "fp32_float4.cu").read_text()
    verdicts = sanitize("vector_add", "fp32", source, settings=harness_settings)
    assert [v.tool for v in verdicts] == list(SANITIZER_TOOLS)
    _clean(verdicts)
    assert all(len(v.sizes) == 2 for v in verdicts)


HONEST_KERNELS = [(k["file"], k["task"], k["precision"]) for k in tomllib.loads((HONEST / "manifest.toml").read_text())["kernel"]]


@pytest.mark.gpu
@sweep
@pytest.mark.parametrize(("file", "task", "precision"), HONEST_KERNELS)
def test_sanitizer_sweep_honest_kernel_is_clean(file, task, precision, harness_settings):
    _clean(sanitize(task, precision, (HONEST / file).read_text(), settings=harness_settings))


@pytest.mark.gpu
@sweep
@pytest.mark.parametrize("file", sorted(p.name for p in TWINS.glob("*.cu")))
def test_sanitizer_sweep_bf16_twin_is_clean(file, harness_settings):
    _clean(sanitize(Path(file).stem, "bf16", (TWINS / file).read_text(), settings=harness_settings))


BASELINES = [(t.name, p) for t in all_tasks() for p in sorted(t.prototypes)]


@pytest.mark.gpu
@sweep
@pytest.mark.parametrize(("task", "precision"), BASELINES)
def test_sanitizer_sweep_every_baseline_is_clean_or_documented(task, precision, harness_settings):
    _clean(sanitize(task, precision, None, settings=harness_settings), documented_findings(load_task(task)))
