"""PyTorch references (KernelBench's format) as tasks: each file of tests/bench/pytorch_refs/ gets its expected verdict,
run only in the sandbox on the CPU; the derived prototype, the float64 oracle, the bad inputs each refused with a
clear reason; honest kernels compile and link against the derived prototypes; on the GPU (gpu-marked) honest kernels
are ok and wrong ones refused."""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from bench_tasks.pytorch import Limits, ReferenceRefused, load_reference, make_task
from bench_tasks.pytorch.task import TOLERANCES, draw_for
from bench_tasks.spec import TaskError

pytest.importorskip("torch")  # the optional extra: CI installs its CPU build
# One xdist worker runs this module (addopts: --dist loadgroup): each file is run in the sandbox once, shared by its tests.
pytestmark = pytest.mark.xdist_group("pytorch_refs")

REFS = Path(__file__).parent / "pytorch_refs"
KERNELS = REFS / "kernels"
FAST = Limits(seconds=90)

# file -> the refusal's kind, or None: a task is made. Small sizes keep the float64 runs quick.
EXPECTED = {
    "relu.py": None,
    "sum_reduction.py": None,
    "softmax.py": None,
    "layer_norm.py": None,
    "gemm.py": None,
    "batched_gemm.py": None,
    "conv2d.py": None,
    "gemm_bias_relu_scale.py": None,
    "linear_params.py": None,
    "min_max.py": None,
    "dropout.py": "random",
    "hostile.py": "time",
}


SHORT = Limits(seconds=3)  # a spinning file is stopped 3 s after torch is imported (the start is not charged)


@cache
def _outcome(stem: str):
    """One file's task, or its refusal: each file is run in the sandbox once per test process and shared."""
    try:
        return load_reference(REFS / f"{stem}.py", limits=FAST)
    except ReferenceRefused as exc:
        return exc


def _task(stem: str):
    task = _outcome(stem)
    assert not isinstance(task, Exception), str(task)
    return task


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile file, pointed at a secret of this test's own, run once at a 3 s limit: (its refusal, the secret)."""
    secret = Path("/var/tmp") / f"cm-secret-{tmp_path_factory.mktemp('h').name}"
    secret.write_text("TOPSECRET-42")
    try:
        text = (REFS / "hostile.py").read_text().replace('"/etc/shadow"', repr(str(secret)))
        with pytest.raises(ReferenceRefused) as info:
            load_reference(source=text, name="pt_hostile", limits=SHORT)
    finally:
        secret.unlink()
    return info.value, secret


def test_every_reference_file_gets_its_expected_verdict(hostile):
    assert {p.name for p in REFS.glob("*.py")} == set(EXPECTED)
    for name, kind in EXPECTED.items():
        got = hostile[0] if name == "hostile.py" else _outcome(name.removesuffix(".py"))
        if kind is None:
            assert not isinstance(got, Exception), (name, str(got))
            assert got.reference_name == name
        else:
            assert isinstance(got, ReferenceRefused) and got.kind == kind, (name, got)
    assert "dropout" in str(_outcome("dropout"))
    assert "longer than 3 s" in str(hostile[0])


def test_the_prototype_is_outputs_inputs_parameters_in_state_dict_order_then_the_constants():
    task = _task("gemm_bias_relu_scale")
    assert task.variant("fp32").prototype.text == (
        'extern "C" void pt_gemm_bias_relu_scale(float* out, const float* x, const float* linear_weight, '
        "const float* linear_bias, int batch_size, int in_features, int out_features)"
    )
    assert [p.name for p in _task("min_max").variant("fp32").prototype.params] == ["out0", "out1", "x", "rows", "cols"]
    assert "state_dict['linear.weight'], float32 in the reference, shape [128, 256]" in task.notes["shapes"]


def test_bf16_makes_every_float_buffer_a_bfloat16_and_keeps_the_dimensions():
    task = make_task(_task("gemm").probe, "pt_gemm", "bf16")  # the probe does not depend on the precision
    assert task.variant("bf16").prototype.text == (
        'extern "C" void pt_gemm(__nv_bfloat16* out, const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int K, int N)'
    )
    assert task.tolerance["bf16"] == TOLERANCES["bf16"]


