"""The task-format extensions (/work/wt/FORMAT.md) on a synthetic task that uses all of them
(tests/bench/format_task): per-precision roles and memory, host buffers in the plan, the driver and
the runtime, refresh, derive(), tolerance expressions with scale and per-output overrides, check()."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from bench_tasks import data
from bench_tasks.compare import Comparison, check_outputs, compare
from bench_tasks.harness import Verdict, evaluate
from bench_tasks.harness import compile as cc
from bench_tasks.harness.checks import Case, compare_outputs
from bench_tasks.harness.driver import driver_source
from bench_tasks.harness.evaluate import _plan
from bench_tasks.spec import Arg, TaskError, Tolerance, custom_task, load_task_file
from tests.conftest import requires_nvcc

FIXTURE = Path(__file__).parent / "format_task"


@pytest.fixture(scope="module")
def task():
    return load_task_file(FIXTURE / "task.toml")


def _copy_fixture(tmp_path: Path, toml_edit: tuple[str, str] | None = None, reference: str | None = None) -> Path:
    directory = tmp_path / "format_demo"
    shutil.copytree(FIXTURE, directory)
    if toml_edit is not None:
        text = (directory / "task.toml").read_text()
        assert toml_edit[0] in text, toml_edit[0]
        (directory / "task.toml").write_text(text.replace(toml_edit[0], toml_edit[1], 1))
    if reference is not None:
        (directory / "reference.py").write_text(reference)
    return directory / "task.toml"


def _case(task, precision, params, seed=1):
    variant = task.variant(precision)
    stored = data.generate(variant, params, seed)
    x = data.float64_inputs(variant, stored)
    names = data.reference_names(variant, params)
    ref = {k: np.asarray(v, dtype=np.float64) for k, v in task.reference_module.reference(x, names, precision, None).items()}
    return variant, stored, x, names, ref


# -- roles, memory, refresh ----------------------------------------------------------------------


def test_per_precision_roles_and_memory(task):
    y, h, x = task.arg("y"), task.arg("h"), task.arg("x")
    assert y.role_for("fp32") == "accumulate" and y.role_for("bf16") == "output"
    assert y.memory_for("fp32") == "host" and y.memory_for("bf16") == "device"
    assert h.memory_for("fp32") == "host" and x.memory_for("fp32") == "device"
    assert task.variant("fp32").outputs() == ["y", "s", "idx"] == task.variant("bf16").outputs()
    assert not y.scalar and task.arg("m").scalar


def test_an_argument_may_have_another_name_in_one_prototype(task):
    # s is `sums` in the BF16 prototype: the data, references and tolerances still call it s
    bf16, fp32 = task.variant("bf16"), task.variant("fp32")
    assert bf16.param("s").name == "sums" and bf16.param("s").ctype == "__nv_bfloat16"
    assert fp32.param("s").name == "s" and bf16.arg_of(bf16.prototype.params[5]).name == "s"
    assert task.arg("s").param_name("bf16") == "sums" and task.arg("x").param_name("bf16") == "x"


def test_refresh_defaults_to_the_draw_and_keeps_generated_inputs():
    assert Arg("x", "input", "N", draw="uniform(-1, 1)").refresh_for() == "uniform(-1, 1)"
    assert Arg("v", "input", "N").refresh_for() is None  # produced by generate(): kept
    assert Arg("v", "input", "N", refresh="normal(0, 1)").refresh_for() == "normal(0, 1)"
    assert Arg("x", "input", "N", draw="uniform(-1, 1)", refresh="keep").refresh_for() is None


def test_refresh_is_parsed_from_the_toml(task):
    assert task.arg("h").refresh_for() == "uniform(-2, 2)"
    assert task.arg("x").refresh_for() == "uniform(-1, 1)"


def test_custom_tasks_keep_plain_string_roles():
    task = custom_task(
        "ct_fmt",
        "fp32",
        'extern "C" void ct_fmt(const float* X, float* Y, int N)',
        {
            "X": {"role": "input", "length": "N", "value": None, "draw": None},
            "Y": {"role": "output", "length": "N", "value": None, "draw": "uniform(0, 1)"},  # ignored: not an input
            "N": {"role": "scalar", "length": None, "value": "N", "draw": None},
        },
        [{"N": 8}],
        "",
    )
    variant = task.variant("fp32")
    assert variant.outputs() == ["Y"] and task.arg("X").role == "input"
    assert task.arg("X").refresh_for() == "uniform(-1, 1)" and task.arg("Y").draw is None
    assert variant.tolerance_for("Y", task.names({"N": 8}, "fp32")) == Tolerance(1e-5, 1e-4)


# -- derive() ------------------------------------------------------------------------------------


def test_derive_adds_names_that_depend_on_the_size_only(task):
    names = task.names({"n": 1000}, "fp32")
    assert names["m"] == 3  # drawn from default_rng([1000, 11]) in the fixture's derive()
    assert task.names({"n": 1000}, "bf16")["m"] == 3
    assert task.lengths({"n": 1000}, "fp32")["s"] == 3
    assert task.scalar_values({"n": 1000}, "fp32")["m"] == 3
    # the same size gives the same m whatever the dataset seed; the inputs still differ
    variant = task.variant("fp32")
    a, b = data.generate(variant, {"n": 1000}, 1), data.generate(variant, {"n": 1000}, 2)
    assert not np.array_equal(a["h"], b["h"])
    assert data.reference_names(variant, {"n": 1000})["m"] == 3
    for n in (1, 2, 3, 5, 77):
        assert 1 <= task.names({"n": n}, "fp32")["m"] <= min(n, 4)


@pytest.mark.parametrize(
    "body, match",
    [
        ("return {'m': int(np.random.randint(1, 1000000))}", "second call"),  # global random state: not deterministic
        ("return {'n': 2}", "already a size parameter"),
        ("return {'m': 1.5}", "not an integer"),
        ("return [1]", "expected a dict"),
    ],
)
def test_a_bad_derive_is_a_task_error(tmp_path, body, match):
    ref = (FIXTURE / "reference.py").read_text()
    start = ref.index('    n = int(names["n"])\n    return {"m"')
    end = ref.index("\n\n\ndef generate")
    path = _copy_fixture(tmp_path, reference=ref[:start] + "    " + body + ref[end:])
    with pytest.raises(TaskError, match=match):
        load_task_file(path)


# -- tolerance -----------------------------------------------------------------------------------


def test_tolerance_for_resolves_expressions_per_size_and_per_output(task):
    fp32, bf16 = task.variant("fp32"), task.variant("bf16")
    n1000, n4099 = task.names({"n": 1000}, "fp32"), task.names({"n": 4099}, "fp32")
    assert (n1000["m"], n4099["m"]) == (3, 1)
    assert fp32.tolerance_for("s", n1000) == Tolerance(pytest.approx(1e-7 * 1000 / 3), 0.0, "max_abs")
    assert fp32.tolerance_for("s", n4099) == Tolerance(pytest.approx(1e-7 * 4099), 0.0, "max_abs")
    assert fp32.tolerance_for("y", n4099) == Tolerance(1e-6, 1e-6, None)  # no override: the task's
    assert bf16.tolerance_for("s", task.names({"n": 1000}, "bf16")).rtol == 1e-2
    assert bf16.tolerance_for("idx", task.names({"n": 1000}, "bf16")) == Tolerance(1e-2, 1e-2, None)


def test_scale_max_abs_multiplies_atol_by_the_largest_reference_magnitude():
    ref = np.array([100.0, -200.0, 0.0])
    tol = Tolerance(1e-3, 0.0, "max_abs")  # atol' = 0.2
    assert compare("o", ref + np.array([0.19, -0.19, 0.19]), ref, tol).passed
    bad = compare("o", ref + np.array([0.0, 0.0, 0.21]), ref, tol)
    assert not bad.passed and "atol=0.2 (= 0.001*max|ref|)" in bad.message
    assert not compare("o", ref + np.array([0.0, 0.0, 0.21]), ref, Tolerance(1e-3, 0.0)).passed
    assert not compare("o", ref + np.array([0.0, 0.0, 0.0011]), ref, Tolerance(1e-3, 0.0)).passed


# -- strict validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "edit, match",
    [
        (
            ('x = { role = "input", length = "n"', 'x = { role = "input", lenght = "n"'),
            r"args.x: unknown key 'lenght' \(did you mean 'length'\?\)",
        ),
        (('s = { role = "output"', 's = { rol = "output", role = "output"'), r"args.s: unknown key 'rol'"),
        (('memory = { fp32 = "host", bf16 = "device" }, refresh', 'memroy = "host", refresh'), r"unknown key 'memroy'"),
        (
            ("fp32 = { atol = 1e-6, rtol = 1e-6 }", 'fp32 = { atol = 1e-6, rtol = 1e-6, sacle = "max_abs" }'),
            r"\[tolerance\] fp32: unknown key 'sacle'",
        ),
        (
            ('fp32 = { atol = "1e-7*n/m"', 'fp32 = { atoll = "1e-7*n/m", atol = "1e-7*n/m"'),
            r"tolerance.outputs.s\] fp32: unknown key 'atoll'",
        ),
        (("[tolerance.outputs.s]", "[tolerance.outputs.z]"), r"tolerance.outputs.z\] names no output"),
        (("[tolerance.outputs.s]", "[tolerance.output.s]"), r"\[tolerance\]: unknown key 'output' \(did you mean 'outputs'\?\)"),
        (('scale = "max_abs" }\nbf16', 'scale = "max" }\nbf16'), r"scale 'max' is not one of max_abs"),
        (('atol = "1e-7*n/m"', 'atol = "1e-7*n/q"'), r"unknown name 'q'"),
        (('atol = "1e-7*n/m"', 'atol = "-1e-7*n/m"'), r"must be finite and >= 0"),
        (('refresh = "uniform(-2, 2)"', 'refresh = "kep"'), r"args.h.refresh: must be \"keep\", \"shuffle\" or a draw spec"),
        (('refresh = "uniform(-2, 2)"', 'refresh = "uniform(-2)"'), r"uniform takes 2 parameter"),
        (('draw = "uniform(-1, 1)"', 'draw = "uniform(-1, 1"'), r"cannot parse draw"),
        (('s = { role = "output", length = "m"', 's = { role = "output", length = "m", refresh = "keep"'), r"args.s: .*apply to inputs"),
        (
            ('role = { fp32 = "accumulate", bf16 = "output" }', 'role = { fp32 = "accumulate" }'),
            r"args.y.role has no entry for precision bf16",
        ),
        (
            ('role = { fp32 = "accumulate", bf16 = "output" }', 'role = { fp32 = "accumulate", fp16 = "output" }'),
            r"unknown precision 'fp16'",
        ),
        (
            ('role = { fp32 = "accumulate", bf16 = "output" }', 'role = { fp32 = "accumulate", bf16 = "outptu" }'),
            r"'outptu' \(bf16\) is not one of",
        ),
        (
            ('memory = { fp32 = "host", bf16 = "device" } }', 'memory = "hots" }'),
            r"args.y.memory 'hots' \(fp32\) is not one of device, host",
        ),
        (
            ('m = { role = "scalar", value = "m" }', 'm = { role = "scalar", value = "m", memory = "host" }'),
            r"memory` applies to buffers only",
        ),
        (("[cost]\ncomplexity", '[cost]\ncomplexty = "n"\ncomplexity'), r"\[cost\]: unknown key 'complexty'"),
        (("[notes]", "[note]"), r"unknown key 'note' \(did you mean 'notes'\?\)"),
        (('param = { bf16 = "sums" }', 'param = { bf16 = "sum" }'), r"bf16 prototype parameters .* differ from args"),
        (('param = { bf16 = "sums" }', 'param = { bf32 = "sums" }'), r"args.s.param: unknown precision 'bf32'"),
    ],
)
def test_misspelled_or_invalid_keys_are_task_errors_naming_them(tmp_path, edit, match):
    with pytest.raises(TaskError, match=match):
        load_task_file(_copy_fixture(tmp_path, edit))


def test_the_fixture_itself_loads_from_a_copy(tmp_path):
    assert load_task_file(_copy_fixture(tmp_path)).name == "format_demo"


# -- check() -------------------------------------------------------------------------------------


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_check_hook_accepts_the_rounded_reference_and_rejects_cheats(task, precision, seed):
    variant, _, x, names, ref = _case(task, precision, {"n": 1000}, seed)
    dtypes = {o: variant.param(o).dtype for o in variant.outputs()}
    rounded = {o: data.to_float64(data.to_storage(ref[o], dtypes[o]), dtypes[o]) for o in ref}

    def ok(**over):
        return all(c.passed for c in check_outputs(variant, dict(rounded, **over), ref, x, names))

    assert ok()
    assert not ok(y=np.zeros(1000)) and not ok(s=np.full(ref["s"].size, np.nan))
    assert not ok(s=ref["s"][::-1] if ref["s"].size > 1 else ref["s"] + 1)
    assert not ok(idx=np.array([-1])) and not ok(idx=np.array([1000]))
    other = int(np.argmin(np.abs(x["x"])))
    assert not ok(idx=np.array([other]))


def test_check_hook_accepts_any_index_of_a_tie(task):
    variant, _, x, names, ref = _case(task, "fp32", {"n": 1000})
    x = dict(x)
    x["x"] = x["x"].copy()
    x["x"][[10, 20]] = [-1.5, 1.5]  # |x| ties at the maximum: both indices are valid
    ref = {k: np.asarray(v, dtype=np.float64) for k, v in task.reference_module.reference(x, names, "fp32", None).items()}
    assert ref["idx"][0] == 10
    got = dict(ref, idx=np.array([20]))
    assert not compare("idx", got["idx"], ref["idx"], Tolerance(0, 0)).passed  # elementwise would refuse it
    assert all(c.passed for c in check_outputs(variant, got, ref, x, names))  # the task's check() accepts it


def test_output_checks_use_the_check_hook_and_still_find_unwritten_elements_outside_a_sample(task, tmp_path):
    variant, _stored, x, _names, ref = _case(task, "fp32", {"n": 1000})
    sample = {"y": np.array([0, 5, 999]), "s": np.arange(ref["s"].size), "idx": np.array([0])}
    case = Case(0, {"n": 1000}, [(1, "check", tmp_path)], sample=sample)
    want = {k: v[sample[k]] for k, v in ref.items()}
    seen = {}
    module = task.reference_module
    original = module.check

    def spy(got, ref_, x_, p, precision, tolerance):
        seen["p"], seen["x"] = p, x_
        return original(got, ref_, x_, p, precision, tolerance)

    def saved(y, unwritten_y=0):  # what the driver saves at a sampled size: the sample, and a count of the rest
        return {
            name: (data.to_storage(values, variant.param(name).dtype)[sample[name]], unwritten_y if name == "y" else 0)
            for name, values in (("y", y), ("s", ref["s"]), ("idx", ref["idx"]))
        }

    module.check = spy
    try:
        cmps = compare_outputs(variant, case, saved(ref["y"]), want, lambda: x)
        assert all(c.passed for c in cmps), [c.message for c in cmps]
        assert np.array_equal(seen["p"]["sample"]["y"], sample["y"]) and np.array_equal(seen["x"]["h"], x["h"])
        cmps = compare_outputs(variant, case, saved(ref["y"], unwritten_y=1), want, lambda: x)  # a NaN outside the sample
        assert not all(c.passed for c in cmps) and any("y: 1 elements are NaN" in c.message for c in cmps)
    finally:
        module.check = original


def _settings():
    from settings import HarnessSettings

    return HarnessSettings()


# -- host buffers: plan, driver, runtime ---------------------------------------------------------


def test_plan_lines_carry_role_and_memory_per_precision(task, tmp_path):
    params = {"n": 1000}
    lines = {}
    for precision in ("fp32", "bf16"):
        variant = task.variant(precision)
        text = _plan(variant, [Case(0, params, [(1, "check", tmp_path / "c0")])], tmp_path, _settings()).to_text()
        lines[precision] = [line for line in text.splitlines() if line.split()[0] in ("buffer", "scalar", "refresh")]
    # buffer ARG COUNT ROLE MEMORY; roles 0 input 1 output 2 accumulate; memory 0 device 1 host;
    # refresh ARG DRAW P0 P1 (1 = uniform) for the inputs redrawn between timed calls
    assert lines["fp32"] == [
        "buffer 2 1000 0 0",
        "refresh 2 1 -1.0 1.0",
        "buffer 3 1000 0 1",
        "refresh 3 1 -2.0 2.0",
        "buffer 4 1000 2 1",
        "buffer 5 3 1 0",
        "buffer 6 1 1 0",
        "scalar 0 1000.0",
        "scalar 1 3.0",
    ]
    assert lines["bf16"] == [
        "buffer 2 1000 0 0",
        "refresh 2 1 -1.0 1.0",
        "buffer 3 1000 0 0",
        "refresh 3 1 -2.0 2.0",
        "buffer 4 1000 1 0",
        "buffer 5 3 1 0",
        "buffer 6 1 1 0",
        "scalar 0 1000.0",
        "scalar 1 3.0",
    ]


@requires_nvcc
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_host_memory_driver_compiles(task, precision, harness_settings):
    variant = task.variant(precision)
    base = cc.compile_baseline(variant, harness_settings)
    exe = cc.build_driver(variant, driver_source(variant, has_candidate=False), base, None, harness_settings)
    assert exe.exists()


# -- on the GPU: host buffers end to end ---------------------------------------------------------

HOST_CHEATS = {
    # writes one float past the end of the host output y
    "past_end": ("cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);", "cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost); y[n] = 1.0f;"),
    # scribbles on the host input h after using it
    "input": (
        "cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);",
        "cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost); ((float*)h)[0] += 1.0f;",
    ),
    # leaves y's last element as the harness zeroed it (y is an accumulator in FP32)
    "unwritten": ("cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);", "cudaMemcpy(y, dy, bytes - sizeof(float), cudaMemcpyDeviceToHost);"),
}


def _candidate(name: str) -> str:
    text = (FIXTURE / "baseline.cu").read_text()
    old, new = HOST_CHEATS[name]
    text = text.replace(old, new).replace("void format_demo(", "void format_demo_optimized(")
    return text.replace("void format_demo_bf16(", "void format_demo_bf16_optimized(")


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_fixture_baseline_passes_with_host_buffers_on_the_gpu(task, precision, harness_settings):
    result = evaluate(task, precision, None, "paper", settings=harness_settings, timing=True)
    assert result.verdict == Verdict.ok, result.message
    assert all(row.passed and row.baseline is not None for row in result.rows)


@pytest.mark.gpu
@pytest.mark.parametrize(
    "name, verdict, words",
    [
        ("past_end", Verdict.runtime_error, "past the end of argument y"),
        ("input", Verdict.wrong_answer, "modified input argument h"),
        ("unwritten", Verdict.wrong_answer, "y:"),
    ],
)
def test_host_buffer_cheats_are_caught_on_the_gpu(task, name, verdict, words, harness_settings):
    result = evaluate(task, "fp32", _candidate(name), [{"n": 1000}], settings=harness_settings, timing=False)
    assert result.verdict == verdict, result.message
    assert words in result.message


def test_comparison_failure_helper():
    c = Comparison.failure("idx: duplicate index 3", checked=5)
    assert not c.passed and c.checked == 5 and c.max_abs_err == float("inf")


@requires_nvcc
@pytest.mark.parametrize("name", sorted(HOST_CHEATS))
def test_host_buffer_cheat_candidates_compile_and_pass_the_symbol_checks(task, name, harness_settings):
    from bench_tasks.harness import source as src

    outcome = cc.compile_candidate(task.variant("fp32"), src.prepare(_candidate(name), harness_settings.max_source_bytes), harness_settings)
    assert outcome.ok, outcome.message


def test_the_driver_names_buffers_by_argument_so_files_match_the_data(task):
    # The runtime names dataset and output files after the argument table; an argument named otherwise
    # in one precision's prototype (s is `sums` in BF16) keeps its data name there.
    text = driver_source(task.variant("bf16"), has_candidate=True)
    assert '{"s", cm::BF16, 1}' in text and '"sums"' not in text
    assert "format_demo_bf16_optimized(" in text
