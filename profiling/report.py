"""Typed profiles: one metric, one kernel, one report (several kernels of one call)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .classify import Bottleneck, Classification, Thresholds, classify
from .errors import ClassificationError
from .metrics import DURATION


class Metric(BaseModel):
    name: str
    value: float | None = Field(description="None when ncu wrote 'n/a', 'no data' or text")
    unit: str = ""
    text: str | None = Field(None, description="the value as written, when it is not a number")


class KernelProfile(BaseModel):
    name: str
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    metrics: dict[str, Metric] = {}
    duration_ns: float | None = None
    id: int | None = None
    rules: list[str] = Field([], description="ncu rule results (details page only), 'name (type): text'")

    def value(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.value if m else None


def _is_total(metric: Metric) -> bool:
    """Totals add up over kernels (durations, byte counts); everything else is averaged."""
    return metric.name.endswith(".sum") and "/" not in metric.unit and metric.unit != "%"


def summarize(kernels: list[KernelProfile]) -> dict[str, Metric]:
    """One set of metrics for the whole call: totals summed, all other values (percentages, rates,
    IPC, occupancy, registers) averaged with the kernels' durations as weights (equal weights when
    no duration is known)."""
    if len(kernels) == 1:
        return dict(kernels[0].metrics)
    weights = [k.duration_ns or 0.0 for k in kernels]
    if sum(weights) <= 0:
        weights = [1.0] * len(kernels)
    names: list[str] = []
    for k in kernels:
        names += [n for n in k.metrics if n not in names]
    out: dict[str, Metric] = {}
    for name in names:
        present = [(k.metrics[name], w) for k, w in zip(kernels, weights, strict=True) if name in k.metrics]
        first = present[0][0]
        numeric = [(m.value, w) for m, w in present if m.value is not None]
        if not numeric:
            out[name] = first.model_copy()
            continue
        if _is_total(first):
            value = sum(v for v, _ in numeric)
        else:
            total_w = sum(w for _, w in numeric)
            value = sum(v * w for v, w in numeric) / total_w if total_w > 0 else sum(v for v, _ in numeric) / len(numeric)
        out[name] = Metric(name=name, value=value, unit=first.unit)
    return out


class ProfileReport(BaseModel):
    """What ncu measured for one call of one implementation at one size."""

    kernels: list[KernelProfile]
    summary: dict[str, Metric]
    classification: Classification | None = None
    raw_csv: str = ""
    task: str | None = None
    precision: str | None = None
    impl: str | None = None  # baseline | candidate | a labelled kernel's name
    params: dict[str, int] = {}
    ncu_version: str = ""
    command: list[str] = []
    profile_wall_s: float | None = Field(None, description="wall time of the ncu run, replays included")
    classify_error: str = ""

    @property
    def bottleneck(self) -> Bottleneck | None:
        return self.classification.bottleneck if self.classification else None

    @property
    def duration_ns(self) -> float | None:
        m = self.summary.get(DURATION)
        return m.value if m else None

    @classmethod
    def from_kernels(
        cls, kernels: list[KernelProfile], raw_csv: str = "", rule: str = "sol", thresholds: Thresholds | None = None, **meta
    ) -> ProfileReport:
        report = cls(kernels=kernels, summary=summarize(kernels), raw_csv=raw_csv, **meta)
        report.reclassify(rule, thresholds)
        return report

    def reclassify(self, rule: str = "sol", thresholds: Thresholds | None = None) -> Classification | None:
        try:
            self.classification, self.classify_error = classify(self.summary, rule, thresholds), ""
        except ClassificationError as exc:
            self.classification, self.classify_error = None, str(exc)
        return self.classification


def format_value(metric: Metric | None) -> str:
    """One metric's value as every mode shows it (units scaled: us, TB/s, GB/s; 'not collected' when absent)."""
    if metric is None:
        return "not collected"
    if metric.value is None:
        return metric.text or "no data"
    v, u = metric.value, metric.unit
    if u == "%":
        return f"{v:.2f} %"
    if u == "nsecond":
        return f"{v / 1e3:.2f} us" if v >= 1e3 else f"{v:.0f} ns"
    if u == "byte/second":
        return f"{v / 1e12:.3f} TB/s" if v >= 1e11 else f"{v / 1e9:.2f} GB/s"
    if u == "register/thread" or float(v).is_integer():
        return f"{v:.0f}" + (f" {u}" if u and u != "register/thread" else "")
    return f"{v:.3g}" + (f" {u}" if u else "")