def test_the_probe_reports_float64_references_on_seeded_inputs_at_every_size():
    task = load_reference(REFS / "gemm.py", sizes=[{"M": 8, "K": 16, "N": 4}, {"M": 3, "K": 5, "N": 7}], limits=FAST)
    probe = task.probe
    assert probe.sizes == ({"M": 8, "K": 16, "N": 4}, {"M": 3, "K": 5, "N": 7})
    assert [t.shapes for t in probe.tensors] == [((8, 4), (3, 7)), ((8, 16), (3, 5)), ((16, 4), (5, 7))]
    assert probe.flops == (2 * 8 * 16 * 4, 2 * 3 * 5 * 7)
    for i, (m, k, n) in enumerate([(8, 16, 4), (3, 5, 7)]):
        seeds = probe.references[i]
        assert len(seeds) == 2 and not np.array_equal(seeds[0]["input:A"], seeds[1]["input:A"])
        for ref in seeds:
            want = ref["input:A"].reshape(m, k) @ ref["input:B"].reshape(k, n)
            assert ref["output:0"].dtype == np.float64
            np.testing.assert_allclose(ref["output:0"].reshape(m, n), want, rtol=1e-12)


def test_the_oracle_runs_the_model_in_float64_on_the_inputs_and_parameters_the_harness_drew():
    task = _task("linear_params")
    size = task.size_list("paper")[0]
    rng = np.random.default_rng(7)
    x, w, b = rng.uniform(0, 1, 16 * 64), rng.uniform(-1, 1, 32 * 64), rng.uniform(-1, 1, 32)
    got = task.reference_module.reference({"x": x, "weight": w, "bias": b}, task.names(size, "fp32"), "fp32")
    np.testing.assert_allclose(got["out"].reshape(16, 32), x.reshape(16, 64) @ w.reshape(32, 64).T + b, rtol=1e-12)


def test_several_outputs_each_checked():
    task = _task("min_max")
    ref = task.probe.references[0][0]
    x = ref["input:x"].reshape(64, 1000)
    np.testing.assert_array_equal(ref["output:0"], x.min(axis=1))
    np.testing.assert_array_equal(ref["output:1"], x.max(axis=1))
    assert task.variant("fp32").outputs() == ["out0", "out1"]


def test_draws_follow_the_references_values_and_constant_parameters_vary():
    ln = _task("layer_norm")
    draws = {a.name: a.draw for a in ln.args if a.draw}
    assert draws["x"] == "normal(0, 1)"
    assert draws["ln_weight"] == "uniform(0.5, 1.5)" and draws["ln_bias"] == "uniform(-0.5, 0.5)"
    assert {a.name: a.draw for a in _task("linear_params").args}["x"] == "uniform(0, 1)"
    fused = _task("gemm_bias_relu_scale")
    weight = next(t for t in fused.probe.tensors if t.name == "linear_weight")
    assert draw_for(weight).startswith("uniform(-0.06")


def _refused(tmp_path: Path, text: str, **kwargs) -> ReferenceRefused:
    path = tmp_path / "ref.py"
    path.write_text(text)
    with pytest.raises(ReferenceRefused) as info:
        load_reference(path, limits=kwargs.pop("limits", FAST), **kwargs)
    return info.value


HEAD = "import torch\nimport torch.nn as nn\n\n"
MODEL = "class Model(nn.Module):\n    def forward(self, x):\n        return {body}\n\n"
INPUTS = "n = 8\n\ndef get_inputs():\n    return [{inputs}]\n\ndef get_init_inputs():\n    return []\n"


