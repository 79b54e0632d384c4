"""Every benchmark task exports the same way (issue 41): each of the 100 variants renders a bundle from its data,
and the numbers per size in it are the harness's. The bundles of stored jobs, their compilation and the service's
routes: tests/service/test_export.py."""

from __future__ import annotations

import ast
import json
import math

import pytest

from bench_tasks.export import ExportInput, MeasuredRow, bundle_files
from bench_tasks.export.pycode import python_code
from bench_tasks.harness.source import END_MARK, START_MARK
from bench_tasks.spec import all_tasks

ENV = {"gpu": "FAKE GPU", "driver": "1", "cuda": "13.0", "nvcc": "13.0", "harness": "0", "commit": "abc"}
PROV = {"job": "job_0123456789abcdef", "attempt": 1, "date": "2026-12-07"}
VARIANTS = [v for t in all_tasks() for v in t.variants()]


def _export(variant, source: str = "// a kernel\n", rows: list[MeasuredRow] | None = None) -> dict[str, bytes]:
    if rows is None:
        rows = [MeasuredRow(variant.task.size_list("paper")[0], 2.0, 1.0, 2.0, 50.0)]
    return bundle_files(ExportInput(variant, source, rows, 2.0, ENV, PROV))


def test_every_variant_renders_with_the_harness_numbers_at_every_size():
    for variant in VARIANTS:
        files = _export(variant)
        doc = json.loads(files["task.json"])
        task = variant.task
        for size in doc["test_sizes"]:
            assert size["lengths"] == task.lengths(size["params"], variant.precision), variant.key
        n_sizes = len(doc["test_sizes"])
        assert files["task_data.h"].decode().count('{"edge ') + files["task_data.h"].decode().count('{"size ') == n_sizes + 1
        assert variant.candidate_entry in files["kernel.h"].decode() and variant.candidate_entry in files["binding.h"].decode()
        for name, content in files.items():  # every generated Python file is Python (an argument named `in`: `in_`)
            if name.endswith(".py"):
                ast.parse(content.decode(), f"{variant.key}/{name}")


def test_generated_python_computes_every_tasks_lengths_and_scalars():
    """pycode turns each size expression into Python; evaluated with the names, it gives what bench_tasks.expr gives."""
    for variant in VARIANTS:
        task = variant.task
        for params in task.size_list("all"):
            n = task.names(params, variant.precision)
            env = {"n": n, "math": math}
            got = {a.name: int(eval(python_code(a.length), env)) for a in task.args if not a.scalar}
            assert got == task.lengths(params, variant.precision), (variant.key, params)
            scalars = {a.name: eval(python_code(a.value), env) for a in task.args if a.scalar}
            assert scalars == pytest.approx(task.scalar_values(params, variant.precision)), (variant.key, params)


def test_kernel_is_kept_unchanged_and_a_marked_file_gets_the_harness_extract():
    variant = VARIANTS[0]
    source = "#define K 4\n" + START_MARK + '\nextern "C" void x() {}\n' + END_MARK + "\nint main() { return 0; }\n"
    files = _export(variant, source)
    assert files["kernel.cu"].decode() == source
    assert "int main" not in files["kernel_extracted.cu"].decode() and files["kernel_source.txt"].decode().strip() == "kernel_extracted.cu"
    assert _export(variant)["kernel_source.txt"].decode().strip() == "kernel.cu"


def test_readme_holds_the_measurements_and_the_sanitizer_verdicts_or_not_run():
    variant = VARIANTS[0]
    rows = [MeasuredRow({"N": 1024}, 12.5, 5.0, 2.5, 61.25), MeasuredRow({"N": 4096}, None, None, None, None)]
    readme = _export(variant, rows=rows)["README.md"].decode()
    assert "| N=1024 | 12.500 | 5.000 | 2.500 | 61.2 |" in readme and "| N=4096 | — | — | — | — |" in readme
    assert "not run" in readme
    verdicts = [{"tool": "racecheck", "verdict": "findings", "detail": "race on smem[3]"}]
    readme = bundle_files(ExportInput(variant, "// k\n", rows, 2.0, ENV, PROV, sanitizer=verdicts))["README.md"].decode()
    assert "| racecheck | findings | race on smem[3] |" in readme and "not run" not in readme


def test_a_kernel_that_launches_the_baselines_kernel_gets_the_baseline_in_its_extension():
    from pathlib import Path

    from bench_tasks.export.render import uses_baseline_kernels
    from bench_tasks.spec import load_task

    honest = Path(__file__).parent / "honest"
    spmv = load_task("spmv_coo").variant("bf16")
    launching = (honest / "spmv_coo" / "bf16_launch_baseline_kernel.cu").read_text()
    assert uses_baseline_kernels(launching, spmv.task.baseline_source())
    assert "'baseline.cu'" in _export(spmv, launching)["setup.py"].decode().split("_kernel", 1)[1].split("\n")[0]
    own = "__global__ void spmv_coo_float_kernel(int n) { }\nvoid f() { spmv_coo_float_kernel<<<1, 1>>>(1); }\n"
    assert not uses_baseline_kernels(own, spmv.task.baseline_source())  # its own kernel of the same name
    vector_add = load_task("vector_add").variant("fp32")
    plain = (honest / "vector_add" / "fp32_float4.cu").read_text()
    assert not uses_baseline_kernels(plain, vector_add.task.baseline_source())
    assert "'baseline.cu'" not in _export(vector_add, plain)["setup.py"].decode().split("_kernel", 1)[1].split("\n")[0]
