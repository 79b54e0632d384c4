"""The labelled kernels: manifest, compilation, and (once real H200 CSVs are committed under
tests/fixtures/ncu/labelled/<kernel>.csv) the classifiers' answers on them."""

import shutil
import subprocess

import pytest

from profiling.classify import Bottleneck, classify
from profiling.labelled import HERE, accuracy, build, load_manifest, score_dir
from profiling.parse import parse_report
from profiling.report import ProfileReport

from .helpers import LABELLED_FIXTURES

MANIFEST = {k.name: k for k in load_manifest()}
REAL_CSVS = sorted(LABELLED_FIXTURES.glob("*.csv")) if LABELLED_FIXTURES.is_dir() else []


def test_manifest_spreads_over_classes_and_precisions():
    kernels = list(MANIFEST.values())
    assert len(kernels) >= 12
    for b in Bottleneck:
        for p in ("fp32", "bf16"):
            assert any(k.expected == b and k.precision == p for k in kernels), (b, p)
    assert all(k.command.split()[0] == "./labelled" and k.command.split()[1] == k.name for k in kernels)


def test_manifest_matches_the_program_source():
    source = (HERE / "labelled.cu").read_text()
    names_block = source[source.index("static const char* NAMES[]") :]
    for name in MANIFEST:
        assert f'"{name}"' in names_block, name
        assert f'"{name}"' in source[: source.index("static const char* NAMES[]")], f"{name} has no runner branch"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_labelled_program_compiles_for_sm90(tmp_path):
    binary = build(tmp_path)
    assert binary.exists()
    listed = subprocess.run([str(binary), "--list"], capture_output=True, text=True, timeout=30).stdout.split()
    assert sorted(listed) == sorted(MANIFEST)


def test_scoring_reports_missing_csvs(tmp_path):
    scores = score_dir(tmp_path)
    assert all(s.report is None and s.error.startswith("no ") for s in scores)
    assert accuracy(scores, "sol") == (0, 0)


NO_REAL = "no real H200 profiles in tests/fixtures/ncu/labelled/ yet: run scripts/device_profiling.sh"


@pytest.mark.parametrize(
    "csv", REAL_CSVS or [pytest.param(None, marks=pytest.mark.skip(reason=NO_REAL))], ids=[p.stem for p in REAL_CSVS] or ["none"]
)
def test_sol_rule_on_real_labelled_profiles(csv):
    kernel = MANIFEST.get(csv.stem)
    if kernel is None:
        pytest.fail(f"{csv.name} names no kernel of profiling/labelled/manifest.toml")
    report = ProfileReport.from_kernels(parse_report(csv.read_text()))
    got = classify(report, "sol")
    assert got.bottleneck == kernel.expected, f"{kernel.name}: expected {kernel.expected.value}, sol says {got.reason}"


@pytest.mark.skipif(not REAL_CSVS, reason=NO_REAL)
def test_sol_rule_is_at_least_as_accurate_as_published():
    scores = score_dir(LABELLED_FIXTURES)
    sol_ok, n = accuracy(scores, "sol")
    pub_ok, _ = accuracy(scores, "published")
    assert n == len(REAL_CSVS) and sol_ok >= pub_ok