def _ref(body: str = "x * 2", inputs: str = "torch.randn(n)") -> str:
    return HEAD + MODEL.format(body=body) + INPUTS.format(inputs=inputs)


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        (HEAD + INPUTS.format(inputs="torch.randn(n)"), "format", "no `Model`"),
        (HEAD + MODEL.format(body="x") + "n = 8\n", "format", "no `get_inputs`"),
        (_ref() + "def broken(:\n", "syntax", "syntax error at line"),
        (_ref(body="x.tolist()"), "outputs", "not a tensor"),
        (_ref(inputs="torch.randn(n).half()"), "dtype", "float16"),
        (_ref(inputs="3"), "inputs", "type int, not a tensor"),
        (_ref(body="x + torch.rand_like(x)"), "random", "differs between two calls"),
        (_ref(body="x", inputs="torch.empty(100 * 2**30, dtype=torch.uint8)"), "memory", "memory"),
        (_ref(body="x[10**9]"), "error", "IndexError"),
    ],
    ids=["no-model", "no-get-inputs", "syntax", "not-tensor", "float16", "python-int", "rand-in-forward", "100GB", "raises"],
)
def test_bad_references_are_refused_with_a_clear_reason(tmp_path, text, kind, words):
    exc = _refused(tmp_path, text, limits=Limits(seconds=90, memory_bytes=6 << 30))
    assert exc.kind == kind, str(exc)
    assert words in str(exc)


def test_sizes_must_name_the_files_constants(tmp_path):
    exc = _refused(tmp_path, _ref(), sizes=[{"n": 4}, {"batch": 2}])
    assert exc.kind == "sizes" and "sizes[1] names batch" in str(exc) and "(n)" in str(exc)


def test_a_reference_that_runs_too_long_is_stopped(tmp_path):
    exc = _refused(tmp_path, _ref(body="[x for _ in iter(int, 1)]"), limits=SHORT)
    assert exc.kind == "time" and "longer than 3 s" in str(exc)


def test_the_hostile_file_reads_nothing_outside_connects_nowhere_and_is_stopped(hostile):
    exc, secret = hostile
    assert exc.kind == "time"
    said = exc.output
    assert f"read {secret} FAILED" in said and "connect FAILED" in said and "read /work FAILED" in said
    assert "TOPSECRET" not in said and "CUDAMASTER" not in said


def test_a_bad_task_name_or_precision_is_a_task_error():
    with pytest.raises(TaskError, match="C identifier"):
        load_reference(REFS / "relu.py", name="pt-relu", limits=FAST)
    with pytest.raises(TaskError, match="unknown precision"):
        load_reference(REFS / "relu.py", precision="fp16", limits=FAST)


def test_a_user_cost_expression_is_the_complexity():
    probe = _task("relu").probe
    task = make_task(probe, "pt_relu", "fp32", complexity="batch_size * dim")
    assert task.complexity_of(task.size_list("paper")[0]) == 16 * 1024
    with pytest.raises(TaskError, match="complexity"):
        make_task(probe, "pt_relu", "fp32", complexity="batch_size * nope")


# -- kernels against the derived prototypes -------------------------------------------------------------------------

HONEST = {"relu": "relu.cu", "softmax": "softmax.cu", "batched_gemm": "batched_gemm.cu", "gemm_bias_relu_scale": "gemm_bias_relu_scale.cu"}
WRONG = {
    "relu_off_by_one.cu": ("relu", "wrong_answer"),
    "softmax_zero.cu": ("softmax", "wrong_answer"),
    "batched_gemm_skip_batch.cu": ("batched_gemm", "wrong_answer"),
    "gemm_bias_relu_scale_param_order.cu": ("gemm_bias_relu_scale", "wrong_answer"),
}
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


@needs_nvcc
@pytest.mark.parametrize("stem", sorted(HONEST))
def test_honest_kernels_compile_and_link_against_the_derived_prototype(stem, harness_settings):
    from bench_tasks.harness.evaluate import compile_only

    verdict, message, log = compile_only(_task(stem), "fp32", (KERNELS / HONEST[stem]).read_text(), settings=harness_settings)
    assert verdict.value == "ok", (message, log[-2000:])


@needs_nvcc
def test_a_kernel_that_calls_pytorch_is_refused_at_compile(harness_settings):
    from bench_tasks.harness.evaluate import compile_only

    source = '#include <torch/extension.h>\nextern "C" void pt_relu_optimized(float* out, const float* x, int b, int d) {}\n'
    verdict, _, _ = compile_only(_task("relu"), "fp32", source, settings=harness_settings)
    assert verdict.value != "ok"


