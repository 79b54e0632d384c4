"""The suite of examples/pytorch_suite (issue 42, item 5): its README lists every file with the verdict expected, at
least 20 tasks of every kind the issue names and the refusals; `bench import` of a subset (one of each unusual kind:
an int64 output, buffers, two outputs of two dtypes, a random forward, a non-tensor output) gives those verdicts.
A subset keeps the test cheap (each file is a sandboxed torch start, ~3.5 s here); scripts/pytorch_suite_import.py
records the whole folder's import in docs/results/."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

SUITE = Path(__file__).parents[2] / "examples" / "pytorch_suite"
SUBSET = (
    "05_argmax.py",
    "11_batch_norm_eval.py",
    "26_topk_values_indices.py",
    "91_refused_rand_in_forward.py",
    "92_refused_non_tensor_output.py",
)


def expected() -> dict[str, str]:
    """file -> "task" or "refused (<kind>)", from the README's table."""
    rows = re.findall(r"^\| `([^`]+\.py)` \| [^|]+ \| ([^|]+) \|$", (SUITE / "README.md").read_text(), flags=re.M)
    return {name: verdict.strip() for name, verdict in rows}


def test_the_readme_lists_every_file_and_the_suite_covers_the_issues_kinds():
    verdicts = expected()
    assert set(verdicts) == {p.name for p in SUITE.glob("*.py")}
    assert sum(v == "task" for v in verdicts.values()) >= 20
    assert {v for v in verdicts.values() if v != "task"} == {"refused (random)", "refused (outputs)"}
    for kind in ("softmax", "norm", "matmul", "bmm", "conv", "gelu", "mean", "topk", "mlp"):
        assert any(kind in name for name in verdicts), kind


def test_bench_import_of_a_subset_gives_the_expected_verdicts(tmp_path):
    pytest.importorskip("torch")  # the optional extra: CI installs its CPU build
    from typer.testing import CliRunner

    from app.cli import cli

    folder = tmp_path / "suite"
    folder.mkdir()
    for name in SUBSET:
        shutil.copy(SUITE / name, folder / name)
    out = CliRunner().invoke(cli, ["bench", "import", str(folder), "--json"])
    assert out.exit_code == 0, out.output
    listed = json.loads(out.stdout)
    got = {Path(t["file"]).name: "task" for t in listed["tasks"]} | {
        Path(r["file"]).name: f"refused ({r['kind']})" for r in listed["refused"]
    }
    assert got == {name: expected()[name] for name in SUBSET}
    prototypes = {t["name"]: t["prototype"] for t in listed["tasks"]}
    assert prototypes["pt_05_argmax"] == 'extern "C" void pt_05_argmax(int64_t* out, const float* x, int batch_size, int dim)'
    assert (
        "const float* bn_running_mean, const float* bn_running_var, const int64_t* bn_num_batches_tracked"
        in prototypes["pt_11_batch_norm_eval"]
    )
    assert prototypes["pt_26_topk_values_indices"].startswith(
        'extern "C" void pt_26_topk_values_indices(float* out0, int64_t* out1, const float* x'
    )
