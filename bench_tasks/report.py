"""`cudamaster bench report`: a benchmark run (or two) as Markdown and as a self-contained HTML page.

A run file is what `cudamaster bench run` writes: {"provenance", "size_set", "results": [EvaluationResult]}.
Its results may measure, for the same variant, the baseline alone, the vendor reference and a candidate
(`implementation`), over one or more size sets. The report shows per variant and size the baseline,
vendor and candidate times, their speedups over the baseline, each one's share of the roofline floor, and
per variant P; per category and overall, the share of variants whose P reaches 1, 2, 4 and 8 (the paper's
table: a variant that failed, or has no P, counts as below 1); with a second run, what changed.

All numbers come from `summarize()` (plain data, tested against hand-computed values); the Markdown and
HTML writers only format them. The HTML page has no external resource: inline CSS and SVG, no script.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path

from bench_tasks.harness.result import EvaluationResult, sanitizer_status
from bench_tasks.spec import TaskError, load_task

THRESHOLDS = (1.0, 2.0, 4.0, 8.0)
IMPLEMENTATIONS = ("candidate", "vendor")
SIZE_SET_ORDER = ("paper", "large", "edge", "all", "custom")


class ReportError(ValueError):
    """A run file that cannot be read as a benchmark run; the message says what is wrong."""


@dataclass
class Run:
    path: str
    provenance: dict
    results: list[EvaluationResult]


def load_run(path: Path) -> Run:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not a readable JSON file ({exc})") from None
    if isinstance(doc, dict) and "results" in doc:
        raw = doc["results"]
    elif isinstance(doc, dict) and "result" in doc:  # `bench eval --json`
        raw = [doc["result"]]
    else:
        raise ReportError(f'{path}: expected a `cudamaster bench run` file with a "results" list')
    try:
        results = [EvaluationResult.model_validate(r) for r in raw]
    except ValueError as exc:
        raise ReportError(f"{path}: a result does not match the evaluation result schema: {str(exc)[:300]}") from None
    return Run(str(path), doc.get("provenance", {}) if isinstance(doc, dict) else {}, results)


@dataclass
class SizeLine:
    params: dict[str, int]
    baseline_us: float | None = None
    vendor_us: float | None = None
    candidate_us: float | None = None
    vendor_speedup: float | None = None
    candidate_speedup: float | None = None
    candidate_over_vendor: float | None = None  # vendor time / candidate time: > 1 when the candidate is faster
    floor_us: float | None = None
    baseline_roofline_pct: float | None = None
    vendor_roofline_pct: float | None = None
    candidate_roofline_pct: float | None = None
    passed: bool = True


@dataclass
class Variant:
    task: str
    precision: str
    category: str
    size_set: str
    verdicts: dict[str, str] = field(default_factory=dict)  # implementation -> verdict
    scores: dict[str, float | None] = field(default_factory=dict)  # implementation -> P
    sanitizer: dict[str, str] = field(default_factory=dict)  # implementation -> clean | findings | not_run (when sanitized)
    sizes: list[SizeLine] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.task}/{self.precision}"


@dataclass
class ShareRow:
    category: str
    variants: dict[str, int]  # implementation -> variants measured
    reached: dict[str, dict[float, int]]  # implementation -> threshold -> variants with P >= threshold

    def share(self, impl: str, threshold: float) -> float | None:
        n = self.variants.get(impl, 0)
        return self.reached[impl][threshold] / n if n else None


@dataclass
class Change:
    key: str
    size_set: str
    implementation: str
    score_1: float | None
    score_2: float | None
    times: list[tuple[dict[str, int], float | None, float | None]]  # (params, median µs run 1, run 2)


@dataclass
class Summary:
    runs: list[str]
    provenance: dict
    variants: list[Variant]
    shares: list[ShareRow]  # per category, then "overall"
    share_size_set: str
    changes: list[Change] = field(default_factory=list)


def _category(task: str) -> str:
    try:
        return load_task(task).category
    except TaskError:
        return "other"


def _pct(floor: float | None, t: float | None) -> float | None:
    return 100.0 * floor / t if floor and t else None


def _variants(results: list[EvaluationResult]) -> list[Variant]:
    groups: dict[tuple[str, str, str], dict[str, EvaluationResult]] = {}
    for r in results:
        groups.setdefault((r.task, r.precision, r.size_set), {})[r.implementation] = r
    out = []
    for (task, precision, size_set), by_impl in groups.items():
        v = Variant(task, precision, _category(task), size_set)
        for impl, r in by_impl.items():
            v.verdicts[impl] = r.verdict.value
            if (status := sanitizer_status(r.sanitizer)) is not None:
                v.sanitizer[impl] = status.value
            if impl in IMPLEMENTATIONS:
                v.scores[impl] = r.score if r.ok else None
        order: list[dict[str, int]] = []
        for r in by_impl.values():
            for row in r.rows:
                if row.params not in order:
                    order.append(row.params)
        v.sizes = [_size_line(params, by_impl) for params in order]
        out.append(v)
    out.sort(key=lambda v: (v.category, v.task, v.precision, SIZE_SET_ORDER.index(v.size_set) if v.size_set in SIZE_SET_ORDER else 99))
    return out


def _size_line(params: dict[str, int], by_impl: dict[str, EvaluationResult]) -> SizeLine:
    """One size of a variant: each implementation's time and speedup there, the baseline's, the floor, and shares of it."""
    rows = {impl: next((row for row in r.rows if row.params == params), None) for impl, r in by_impl.items()}
    line = SizeLine(params)
    for impl in ("candidate", "vendor", "baseline"):  # the baseline paired with the candidate first
        row = rows.get(impl)
        if row is not None and row.baseline is not None and line.baseline_us is None:
            line.baseline_us = row.baseline.median_us
        if row is not None and row.roofline_floor_us and line.floor_us is None:
            line.floor_us = row.roofline_floor_us
    for impl in IMPLEMENTATIONS:
        row = rows.get(impl)
        if row is None:
            continue
        line.passed = line.passed and row.passed
        if row.candidate is not None:
            setattr(line, f"{impl}_us", row.candidate.median_us)
            setattr(line, f"{impl}_speedup", row.speedup)
    baseline = rows.get("baseline")
    if baseline is not None:
        line.passed = line.passed and baseline.passed
    if line.vendor_us and line.candidate_us:
        line.candidate_over_vendor = line.vendor_us / line.candidate_us
    line.baseline_roofline_pct = _pct(line.floor_us, line.baseline_us)
    line.vendor_roofline_pct = _pct(line.floor_us, line.vendor_us)
    line.candidate_roofline_pct = _pct(line.floor_us, line.candidate_us)
    return line


def _shares(variants: list[Variant], size_set: str) -> list[ShareRow]:
    chosen = [v for v in variants if v.size_set == size_set]
    categories = sorted({v.category for v in chosen})
    rows = []
    for cat in [*categories, "overall"]:
        members = [v for v in chosen if cat == "overall" or v.category == cat]
        counts = {impl: sum(impl in v.scores for v in members) for impl in IMPLEMENTATIONS}
        reached = {impl: {t: sum(1 for v in members if (v.scores.get(impl) or 0.0) >= t) for t in THRESHOLDS} for impl in IMPLEMENTATIONS}
        rows.append(ShareRow(cat, counts, reached))
    return rows


def _changes(first: list[Variant], second: list[Variant]) -> list[Change]:
    index = {(v.key, v.size_set): v for v in second}
    changes = []
    for a in first:
        b = index.get((a.key, a.size_set))
        if b is None:
            continue
        for impl in ("baseline", *IMPLEMENTATIONS):
            if impl not in a.verdicts or impl not in b.verdicts:
                continue
            attr = "baseline_us" if impl == "baseline" else f"{impl}_us"
            times = []
            for line in a.sizes:
                other = next((x for x in b.sizes if x.params == line.params), None)
                times.append((line.params, getattr(line, attr), getattr(other, attr) if other else None))
            changes.append(Change(a.key, a.size_set, impl, a.scores.get(impl), b.scores.get(impl), times))
    return changes


def summarize(run: Run, other: Run | None = None) -> Summary:
    variants = _variants(run.results)
    sets = {v.size_set for v in variants}
    share_set = next((s for s in SIZE_SET_ORDER if s in sets), next(iter(sets), "paper"))
    provenance = dict(run.provenance)
    first = next((r for r in run.results if r.gpu is not None), None)
    if first is not None and first.gpu is not None:
        provenance.setdefault("gpu", first.gpu.name)
        provenance.setdefault("harness_version", first.harness_version)
    summary = Summary([run.path] + ([other.path] if other else []), provenance, variants, _shares(variants, share_set), share_set)
    if other is not None:
        summary.changes = _changes(variants, _variants(other.results))
    return summary


# -- formatting -----------------------------------------------------------------------------------------------------------


def _num(v: float | None, fmt: str = "{:.2f}") -> str:
    return "–" if v is None else fmt.format(v)


def _size(params: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _share_cell(row: ShareRow, impl: str, t: float) -> str:
    s = row.share(impl, t)
    return "–" if s is None else f"{100 * s:.0f}% ({row.reached[impl][t]}/{row.variants[impl]})"


def _provenance_line(p: dict) -> str:
    keep = [
        f"{k}: {p[k]}" for k in ("git_commit", "date", "host", "gpu", "harness_version") if k in p and isinstance(p[k], (str, int, float))
    ]
    return "; ".join(keep)


def _tables(summary: Summary) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table, shared by both formats."""
    tables = [_share_table(summary), _variant_table(summary), _size_table(summary)]
    if summary.changes:
        tables.append(_change_table(summary))
    return tables