@needs_nvcc
def test_a_kernel_with_another_prototype_is_refused(harness_settings):
    from bench_tasks.harness.evaluate import compile_only

    source = (KERNELS / "relu.cu").read_text().replace("int batch_size, int dim", "long batch_size, int dim")
    verdict, message, _ = compile_only(_task("relu"), "fp32", source, settings=harness_settings)
    assert verdict.value != "ok" and "parameter 3" in message


@pytest.mark.gpu
@pytest.mark.parametrize("stem", sorted(HONEST))
def test_honest_kernels_are_ok_on_the_gpu_with_speedups_over_eager_and_torch_compile(stem):
    from bench_tasks.harness import evaluate

    task = _task(stem)
    result = evaluate(task, "fp32", (KERNELS / HONEST[stem]).read_text(), sizes=task.size_list("paper"))
    assert result.verdict.value == "ok", result.message
    assert result.torch_baselines.startswith("PyTorch "), result.message
    for row in result.rows:
        assert set(row.torch_times) == {"eager", "compile", "candidate"}, result.message
        assert row.baseline == row.torch_times["eager"] and row.speedup is not None and row.speedup_compile is not None
    assert result.score is not None
    record = os.environ.get("CM_PYTORCH_TIMINGS")  # scripts/device_pytorch.sh collects the figures here
    if record:
        with open(record, "a") as f:
            f.write(
                json.dumps({"task": stem, "on": result.torch_baselines, "rows": [_timing_row(r) for r in result.rows], "P": result.score})
                + "\n"
            )


def _timing_row(row) -> dict:
    return {
        "size": row.params,
        **{f"{k}_us": round(v.median_us, 2) for k, v in row.torch_times.items()},
        "speedup_eager": row.speedup,
        "speedup_compile": row.speedup_compile,
    }


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(WRONG))
def test_wrong_kernels_are_refused_on_the_gpu(kernel):
    from bench_tasks.harness import evaluate

    stem, verdict = WRONG[kernel]
    task = _task(stem)
    result = evaluate(task, "fp32", (KERNELS / kernel).read_text(), sizes=task.size_list("paper"))
    assert result.verdict.value == verdict, result.message


# -- baselines: eager and torch.compile ---------------------------------------------------------------------------


def test_the_candidate_is_called_in_its_prototypes_order_on_the_torch_tensors():
    from bench_tasks.pytorch.timing import call_spec

    assert call_spec(_task("gemm_bias_relu_scale"), "fp32") == [
        ("output", "0"),
        ("input", "0"),
        ("param", "linear.weight"),
        ("param", "linear.bias"),
        ("int", "batch_size"),
        ("int", "in_features"),
        ("int", "out_features"),
    ]
    assert call_spec(_task("min_max"), "fp32")[:3] == [("output", "0"), ("output", "1"), ("input", "0")]


LINEAR_C = """
void pt_lin_optimized(float* out, const float* x, const float* w, const float* b, int n, int k, int m) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      float acc = b[j];
      for (int p = 0; p < k; ++p) acc += x[i * k + p] * w[j * k + p];
      out[i * m + j] = acc;
    }
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_the_timing_child_calls_the_candidate_on_the_tensors_in_the_prototypes_order(tmp_path):
    """The torch child's binding of a candidate library (here a host C function, built with gcc: the same ctypes
    path as a CUDA candidate's, on CPU tensors) and its agreement check against eager."""
    import ctypes
    import subprocess

    import torch

    from bench_tasks.pytorch import child

    (tmp_path / "lin.c").write_text(LINEAR_C)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(tmp_path / "lin.so"), str(tmp_path / "lin.c")], check=True)
    torch.manual_seed(0)
    model, x = torch.nn.Linear(5, 3), torch.randn(4, 5)
    with torch.no_grad():
        want = model(x)
    args = [("output", "0"), ("input", "0"), ("param", "weight"), ("param", "bias"), ("int", "n"), ("int", "k"), ("int", "m")]
    out = torch.full((4, 3), float("nan"))
    call, _keep = child._candidate_call(
        ctypes.CDLL(str(tmp_path / "lin.so")), {"entry": "pt_lin_optimized", "args": args}, model, [x], [out], {"n": 4, "k": 5, "m": 3}
    )
    call()
    assert child._agreement([out], [want], (1e-5, 1e-5)) <= 1.0
    wrong = [*args[:5], ("int", "m"), ("int", "m")]  # m where k goes: in bounds, the wrong answer
    out.fill_(float("nan"))
    call, _keep = child._candidate_call(
        ctypes.CDLL(str(tmp_path / "lin.so")), {"entry": "pt_lin_optimized", "args": wrong}, model, [x], [out], {"n": 4, "k": 5, "m": 3}
    )
    call()
    assert not child._agreement([out], [want], (1e-5, 1e-5)) <= 1.0


