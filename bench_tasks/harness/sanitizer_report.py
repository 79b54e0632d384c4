"""compute-sanitizer's text report -> one tool's verdict at one size (pure text; tested on recorded reports).

What the tools print (every line prefixed `========= `):
- memcheck:  `Invalid __global__ read of size 4 bytes`, then `at KERNEL(ARGS)+0x70 in FILE:LINE`, `by thread (x,y,z) in
  block (x,y,z)`, `Address 0x... is out of bounds`; ends with `ERROR SUMMARY: N error(s)`.
- racecheck: `Error: Race reported between Write access at KERNEL(ARGS)+0x.. in FILE:LINE` / `and Read access at ...
  [N hazards]`; ends with `RACECHECK SUMMARY: N hazard(s) displayed (E error(s), W warning(s))` (and, in some releases,
  an ERROR SUMMARY too).
- initcheck: `Uninitialized __global__ memory read of size 4 bytes` (or `Host API uninitialized memory access`), then
  the same `at`/`by thread` lines; ERROR SUMMARY.
- synccheck: `Barrier error detected. Divergent thread(s) in warp` (or `Invalid arguments`, `Divergent thread(s) in
  block`), then `at`/`by thread` lines; ERROR SUMMARY.
A tool that cannot attach prints e.g. `Error: Device not supported` (some H200 machines' gVisor runtime) and no summary:
that is `not_run`, never `clean`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PREFIX = "========="
MAX_REPORT_LINES = 24  # the first report lines a finding keeps
MAX_LINE_CHARS = 300

_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)")
# `at KERNEL(ARGS)+0x70 in FILE:LINE` (2022 and later) or `at 0x70 in FILE:LINE:KERNEL(ARGS)` (older releases).
_AT_NEW = re.compile(r"\bat\s+(?!0x)([^\s(][^(]*?)\(.*?\)\+0x[0-9a-fA-F]+")
_AT_OLD = re.compile(r"\bat\s+0x[0-9a-fA-F]+\s+in\s+\S*?:\d*:?([A-Za-z_][\w:<>~]*)\(")
_UNSUPPORTED = (
    "device not supported",
    "device is not supported",
    "unable to find injection library",
    "internal sanitizer error",
    "failed to initialize",
    "not supported on this",
)


@dataclass
class ToolRun:
    """What one tool said about one run: completed (a summary was printed), errors counted, the first report lines."""

    completed: bool
    errors: int = 0
    kernel: str = ""
    report: list[str] = field(default_factory=list)
    unsupported: str = ""  # the line saying the tool cannot run here (device or runtime not supported)


def _strip(line: str) -> str:
    """A report line without the tool's `=========` prefix."""
    return line[len(PREFIX) :].strip() if line.startswith(PREFIX) else line.strip()


def _kernel(lines: list[str]) -> str:
    for line in lines:
        m = _AT_NEW.search(line) or _AT_OLD.search(line)
        if m:
            return m.group(1).strip()
    return ""


def _errors(text: str) -> tuple[bool, int]:
    """(a summary was printed, errors counted). racecheck counts hazards at error level in its own summary."""
    counts = [int(m.group(1)) for m in _ERROR_SUMMARY.finditer(text)]
    races = [int(m.group(2)) for m in _RACE_SUMMARY.finditer(text)]
    if not counts and not races:
        return False, 0
    return True, max([*counts, *races])


def _report_lines(text: str) -> list[str]:
    """The tool's own lines from the first error on (not the program's output, not the banner, not the summaries)."""
    lines = [_strip(line) for line in text.splitlines() if line.startswith(PREFIX)]
    body = [line for line in lines if line and line != "COMPUTE-SANITIZER" and "SUMMARY:" not in line]
    return [line[:MAX_LINE_CHARS] for line in body[:MAX_REPORT_LINES]]


def parse(text: str) -> ToolRun:
    """One compute-sanitizer run's output (the program's output may be interleaved) -> what it found."""
    unsupported = next((line.strip() for line in text.splitlines() if any(u in line.lower() for u in _UNSUPPORTED)), "")
    completed, errors = _errors(text)
    if unsupported and not errors:
        return ToolRun(completed=False, unsupported=_strip(unsupported)[:MAX_LINE_CHARS])
    if not completed:
        return ToolRun(completed=False)
    if errors == 0:
        return ToolRun(completed=True)
    report = _report_lines(text)
    return ToolRun(completed=True, errors=errors, kernel=_kernel(report), report=report)
