"""Inputs redrawn between timed calls (no GPU): the device generator equals its numpy twin bit for bit,
the draws follow each input's spec, every task refreshes something, and the secret choices that the
driver gets (refresh key, checked pairs) come from the parent's secrets only."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bench_tasks import all_tasks, load_task
from bench_tasks.harness.compile import RUNTIME_DIR
from bench_tasks.harness.evaluate import _cases, _plan
from bench_tasks.harness.plan import Plan, choose_check_pairs
from bench_tasks.refresh import (
    KIND_CODE,
    RefreshDraw,
    parse_draw,
    philox4x32_10,
    refresh_draw,
    refresh_values,
    refreshed_args,
    replayable_variants,
    shuffle_indices,
    shuffled_values,
)
from bench_tasks.spec import TaskError, load_task_file
from settings import HarnessSettings
from tests.conftest import requires_nvcc

HOST_TEST = Path(__file__).parent / "refresh" / "refresh_host.cu"

# Random123's published known-answer vectors for Philox4x32-10 (its tests/kat_vectors).
KAT = [
    ((0, 0, 0, 0), 0, (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, 0xFFFFFFFFFFFFFFFF, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0x299F31D0 << 32) | 0xA4093822, (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr, key, want", KAT)
def test_the_numpy_philox_gives_the_published_known_answers(ctr, key, want):
    got = philox4x32_10(tuple(np.array([c], dtype=np.uint64) for c in ctr), key)
    assert tuple(int(w[0]) for w in got) == want


@pytest.fixture(scope="session")
def host_generator(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("refresh") / "refresh_host"
    nvcc = os.environ.get("CUDAMASTER_HARNESS__NVCC", "nvcc")
    subprocess.run(
        [nvcc, "-std=c++17", "-O2", "-gencode=arch=compute_90,code=sm_90", f"-I{RUNTIME_DIR}", str(HOST_TEST), "-o", str(exe)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return exe


# (storage type, draw): every draw the tasks use, on every storage type it can fill.
DRAWS = [
    ("float32", "uniform(-1, 1)"),
    ("float32", "uniform(0.5, 2)"),
    ("float32", "normal(0, 1)"),
    ("float32", "normal(3.5, 0.25)"),
    ("float32", "randint(-5, 7)"),
    ("float32", "const(0.3)"),
    ("bfloat16", "uniform(-1, 1)"),
    ("bfloat16", "normal(0, 2)"),
    ("bfloat16", "const(1.5)"),
    ("float64", "uniform(-3, 1e-3)"),
    ("float64", "normal(-1, 7)"),
    ("int32", "randint(0, 2048)"),
    ("int32", "randint(-1000000, 1000000)"),
    ("int32", "const(4)"),
    ("int64", "randint(0, 4294967296)"),
    ("uint32", "randint(0, 100)"),
    ("uint64", "randint(3, 9)"),
]


@requires_nvcc
@pytest.mark.slow
def test_the_generator_in_host_code_equals_its_numpy_twin_bit_for_bit(host_generator):
    rng = np.random.default_rng(20240613)
    lines, expected = [], []
    for dtype, spec in DRAWS:
        draw = parse_draw(spec)
        for _ in range(40):
            key = int(rng.integers(0, 2**64, dtype=np.uint64))
            call = int(rng.integers(0, 2**32, dtype=np.uint64)) if rng.random() < 0.5 else int(rng.integers(1, 3000))
            stream = int(rng.integers(0, 2**32, dtype=np.uint64)) if rng.random() < 0.3 else int(rng.integers(0, 4096))
            index = np.concatenate([rng.integers(0, 2**40, 12, dtype=np.uint64), rng.integers(0, 300, 12).astype(np.uint64)])
            values = refresh_values(dtype, draw, key, call, stream, index)
            bits = values.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[values.itemsize])
            for i, b in zip(index, bits, strict=True):
                lines.append(f"V {KIND_CODE[dtype]} {draw.code} {draw.p0!r} {draw.p1!r} {key} {call} {stream} {int(i)}")
                expected.append(f"{int(b):x}")
    out = subprocess.run([str(host_generator)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True, timeout=120)
    got = out.stdout.split()
    assert len(got) == len(expected) == len(DRAWS) * 40 * 24
    mismatches = [(line, g, e) for line, g, e in zip(lines, got, expected, strict=True) if g != e]
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[0]}"


@requires_nvcc
@pytest.mark.slow
def test_the_shuffle_in_host_code_equals_its_numpy_twin(host_generator):
    rng = np.random.default_rng(7)
    lines, expected = [], []
    for n in (1, 2, 3, 4, 5, 17, 1000, 4097, 65536, 100003, 2**31 + 11, 2**40 + 3):
        key = int(rng.integers(0, 2**64, dtype=np.uint64))
        call, stream = int(rng.integers(1, 3000)), int(rng.integers(0, 2**32, dtype=np.uint64))
        index = np.unique(rng.integers(0, n, 40, dtype=np.uint64))
        for i, j in zip(index, shuffle_indices(n, key, call, stream, index), strict=True):
            lines.append(f"S {n} {call} {stream} {key} {int(i)}")
            expected.append(f"{int(j):x}")
    out = subprocess.run([str(host_generator)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == expected


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1000, 4097, 100003])
def test_a_shuffle_is_a_permutation_that_changes_with_the_call(n):
    a = shuffle_indices(n, 99, 1, 5, np.arange(n))
    assert sorted(a.tolist()) == list(range(n))
    if n >= 64:
        b = shuffle_indices(n, 99, 2, 5, np.arange(n))
        assert np.mean(a == b) < 0.1 and np.mean(a == np.arange(n)) < 0.1
        values = np.random.default_rng(n).random(n)
        assert np.isclose(shuffled_values(values, 99, 1, 5, np.arange(n)).sum(), values.sum())  # the multiset stays


def test_each_draw_follows_its_spec():
    index = np.arange(200_000, dtype=np.uint64)
    key = 0x0123456789ABCDEF
    u = refresh_values("float64", parse_draw("uniform(-2, 3)"), key, 1, 0, index)
    assert u.min() >= -2 and u.max() <= 3 and abs(u.mean() - 0.5) < 0.02 and abs(u.std() - 5 / 12**0.5) < 0.02
    z = refresh_values("float64", parse_draw("normal(1.5, 0.5)"), key, 1, 0, index)
    assert abs(z.mean() - 1.5) < 0.01 and abs(z.std() - 0.5) < 0.01 and abs(z - 1.5).max() < 0.5 * 4.9
    assert np.mean(np.abs(z - 1.5) > 1.0) == pytest.approx(0.0455, abs=0.004)  # about 4.6 % beyond 2 sigma, as a normal
    k = refresh_values("int32", parse_draw("randint(-3, 5)"), key, 1, 0, index)
    assert set(np.unique(k)) == set(range(-3, 5))
    c = refresh_values("float32", parse_draw("const(0.25)"), key, 1, 0, index)
    assert np.all(c == np.float32(0.25))
    b = refresh_values("bfloat16", parse_draw("uniform(-1, 1)"), key, 1, 0, index[:1000])
    f = refresh_values("float32", parse_draw("uniform(-1, 1)"), key, 1, 0, index[:1000])
    from bench_tasks.data import to_bf16_bits

    assert np.array_equal(b, to_bf16_bits(f))  # bf16: the float32 value rounded to nearest even


def test_calls_streams_and_keys_give_independent_values():
    index = np.arange(4096, dtype=np.uint64)
    draw = parse_draw("uniform(-1, 1)")
    base = refresh_values("float32", draw, 7, 1, 0, index)
    for other in (
        refresh_values("float32", draw, 7, 2, 0, index),
        refresh_values("float32", draw, 7, 1, 1, index),
        refresh_values("float32", draw, 8, 1, 0, index),
    ):
        assert np.mean(base == other) < 0.01
        assert abs(np.corrcoef(base, other)[0, 1]) < 0.06
    assert np.array_equal(base, refresh_values("float32", draw, 7, 1, 0, index))  # a pure function of its counter


def test_refresh_draw_defaults_to_the_draw_and_keeps_generated_structure():
    spmv = load_task("spmv_csr").variant("fp32")
    assert refresh_draw(spmv, "x") == RefreshDraw("uniform", -1.0, 1.0)
    assert refresh_draw(spmv, "values") == RefreshDraw("uniform", -1.0, 1.0)  # generate()d, with refresh = "uniform(-1, 1)"
    assert refresh_draw(spmv, "col_indices") is None and refresh_draw(spmv, "row_offsets") is None
    assert refresh_draw(spmv, "y") is None  # an output
    assert refreshed_args(spmv) == ["values", "x"]


def test_no_task_has_every_input_kept():
    # Timed calls of such a task would all see the same inputs, and a cache could replay them.
    assert replayable_variants(all_tasks()) == []


@pytest.mark.parametrize(
    "spec, words",
    [
        ("uniform(1)", "takes 2 parameter"),
        ("gauss(0, 1)", "unknown draw"),
        ("randint(0.5, 3)", "integer bounds"),
        ("const(1, 2)", "takes 1 parameter"),
        ("uniform(a, b)", "must be numbers"),
        ("uniform", "cannot parse"),
    ],
)
def test_bad_draws_are_clear_errors(spec, words):
    with pytest.raises(TaskError, match=words):
        parse_draw(spec)


def _toml_with(tmp_path, x_line: str, where: str = "one") -> Path:
    text = (Path(load_task("vector_add").directory) / "task.toml").read_text()
    text = text.replace('A = { role = "input", length = "N", draw = "uniform(-1, 1)" }', x_line)
    directory = tmp_path / where / "vector_add"
    directory.mkdir(parents=True)
    for name in ("reference.py", "baseline.cu"):
        (directory / name).write_text((Path(load_task("vector_add").directory) / name).read_text())
    (directory / "task.toml").write_text(text)
    return directory / "task.toml"


@pytest.mark.parametrize(
    "line, words",
    [
        ('A = { role = "input", length = "N", draw = "uniform(-1, 1)", refresh = "sometimes" }', 'must be "keep", "shuffle" or a draw'),
        ('A = { role = "input", length = "N", draw = "uniform(-1, 1)", refresh = "uniform(1)" }', "takes 2 parameter"),
        ('A = { role = "output", length = "N", refresh = "keep" }', "apply to inputs"),
        ('A = { role = "input", length = "N", draw = "uniform(-1, 1)", refresh = "randint(0.5, 2)" }', "integer bounds"),
    ],
)
def test_a_bad_refresh_in_a_task_file_names_the_argument(tmp_path, line, words):
    with pytest.raises(TaskError, match=words):
        load_task_file(_toml_with(tmp_path, line))


def test_a_refresh_spec_in_a_task_file_overrides_the_draw(tmp_path):
    task = load_task_file(_toml_with(tmp_path, 'A = { role = "input", length = "N", draw = "uniform(-1, 1)", refresh = "normal(0, 2)" }'))
    assert refresh_draw(task.variant("fp32"), "A") == RefreshDraw("normal", 0.0, 2.0)
    task = load_task_file(_toml_with(tmp_path, 'A = { role = "input", length = "N", draw = "uniform(-1, 1)", refresh = "keep" }', "two"))
    assert refreshed_args(task.variant("fp32")) == ["B"]


def test_checked_pairs_cover_every_stretch_of_the_timing_loop():
    for seed in range(200):
        pairs = choose_check_pairs(10, 2000, random.Random(seed))
        assert pairs == sorted(set(pairs)) and all(0 <= j < 2000 for j in pairs)
        first = [j for j in pairs if j < 10]
        assert len(first) == 2 and first[1] == first[0] + 1  # consecutive: catches work done on every other call
        for lo, hi in ((10, 40), (40, 160), (160, 640), (640, 2000)):
            assert sum(lo <= j < hi for j in pairs) == 1
    assert choose_check_pairs(3, 3, random.Random(1)) in ([0, 1],)


def test_the_checked_pairs_and_the_key_come_from_the_parents_secrets(monkeypatch, tmp_path):
    # Two evaluations with the same seeds, sizes and fresh seed: different secret choices, so nothing
    # recorded or visible before the run (seeds, sizes, the fresh seed) determines them...
    settings = HarnessSettings(cache_dir=tmp_path / "cache")
    variant = load_task("matrix_mul").variant("fp32")
    sizes = variant.task.size_list("paper")
    a = _cases(variant, sizes, [1, 2, 3], 4242, tmp_path, settings, True)
    b = _cases(variant, sizes, [1, 2, 3], 4242, tmp_path, settings, True)
    assert [c.check_pairs for c in a] != [c.check_pairs for c in b]
    sampled = [i for i, c in enumerate(a) if c.sample]
    assert sampled and any(not np.array_equal(a[i].sample["C"], b[i].sample["C"]) for i in sampled)
    # ... and they come from the operating system's entropy: pinned, they repeat.
    monkeypatch.setattr("secrets.SystemRandom", lambda: random.Random(5))
    c = _cases(variant, sizes, [1, 2, 3], 1, tmp_path, settings, True)
    d = _cases(variant, sizes, [1, 2, 3], 2, tmp_path, settings, True)
    assert [x.check_pairs for x in c] == [x.check_pairs for x in d]
    assert all(np.array_equal(x.sample["C"], y.sample["C"]) for x, y in zip(c, d, strict=True) if x.sample)


def test_the_plan_gives_the_driver_the_key_and_the_pairs_and_nothing_they_derive_from(tmp_path):
    settings = HarnessSettings(cache_dir=tmp_path / "cache", reference_full_elements=3000)  # the third size is sampled
    variant = load_task("spmv_csr").variant("bf16")
    cases = _cases(variant, variant.task.size_list("paper")[:3], [1, 2, 3], 77, tmp_path, settings, True)
    key = 0xFEEDFACE12345678
    plan = _plan(variant, cases, tmp_path, settings, refresh_key=key)
    text = plan.to_text()
    assert Plan.from_text(text) == plan  # the round trip
    assert Plan.from_text(" ".join(text.split())) == plan  # tokens, whatever the layout (as the C++ reader)
    key_lines = [line for line in text.splitlines() if str(key & 0xFFFFFFFF) in line.split()]
    assert key_lines == [f"refresh_key {key & 0xFFFFFFFF} {key >> 32}"]
    assert "77" not in text.split()  # the fresh seed is not in the plan (its dataset directory is)
    for case, cp in zip(cases, plan.cases, strict=True):
        assert cp.check_pairs == case.check_pairs
        draws = {variant.prototype.params[b.arg].name: b.draw for b in cp.buffers}
        assert draws == {"values": (1, -1.0, 1.0), "col_indices": None, "row_offsets": None, "x": (1, -1.0, 1.0), "y": None}
    (y,) = [b for b in plan.cases[2].buffers if b.role == 1]
    assert y.sample is not None and y.sample[0] == cases[2].sample["y"].size and cases[1].sample is None


def test_a_plan_with_an_unknown_token_or_a_short_line_is_refused():
    with pytest.raises(ValueError, match="unknown plan token"):
        Plan.from_text("results /r\noutdir /o\ncase 0\nbogus 1\n")
    with pytest.raises(ValueError, match="ends early"):
        Plan.from_text("results /r\noutdir /o\ncase 0\nbuffer 0 12\n")
    with pytest.raises(ValueError, match="whitespace"):
        Plan(results=Path("/a b"), outdir=Path("/o")).to_text()