def test_the_timing_childs_agreement_scales_atol_as_the_tasks_tolerance_says():
    """atol times max|eager| for a `max_abs` tolerance, plain atol otherwise (the harness's checks scale it so)."""
    import torch

    from bench_tasks.pytorch import child

    want, got = [torch.tensor([100.0, 1.0])], [torch.tensor([100.0, 1.05])]
    assert child._agreement(got, want, (1e-3, 0.0)) <= 1.0  # 0.05 within 1e-3 * 100
    assert not child._agreement(got, want, (1e-3, 0.0), max_abs=False) <= 1.0  # 0.05 over 1e-3


def _result_FAKE(task, speedup: float = 1000.0):
    """A harness result as its driver leaves it for a PyTorch task: timed against the empty stub (FAKE times)."""
    from bench_tasks.harness.result import EvaluationResult, SizeRow, TimeStats, Verdict

    stats = TimeStats(median_us=2.0, iqr_us=0.1, min_us=1.9, samples=10, wall_median_us=3.0)
    rows = [
        SizeRow(params=s, complexity=task.complexity_of(s), passed=True, baseline=stats, candidate=stats, speedup=speedup,
                roofline_floor_us=1.0, baseline_roofline_pct=50.0, flags=["speedup_over_review_threshold", "launch_bound"])
        for s in task.size_list("paper")
    ]  # fmt: skip
    return EvaluationResult(task=task.name, precision="fp32", verdict=Verdict.ok, rows=rows, score=speedup)


def test_the_stubs_speedup_is_never_reported_FAKE():
    from bench_tasks.pytorch.timing import measure_baselines
    from settings import get_harness_settings

    task = _task("relu")
    result = measure_baselines(task, _result_FAKE(task), "src", task.size_list("paper"), get_harness_settings(), None, timing=False)
    row = result.rows[0]
    assert result.score is None and row.speedup is None and row.baseline is None and row.baseline_roofline_pct is None
    assert row.flags == ["launch_bound"] and row.candidate is not None


def test_eager_and_compile_times_make_the_speedups_and_p_over_eager_FAKE():
    from bench_tasks.pytorch.timing import apply, hide_stub_speedups

    task = _task("relu")
    result = _result_FAKE(task)
    hide_stub_speedups(result)
    size = task.probe.sizes[0]
    times = {"eager": [10.0, 12.0, 11.0], "compile": [6.0, 6.0, 6.0], "candidate": [2.0, 3.0, 2.0]}
    apply(result, {"torch": "2.11", "device": "H100 FAKE", "sizes": [{"size": size, "times": times, "agreement": 0.1}]}, 50.0)
    row = result.rows[0]
    assert row.speedup == pytest.approx(5.0) and row.speedup_compile == pytest.approx(3.0)
    assert row.baseline.median_us == 11.0 and row.torch_times["candidate"].median_us == 2.0
    assert result.score == pytest.approx(5.0) and result.torch_baselines == "PyTorch 2.11 on H100 FAKE"
    assert row.baseline_roofline_pct == pytest.approx(100.0 / 11.0)


