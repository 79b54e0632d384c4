"""scripts/campaign_h200.py --candidates (issue 39): the scripted coder answers each variant with a directory's
kernel; through the agent (R=1, D=0, real compile and link, FAKE GPU timings) every kernel of the honest corpus
(tests/bench/honest) and every BF16 twin (tests/bench/bf16_twins) ends as the job's correct kernel: the agent
refuses nothing the harness accepts (the 6 published kernels it refused were elu FP32/BF16, selu FP32, sigmoid
BF16, cross_entropy_loss FP32, matrix_copy BF16, and top_k BF16 at link time; the corpus now holds each variation)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import requires_nvcc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from campaign_h200 import KnownKernelModel, candidate_kernel, candidate_variants  # noqa: E402

BENCH = ROOT / "tests" / "bench"
CORPUS = tomllib.loads((BENCH / "honest" / "manifest.toml").read_text())["kernel"]


def _kernels() -> dict[tuple[str, str], list[Path]]:
    """Every honest-corpus kernel and BF16 twin, by variant."""
    found: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for k in CORPUS:
        found[(k["task"], k["precision"])].append(BENCH / "honest" / k["file"])
    for twin in sorted((BENCH / "bf16_twins").glob("*.cu")):
        found[(twin.stem, "bf16")].append(twin)
    return found


def _layers(root: Path) -> list[Path]:
    """Directories in `bench run --candidates` layout, each with at most one kernel per variant, that together hold them all."""
    dirs: list[Path] = []
    for (task, precision), files in sorted(_kernels().items()):
        for i, path in enumerate(files):
            if i == len(dirs):
                dirs.append(root / f"layer{i}")
            target = dirs[i] / precision / (task if precision == "fp32" else f"{task}_bf16")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.with_suffix(".cu").write_text(path.read_text())
    return dirs


def test_the_scripted_coder_answers_with_the_directorys_kernel(tmp_path):
    (tmp_path / "bf16").mkdir()
    (tmp_path / "vector_add.cu").write_text("// fp32 kernel\n")
    (tmp_path / "bf16" / "elu_bf16.cu").write_text("// bf16 kernel\n")
    assert candidate_variants(tmp_path) == ["elu/bf16", "vector_add/fp32"] or sorted(candidate_variants(tmp_path)) == [
        "elu/bf16",
        "vector_add/fp32",
    ]
    assert candidate_kernel(tmp_path, "elu", "bf16") == "// bf16 kernel\n" and candidate_kernel(tmp_path, "elu", "fp32") is None
    model = KnownKernelModel(tmp_path)
    ask = {"model": "scripted-coder", "messages": [{"role": "user", "content": "Write elu_bf16_optimized(...)"}]}
    assert "```cuda\n// bf16 kernel\n```" in model.reply_for(ask)
    ask["messages"][0]["content"] = "Write relu_optimized and RELU_optimized"
    assert model.reply_for(ask).startswith("no kernel for RELU/fp32")


@requires_nvcc
@pytest.mark.slow
@pytest.mark.timeout(3000)
def test_every_honest_kernel_and_bf16_twin_ends_correct_through_the_agent_with_FAKE_gpu(tmp_path, harness_settings):
    env = dict(os.environ, CUDAMASTER_HARNESS__CACHE_DIR=str(harness_settings.cache_dir))  # the compile tests' objects
    script = [sys.executable, str(ROOT / "scripts" / "campaign_h200.py"), "--fake-gpu", "--poll", "2", "--max-in-flight", "2"]
    total = 0
    for layer in _layers(tmp_path / "kernels"):
        out = tmp_path / f"out-{layer.name}"
        run = subprocess.run(
            [*script, "--out", str(out), "--candidates", str(layer)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1400,
        )
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
        figures = json.loads((out / "figures.json").read_text())
        wanted = candidate_variants(layer)
        ended = {job["variant"]: job["status"] for job in figures["jobs"]}
        assert sorted(ended) == sorted(wanted) and figures["candidates"] == str(layer)
        refused = {v: s for v, s in ended.items() if s != "finished"}
        assert not refused and figures["correct"] == len(wanted), f"{layer.name}: {refused}\n" + (out / "report.md").read_text()[-4000:]
        total += len(wanted)
    assert total == sum(len(files) for files in _kernels().values()) >= 92
