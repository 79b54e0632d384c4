"""Read Nsight Compute CSV: `--csv --page raw` (one row per kernel) and `--csv --page details`
(one row per metric or rule). Lines ncu writes around the CSV (`==PROF==`, `==WARNING==`, the
program's own output) are skipped; numbers may carry thousands separators; "n/a" and "no data"
become None.
"""

from __future__ import annotations

import csv
import io
import re

from .errors import NoKernelsProfiledError, ReportFormatError
from .metrics import DURATION, details_raw_name
from .report import KernelProfile, Metric

# Raw-page columns that describe the launch rather than measure it.
META_COLUMNS = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
_MISSING = {"", "n/a", "no data", "(no data)", "nan", "-"}
_GROUPED = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d*)?([eE][-+]?\d+)?$")
_TIME_NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6, "second": 1e9, "s": 1e9}
_BIG = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_SMALL = {"n": 1e-9, "u": 1e-6, "m": 1e-3}
_BASES = ("byte", "cycle", "inst", "warp", "sector", "request", "thread", "block", "hz")


def parse_number(text: str) -> float | None:
    """'3,199,183,616.99' -> 3199183616.99; 'n/a', 'no data', '' and text -> None."""
    t = text.strip()
    if t.lower() in _MISSING:
        return None
    if _GROUPED.match(t):
        t = t.replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def _scale(part: str) -> tuple[float, str]:
    if part in _TIME_NS:
        return _TIME_NS[part] * 1e-9, "second"
    base = part[1:].lower()
    if len(part) > 1 and part[0] in _BIG and base in _BASES:
        return _BIG[part[0]], base
    if len(part) > 1 and part[0] in _SMALL and base in _BASES:
        return _SMALL[part[0]], base
    return 1.0, part


def normalize(value: float | None, unit: str) -> tuple[float | None, str]:
    """Scaled units to base ones (ncu --print-units auto writes usecond, Gbyte/second, ...): times
    become nsecond, everything else SI base units."""
    u = unit.strip()
    if u in _TIME_NS:
        return (None if value is None else value * _TIME_NS[u]), "nsecond"
    if not u or u == "%":
        return value, u
    parts = u.split("/")
    if len(parts) > 2:
        return value, u
    factor, num = _scale(parts[0])
    new = num
    if len(parts) == 2:
        dfac, den = _scale(parts[1])
        factor /= dfac
        new = f"{num}/{den}"
    return (None if value is None else value * factor), new


def _triple(text: str) -> tuple[int, int, int] | None:
    nums = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]
    if not nums:
        return None
    nums = [*nums, 1, 1][:3]
    return nums[0], nums[1], nums[2]


def _csv_rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        if "No kernels were profiled" in text:
            raise NoKernelsProfiledError("ncu profiled no kernel: " + _ncu_lines(text))
        raise ReportFormatError(
            'no CSV header row starting with "ID" found: save the report with `ncu --csv --page raw` '
            "(or --page details), e.g. `ncu --csv --page raw --log-file report.csv ./app`"
        )
    body = [line for line in lines[start:] if line.strip() and not line.startswith("==")]
    return list(csv.reader(io.StringIO("\n".join(body))))


def _ncu_lines(text: str) -> str:
    return " | ".join(line for line in text.splitlines() if line.startswith("==")) or text.strip()[:300]


def _metric(name: str, text: str, unit: str) -> Metric:
    value, unit = normalize(parse_number(text), unit)
    return Metric(name=name, value=value, unit=unit, text=None if value is not None or text.strip().lower() in _MISSING else text)


def _kernel(name: str, block: str, grid: str, ident: str, metrics: dict[str, Metric], rules: list[str] | None = None) -> KernelProfile:
    d = metrics.get(DURATION)
    duration = d.value if d is not None and d.unit == "nsecond" else None
    num = parse_number(ident)
    return KernelProfile(
        name=name,
        block=_triple(block),
        grid=_triple(grid),
        metrics=metrics,
        duration_ns=duration,
        id=None if num is None else int(num),
        rules=rules or [],
    )


def parse_raw(text: str) -> list[KernelProfile]:
    rows = _csv_rows(text)
    header = rows[0]
    if "Metric Name" in header:
        raise ReportFormatError("this is a --page details CSV; use parse_details (or parse_report, which detects the page)")
    if len(rows) < 2 or "Kernel Name" not in header:
        raise ReportFormatError("raw-page CSV needs a header row with 'Kernel Name' and a units row")
    units = rows[1]
    col = {name: i for i, name in enumerate(header)}
    kernels = []
    for row in rows[2:]:
        if len(row) != len(header):
            raise ReportFormatError(f"a raw-page row has {len(row)} fields, the header {len(header)}")
        metrics = {
            name: _metric(name, row[i], units[i] if i < len(units) else "") for i, name in enumerate(header) if name not in META_COLUMNS
        }
        get = lambda c, row=row: row[col[c]] if c in col else ""  # noqa: E731
        kernels.append(_kernel(get("Kernel Name"), get("Block Size"), get("Grid Size"), get("ID"), metrics))
    if not kernels:
        raise NoKernelsProfiledError("the raw-page CSV has a header but no kernel rows: ncu profiled no kernel")
    return kernels


def parse_details(text: str) -> list[KernelProfile]:
    rows = _csv_rows(text)
    header = rows[0]
    need = ("Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
    missing = [c for c in need if c not in header]
    if missing:
        raise ReportFormatError(f"details-page CSV lacks columns {missing}; save it with `ncu --csv --page details`")
    col = {name: i for i, name in enumerate(header)}
    get = lambda row, c: row[col[c]] if c in col and col[c] < len(row) else ""  # noqa: E731
    order: list[str] = []
    groups: dict[str, dict] = {}
    for row in rows[1:]:
        key = get(row, "ID") + "\0" + get(row, "Kernel Name")
        if key not in groups:
            order.append(key)
            groups[key] = {"row": row, "metrics": {}, "rules": []}
        g = groups[key]
        label = get(row, "Metric Name")
        if not label:
            rule = get(row, "Rule Name")
            if rule:
                g["rules"].append(f"{rule} ({get(row, 'Rule Type')}): {get(row, 'Rule Description')}".strip())
            continue
        section, unit = get(row, "Section Name"), get(row, "Metric Unit")
        name = details_raw_name(section, label, unit) or f"{section}/{label}"
        g["metrics"][name] = _metric(name, get(row, "Metric Value"), unit)
    kernels = [
        _kernel(
            get(g["row"], "Kernel Name"),
            get(g["row"], "Block Size"),
            get(g["row"], "Grid Size"),
            get(g["row"], "ID"),
            g["metrics"],
            g["rules"],
        )
        for g in (groups[k] for k in order)
    ]
    if not kernels:
        raise NoKernelsProfiledError("the details-page CSV has a header but no rows: ncu profiled no kernel")
    return kernels


def parse_report(text: str) -> list[KernelProfile]:
    """Either page, detected from the header."""
    rows = _csv_rows(text)
    return parse_details(text) if "Metric Name" in rows[0] else parse_raw(text)