def test_a_torch_compile_failure_keeps_the_eager_speedup_and_says_why_FAKE():
    from bench_tasks.pytorch.timing import apply, hide_stub_speedups

    task = _task("relu")
    result = _result_FAKE(task)
    hide_stub_speedups(result)
    times = {"eager": [10.0], "candidate": [2.0]}
    measured = {"size": task.probe.sizes[0], "times": times, "agreement": 0.0, "compile_error": "BackendCompilerFailed: no cc"}
    apply(result, {"sizes": [measured]}, 50.0)
    assert result.rows[0].speedup == pytest.approx(5.0) and result.rows[0].speedup_compile is None
    assert "torch.compile failed" in result.message and "no cc" in result.message


def test_a_candidate_that_disagrees_with_eager_in_the_timing_process_gets_no_speedup_FAKE():
    from bench_tasks.pytorch.timing import apply, hide_stub_speedups

    task = _task("relu")
    result = _result_FAKE(task)
    hide_stub_speedups(result)
    times = {"eager": [10.0], "compile": [6.0], "candidate": [2.0]}
    apply(result, {"sizes": [{"size": task.probe.sizes[0], "times": times, "agreement": float("inf")}]}, 50.0)
    assert result.rows[0].speedup is None and result.score is None and "withheld" in result.message


# -- the CLI ---------------------------------------------------------------------------------------------------------


def test_bench_import_json_lists_the_tasks_made_and_the_refused_files_with_reasons(tmp_path):
    from typer.testing import CliRunner

    from app.cli import cli

    folder = tmp_path / "refs"
    folder.mkdir()
    for name in ("relu.py", "dropout.py"):
        shutil.copy(REFS / name, folder / name)
    (folder / "broken.py").write_text("def f(:\n")
    out = CliRunner().invoke(cli, ["bench", "import", str(folder), "--json"])
    assert out.exit_code == 0, out.output
    listed = json.loads(out.stdout)
    assert [t["name"] for t in listed["tasks"]] == ["pt_relu"]
    assert listed["tasks"][0]["prototype"] == 'extern "C" void pt_relu(float* out, const float* x, int batch_size, int dim)'
    assert listed["tasks"][0]["sizes"] == [{"batch_size": 16, "dim": 1024}]
    reasons = {Path(r["file"]).name: (r["kind"], r["reason"]) for r in listed["refused"]}
    assert reasons["dropout.py"][0] == "random" and reasons["broken.py"][0] == "syntax"
    assert (folder / "relu.py").read_text() == (REFS / "relu.py").read_text() and sorted(p.name for p in folder.iterdir()) == [
        "broken.py",
        "dropout.py",
        "relu.py",
    ]


@needs_nvcc
def test_bench_eval_reference_compiles_a_candidate_against_the_derived_prototype(tmp_path, harness_settings, monkeypatch):
    from typer.testing import CliRunner

    from app.cli import cli

    monkeypatch.setenv("CUDAMASTER_HARNESS__CACHE_DIR", str(harness_settings.cache_dir))  # the run's one compile cache

    args = ["bench", "eval", "--reference", str(REFS / "relu.py"), "-c", str(KERNELS / "relu.cu"), "--compile-only"]
    out = CliRunner().invoke(cli, [*args, "--reference-sizes", '[{"dim": 64}]'])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())  # rich wraps long lines
    assert "pt_relu(float* out, const float* x, int batch_size, int dim)" in said and "shape [16, 64]" in said
    bad = CliRunner().invoke(cli, [*args, "--reference-sizes", '[{"width": 64}]'])
    assert bad.exit_code == 2 and "names width" in " ".join(bad.output.split())


# -- bench run --suite ----------------------------------------------------------------------------------------------


def _suite(tmp_path: Path, *files: str) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in files:
        shutil.copy(REFS / name, folder / name)
    return folder