def _share_table(summary: Summary) -> Table:
    head = ["category"] + [f"{impl} P ≥ {t:g}" for impl in IMPLEMENTATIONS for t in THRESHOLDS]
    rows = [[r.category] + [_share_cell(r, impl, t) for impl in IMPLEMENTATIONS for t in THRESHOLDS] for r in summary.shares]
    return (f"Share of variants with P ≥ 1, 2, 4, 8 ({summary.share_size_set} sizes)", head, rows)


def _variant_table(summary: Summary) -> Table:
    head = ["variant", "sizes", "category", "verdicts", "P candidate", "P vendor", "sanitizer"]
    rows = [
        [
            v.key,
            v.size_set,
            v.category,
            ", ".join(f"{k}: {val}" for k, val in v.verdicts.items()),
            _num(v.scores.get("candidate"), "{:.3f}"),
            _num(v.scores.get("vendor"), "{:.3f}"),
            ", ".join(f"{k}: {val}" for k, val in v.sanitizer.items()) or "-",
        ]
        for v in summary.variants
    ]
    return ("Variants", head, rows)


def _size_table(summary: Summary) -> Table:
    head = [
        "variant",
        "size",
        "baseline µs",
        "vendor µs",
        "candidate µs",
        "vendor speedup",
        "candidate speedup",
        "candidate vs vendor",
        "floor µs",
        "baseline % roof",
        "vendor % roof",
        "candidate % roof",
        "checks",
    ]
    rows = []
    for v in summary.variants:
        for s in v.sizes:
            rows.append(
                [
                    v.key,
                    f"{v.size_set}: {_size(s.params)}",
                    _num(s.baseline_us),
                    _num(s.vendor_us),
                    _num(s.candidate_us),
                    _num(s.vendor_speedup, "{:.2f}x"),
                    _num(s.candidate_speedup, "{:.2f}x"),
                    _num(s.candidate_over_vendor, "{:.2f}x"),
                    _num(s.floor_us),
                    _num(s.baseline_roofline_pct, "{:.1f}"),
                    _num(s.vendor_roofline_pct, "{:.1f}"),
                    _num(s.candidate_roofline_pct, "{:.1f}"),
                    "passed" if s.passed else "FAILED",
                ]
            )
    return ("Per variant and size (median µs per call; speedups are medians of paired baseline/implementation ratios)", head, rows)


