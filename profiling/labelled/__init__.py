"""Kernels whose bottleneck is known by construction, and how the classifiers score on them."""

from __future__ import annotations

import shlex
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..classify import Bottleneck, Thresholds, classify
from ..errors import ClassificationError, ReportFormatError
from ..parse import parse_report
from ..report import ProfileReport

HERE = Path(__file__).parent
MANIFEST = HERE / "manifest.toml"
NVCC_FLAGS = ["-O3", "-gencode=arch=compute_90,code=sm_90"]


@dataclass(frozen=True)
class LabelledKernel:
    name: str
    expected: Bottleneck
    precision: str
    command: str
    why: str

    def argv(self, build_dir: Path) -> list[str]:
        args = shlex.split(self.command)
        return [str(build_dir / Path(args[0]).name), *args[1:]]


def load_manifest(path: Path = MANIFEST) -> list[LabelledKernel]:
    data = tomllib.loads(Path(path).read_text())
    return [LabelledKernel(k["name"], Bottleneck(k["expected"]), k["precision"], k["command"], k.get("why", "")) for k in data["kernel"]]


def build(out_dir: Path, nvcc: str = "nvcc", timeout_s: float = 300.0) -> Path:
    """Compile labelled.cu into out_dir; returns the binary. Raises RuntimeError with nvcc's log."""
    data = tomllib.loads(MANIFEST.read_text())
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / data["binary"]
    cmd = [nvcc, *NVCC_FLAGS, "-o", str(binary), str(HERE / data["program"])]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return binary


@dataclass
class Score:
    kernel: LabelledKernel
    report: ProfileReport | None
    predicted: dict[str, Bottleneck | None]  # rule -> class
    error: str = ""


def score_dir(
    csv_dir: Path,
    manifest: list[LabelledKernel] | None = None,
    thresholds: Thresholds | None = None,
    rules: tuple[str, ...] = ("published", "sol"),
) -> list[Score]:
    """Classify each `<csv_dir>/<kernel name>.csv` (raw page) by each rule; kernels without a CSV
    are reported with an error."""
    scores = []
    for k in manifest or load_manifest():
        path = Path(csv_dir) / f"{k.name}.csv"
        if not path.exists():
            scores.append(Score(k, None, {r: None for r in rules}, f"no {path.name}"))
            continue
        try:
            text = path.read_text()
            report = ProfileReport.from_kernels(parse_report(text), raw_csv=text, impl=k.name, precision=k.precision)
            predicted = {r: classify(report.summary, r, thresholds).bottleneck for r in rules}
            scores.append(Score(k, report, predicted))  # type: ignore[arg-type]
        except (ReportFormatError, ClassificationError, ValueError) as exc:
            scores.append(Score(k, None, {r: None for r in rules}, str(exc)))
    return scores


def accuracy(scores: list[Score], rule: str) -> tuple[int, int]:
    done = [s for s in scores if s.report is not None]
    return sum(s.predicted[rule] == s.kernel.expected for s in done), len(done)