def test_bench_run_suite_times_each_references_baselines_and_lists_refused_files_FAKE(tmp_path, monkeypatch):
    """FAKE GPU: the local GPU check passes and the torch child's timing is replaced; the import is real."""
    from typer.testing import CliRunner

    import bench_tasks.cli as bench_cli
    from app.cli import cli
    from bench_tasks.harness.result import EvaluationResult, SizeRow, TimeStats, Verdict
    from bench_tasks.pytorch import timing

    timed = []

    def baselines_FAKE(task, precision, settings, how=None):
        timed.append(task.name)
        stats = TimeStats(median_us=5.0, iqr_us=0.1, min_us=4.9, samples=20, wall_median_us=5.0)
        rows = [
            SizeRow(params=s, complexity=1, passed=True, baseline=stats, torch_times={"eager": stats, "compile": stats})
            for s in task.size_list("paper")
        ]
        return EvaluationResult(
            task=task.name, precision=precision, verdict=Verdict.ok, rows=rows, baseline_only=True, implementation="baseline"
        )

    monkeypatch.setattr(bench_cli, "_local_gpu_ready", lambda settings: None)
    monkeypatch.setattr(timing, "baselines_result", baselines_FAKE)
    folder = _suite(tmp_path, "relu.py")
    (folder / "broken.py").write_text("def f(:\n")
    out = CliRunner().invoke(cli, ["bench", "run", "--suite", str(folder), "-o", str(tmp_path / "r.json")])
    assert out.exit_code == 0, out.output
    assert timed == ["pt_relu"] and "broken.py (syntax)" in " ".join(out.output.split())
    [result] = json.loads((tmp_path / "r.json").read_text())["results"]
    assert result["task"] == "pt_relu" and set(result["rows"][0]["torch_times"]) == {"eager", "compile"}
    bad = CliRunner().invoke(cli, ["bench", "run", "--suite", str(folder), "--vendor"])
    assert bad.exit_code == 2 and "leave out --ray, --vendor" in " ".join(bad.output.split())


@pytest.mark.gpu
def test_bench_run_suite_records_eager_and_compile_baselines_and_a_candidates_speedups(tmp_path):
    from typer.testing import CliRunner

    from app.cli import cli

    folder = _suite(tmp_path, "relu.py")  # one reference: torch.compile compiles once per run
    cands = tmp_path / "cands"
    cands.mkdir()
    shutil.copy(KERNELS / "relu.cu", cands / "pt_relu.cu")
    for extra in ([], ["--candidates", str(cands)]):
        out = CliRunner().invoke(cli, ["bench", "run", "--suite", str(folder), "-o", str(tmp_path / "r.json"), *extra])
        assert out.exit_code == 0, out.output
        results = {r["task"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
        for r in results.values():
            assert r["verdict"] == "ok" and set(r["rows"][0]["torch_times"]) >= {"eager", "compile"}, r["message"]
        record = os.environ.get("CM_PYTORCH_TIMINGS")
        if record:
            with open(record, "a") as f:
                for r in results.values():
                    f.write(
                        json.dumps(
                            {
                                "suite": r["task"],
                                "measured": r["implementation"],
                                "on": r["torch_baselines"],
                                "rows": r["rows"][0]["torch_times"],
                                "speedup_eager": r["rows"][0]["speedup"],
                                "speedup_compile": r["rows"][0]["speedup_compile"],
                            },
                            default=str,
                        )
                        + "\n"
                    )
    assert results["pt_relu"]["implementation"] == "candidate" and results["pt_relu"]["rows"][0]["speedup_compile"] is not None


def test_optimize_reference_refuses_a_missing_or_doubled_task_and_a_file_that_cannot_be_one(tmp_path):
    from typer.testing import CliRunner

    from app.cli import cli

    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    said = lambda out: " ".join(out.output.split())  # noqa: E731 - rich wraps long lines
    neither = CliRunner().invoke(cli, ["optimize", "-p", "fp32"])
    assert neither.exit_code == 2 and "give a TASK" in said(neither)
    both = CliRunner().invoke(cli, ["optimize", "vector_add", "-p", "fp32", "--reference", str(REFS / "relu.py")])
    assert both.exit_code == 2 and "one of them" in said(both)
    bad = CliRunner().invoke(cli, ["optimize", "-p", "fp32", "--reference", str(broken)])
    assert bad.exit_code == 2 and "syntax error at line 1" in said(bad)