def _change_table(summary: Summary) -> Table:
    head = ["variant", "implementation", "P run 1", "P run 2", "P change", "size", "µs run 1", "µs run 2", "time change"]
    rows = []
    for c in summary.changes:
        dp = c.score_2 / c.score_1 if c.score_1 and c.score_2 else None
        for i, (params, t1, t2) in enumerate(c.times):
            change = f"{100 * (t2 / t1 - 1):+.1f}%" if t1 and t2 else "–"
            p_cells = [_num(c.score_1, "{:.3f}"), _num(c.score_2, "{:.3f}"), _num(dp, "{:.3f}x")] if i == 0 else ["", "", ""]
            rows.append(
                [
                    c.key if i == 0 else "",
                    c.implementation if i == 0 else "",
                    *p_cells,
                    f"{c.size_set}: {_size(params)}",
                    _num(t1),
                    _num(t2),
                    change,
                ]
            )
    return ("Run 2 against run 1", head, rows)


Table = tuple[str, list[str], list[list[str]]]  # (title, header, rows of cells)


def markdown_page(title: str, intro: list[str], tables: list[Table]) -> str:
    """A Markdown document: a title, intro lines (Markdown), then one section per table."""
    lines = [f"# {title}", "", *intro, ""]
    for name, head, rows in tables:
        lines += [f"## {name}", "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines)


def to_markdown(summary: Summary) -> str:
    intro = ["Runs: " + " vs ".join(f"`{p}`" for p in summary.runs)]
    prov = _provenance_line(summary.provenance)
    if prov:
        intro.append(f"Provenance: {prov}")
    return markdown_page("MSKernelBench report", intro, _tables(summary))


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1b1f24; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.85rem; }
th, td { border: 1px solid #c9d1d9; padding: 0.25rem 0.5rem; text-align: right; }
th { background: #eef1f4; position: sticky; top: 0; }
td:first-child, th:first-child { text-align: left; }
tr.failed td { background: #fde7e7; }
.legend rect { stroke: none; }
"""


def _svg_shares(summary: Summary) -> str:
    """A bar chart of the overall shares (candidate and vendor) at each threshold, inline SVG."""
    overall = next((r for r in summary.shares if r.category == "overall"), None)
    if overall is None:
        return ""
    colors = {"candidate": "#2f6fde", "vendor": "#7a7f87"}
    width, height, bar = 480, 200, 36
    parts = [f'<svg width="{width}" height="{height + 56}" role="img" aria-label="share of variants reaching each P threshold">']
    for i, t in enumerate(THRESHOLDS):
        x0 = 40 + i * 110
        for j, impl in enumerate(IMPLEMENTATIONS):
            s = overall.share(impl, t)
            if s is None:
                continue
            h = s * height
            x = x0 + j * (bar + 4)
            parts.append(
                f'<rect x="{x}" y="{height - h + 14:.1f}" width="{bar}" height="{h:.1f}" fill="{colors[impl]}">'
                f"<title>{impl} P ≥ {t:g}: {100 * s:.0f}%</title></rect>"
                f'<text x="{x + bar / 2}" y="{height - h + 11:.1f}" text-anchor="middle" font-size="11">{100 * s:.0f}%</text>'
            )
        parts.append(f'<text x="{x0 + bar}" y="{height + 30}" text-anchor="middle" font-size="12">P ≥ {t:g}</text>')
    for j, impl in enumerate(IMPLEMENTATIONS):
        parts.append(
            f'<rect class="legend" x="{40 + j * 220}" y="{height + 40}" width="10" height="10" fill="{colors[impl]}"/>'
            f'<text x="{54 + j * 220}" y="{height + 49}" font-size="12">{impl}: share of variants</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def html_page(title: str, intro_html: list[str], figures: list[str], tables: list[Table]) -> str:
    """A self-contained HTML page (inline CSS and SVG, no script): title, intro paragraphs (already
    HTML), figures (inline SVG), then one table per section; a row whose last cell is FAILED is marked."""
    esc = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        *[f"<p>{p}</p>" for p in intro_html],
        *figures,
    ]
    for name, head, rows in tables:
        out.append(f"<h2>{esc(name)}</h2><table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>")
        for row in rows:
            cls = ' class="failed"' if row and row[-1] == "FAILED" else ""
            out.append(f"<tr{cls}>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>")
        out.append("</tbody></table>")
    out.append("</body></html>")
    return "\n".join(out)


def to_html(summary: Summary) -> str:
    esc = html.escape
    intro = ["Runs: " + " vs ".join(f"<code>{esc(p)}</code>" for p in summary.runs)]
    prov = _provenance_line(summary.provenance)
    if prov:
        intro.append(f"Provenance: {esc(prov)}")
    return html_page("MSKernelBench report", intro, [_svg_shares(summary)], _tables(summary))


def write_report(run_path: Path, other_path: Path | None, prefix: Path) -> tuple[Path, Path]:
    """Write PREFIX.md and PREFIX.html; returns their paths."""
    summary = summarize(load_run(run_path), load_run(other_path) if other_path else None)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    md, page = prefix.with_name(prefix.name + ".md"), prefix.with_name(prefix.name + ".html")
    md.write_text(to_markdown(summary))
    page.write_text(to_html(summary))
    return md, page
