"""The plan a driver runs and the result lines it writes back: the Python side of runtime/cm_runtime.h.

A plan is whitespace-separated tokens (read_plan() in the runtime); `Plan.to_text()` writes it and
`Plan.from_text()` reads it back (the tests prove the round trip). Results are lines; `Results`
accumulates them, also from a file that is still being written (the parent reads while the driver runs).

What the driver learns about the timed-call checks is only what it needs: the refresh key and the
indices of the timed pairs to check. Both come from the parent's secrets (`secret_key`,
`choose_check_pairs`), never from a seed the result records before the run ends, and the plan is a
file the candidate's code cannot read (no file I/O passes the symbol checks).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .result import GpuInfo


def _token(path: Path | str) -> str:
    text = str(path)
    if not text or any(ch.isspace() for ch in text):
        raise ValueError(f"plan paths may not contain whitespace: {text!r} (set CUDAMASTER_HARNESS__CACHE_DIR to a path without spaces)")
    return text


@dataclass
class BufferPlan:
    arg: int  # parameter index in the prototype
    count: int
    role: int  # runtime Role: 0 input, 1 output, 2 accumulate, 3 inout
    memory: int = 0  # runtime Memory: 0 device, 1 pageable host
    draw: tuple[int, float, float] | None = None  # refresh (draw code, p0, p1); None: kept
    sample: tuple[int, Path] | None = None  # outputs checked on a sample: (index count, int64 index file)


@dataclass
class CasePlan:
    index: int
    buffers: list[BufferPlan] = field(default_factory=list)
    scalars: list[tuple[int, float]] = field(default_factory=list)
    datasets: list[tuple[Path, str]] = field(default_factory=list)  # (directory, "check" | "fresh")
    check_pairs: list[int] = field(default_factory=list)
    timing: bool = True


@dataclass
class TimingPlan:
    min_pairs: int = 10
    max_pairs: int = 2000
    min_seconds: float = 0.05
    max_seconds: float = 2.0
    target_rse: float = 0.002
    warmup_calls: int = 3
    warmup_seconds: float = 0.02
    warmup_first: float | None = None  # the first timed size's warm-up seconds; None: warmup_seconds


@dataclass
class Plan:
    results: Path
    outdir: Path
    mode: str = "full"  # full | once
    impl: str = "candidate"
    timing: TimingPlan = field(default_factory=TimingPlan)
    refresh_key: int = 0  # 64 bits
    check_last: bool = True
    dump_baseline: bool = False
    wait_seconds: float = 600.0
    # A candidate call may take max(call_floor_s, call_factor x the baseline's call at that size); 0: no limit.
    call_floor_s: float = 0.0
    call_factor: float = 0.0
    gate: Path | None = None  # a file the parent creates when the GPU is free: the driver waits for it after its init
    cpus: list[int] = field(default_factory=list)  # the cores the driver runs on (harness/cpus.py); empty: its parent's
    # Inputs compared on the host after every call, as when no pristine device copy fits (settings.input_checks_on_host)
    input_checks_on_host: bool = False
    pinned_staging: bool = False  # the driver's own staging memory page-locked (settings.pinned_staging)
    cases: list[CasePlan] = field(default_factory=list)

    def to_text(self) -> str:
        t = self.timing
        lines = [
            f"mode {self.mode}",
            f"impl {self.impl}",
            f"results {_token(self.results)}",
            f"outdir {_token(self.outdir)}",
            f"timing {t.min_pairs} {t.max_pairs} {t.min_seconds!r} {t.max_seconds!r} {t.target_rse!r} {t.warmup_calls} {t.warmup_seconds!r}",
            f"refresh_key {self.refresh_key & 0xFFFFFFFF} {(self.refresh_key >> 32) & 0xFFFFFFFF}",
            f"check_last {int(self.check_last)}",
            f"dump_baseline {int(self.dump_baseline)}",
            f"wait_seconds {self.wait_seconds!r}",
            f"call_limit {float(self.call_floor_s)!r} {float(self.call_factor)!r}",
        ]
        if t.warmup_first is not None:
            lines.append(f"warmup_first {float(t.warmup_first)!r}")
        if self.gate is not None:
            lines.append(f"gate {_token(self.gate)}")
        if self.cpus:
            lines.append(f"cpus {len(self.cpus)} " + " ".join(str(int(c)) for c in self.cpus))
        if self.input_checks_on_host:
            lines.append("input_checks_on_host 1")
        if self.pinned_staging:
            lines.append("pinned_staging 1")
        for case in self.cases:
            lines.append(f"case {case.index}")
            for b in case.buffers:
                lines.append(f"buffer {b.arg} {b.count} {b.role} {b.memory}")
                if b.draw is not None:
                    lines.append(f"refresh {b.arg} {b.draw[0]} {float(b.draw[1])!r} {float(b.draw[2])!r}")
                if b.sample is not None:
                    lines.append(f"sample {b.arg} {b.sample[0]} {_token(b.sample[1])}")
            for arg, value in case.scalars:
                lines.append(f"scalar {arg} {float(value)!r}")
            for directory, purpose in case.datasets:
                lines.append(f"dataset {_token(directory)} {purpose}")
            if case.check_pairs:
                lines.append(f"check_pairs {len(case.check_pairs)} " + " ".join(str(j) for j in case.check_pairs))
            lines.append(f"time {int(case.timing)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> Plan:
        """Read a plan as the runtime does (the same tokens, in any line layout)."""
        return _PlanReader(cls(results=Path("."), outdir=Path(".")), text).read()


def _flag(token: str) -> bool:
    return token != "0"


# The plan-wide tokens with one value, each read into the plan's field of the same name.
_PLAN_FIELDS: dict[str, Callable[[str], object]] = {
    "mode": str,
    "impl": str,
    "results": Path,
    "outdir": Path,
    "check_last": _flag,
    "dump_baseline": _flag,
    "wait_seconds": float,
    "gate": Path,
    "input_checks_on_host": _flag,
    "pinned_staging": _flag,
}


class _PlanReader:
    """Plan.from_text's state: the tokens, the position in them, the plan read so far and its current case."""

    def __init__(self, plan: Plan, text: str):
        self.tokens, self.pos = text.split(), 0
        self.plan = plan
        self.case: CasePlan | None = None

    def take(self, n: int = 1) -> list[str]:
        if self.pos + n > len(self.tokens):
            raise ValueError(f"plan ends early after {self.tokens[self.pos - 1] if self.pos else 'nothing'}")
        out = self.tokens[self.pos : self.pos + n]
        self.pos += n
        return out

    def read(self) -> Plan:
        while self.pos < len(self.tokens):
            (tok,) = self.take()
            if tok in _PLAN_FIELDS:
                setattr(self.plan, tok, _PLAN_FIELDS[tok](self.take()[0]))
            elif self.plan_token(tok):
                continue
            elif self.case is None:
                raise ValueError(f"plan token {tok} before any case")
            elif not self.case_token(tok, self.case):
                raise ValueError(f"unknown plan token {tok}")
        return self.plan

    def plan_token(self, tok: str) -> bool:
        """Read a plan-wide token with several values, or a new case; False when `tok` is none of these."""
        plan = self.plan
        if tok == "timing":
            v = self.take(7)
            first = plan.timing.warmup_first  # its own token, in any order
            plan.timing = TimingPlan(int(v[0]), int(v[1]), float(v[2]), float(v[3]), float(v[4]), int(v[5]), float(v[6]), first)
        elif tok == "refresh_key":
            k0, k1 = (int(x) for x in self.take(2))
            plan.refresh_key = k0 | (k1 << 32)
        elif tok == "call_limit":
            floor, factor = self.take(2)
            plan.call_floor_s, plan.call_factor = float(floor), float(factor)
        elif tok == "warmup_first":
            plan.timing.warmup_first = float(self.take()[0])
        elif tok == "cpus":
            plan.cpus = [int(c) for c in self.take(int(self.take()[0]))]
        elif tok == "case":
            self.case = CasePlan(int(self.take()[0]))
            plan.cases.append(self.case)
        else:
            return False
        return True

    def case_token(self, tok: str, case: CasePlan) -> bool:
        """Read a token of the current case; False when `tok` is not one."""
        if tok == "buffer":
            a, n, r, m = (int(x) for x in self.take(4))
            case.buffers.append(BufferPlan(a, n, r, m))
        elif tok == "refresh":
            arg, d, p0, p1 = self.take(4)
            self.buffer(case, int(arg)).draw = (int(d), float(p0), float(p1))
        elif tok == "sample":
            arg, count, path = self.take(3)
            self.buffer(case, int(arg)).sample = (int(count), Path(path))
        elif tok == "scalar":
            arg, value = self.take(2)
            case.scalars.append((int(arg), float(value)))
        elif tok == "dataset":
            directory, purpose = self.take(2)
            case.datasets.append((Path(directory), purpose))
        elif tok == "check_pairs":
            pairs = int(self.take()[0])
            case.check_pairs = [int(x) for x in self.take(pairs)]
        elif tok == "time":
            case.timing = _flag(self.take()[0])
        else:
            return False
        return True

    @staticmethod
    def buffer(case: CasePlan, arg: int) -> BufferPlan:
        return next(b for b in case.buffers if b.arg == arg)


def secret_key() -> int:
    """A 64-bit refresh key from the operating system's entropy: the candidate cannot know or derive it."""
    return secrets.randbits(64)


def choose_check_pairs(min_pairs: int, max_pairs: int, rng: random.Random | None = None) -> list[int]:
    """Which timed pairs to check, drawn from the parent's secrets (`secrets.SystemRandom` by default).

    Two consecutive pairs at random among the first `min_pairs` (the loop always runs them; a candidate
    that does the work on every other call fails one of the two), then one pair uniformly in each
    range [m, 4m), [4m, 16m), ... below `max_pairs`, so that a candidate turning lazy after any number
    of calls meets a check with fair odds; the driver adds the pair after the loop decides to stop.
    """
    rng = rng or secrets.SystemRandom()
    first = rng.randrange(max(1, min_pairs - 1))
    chosen = {first, first + 1}
    lo = max(min_pairs, 2)
    while lo < max_pairs:
        hi = min(4 * lo, max_pairs)
        chosen.add(rng.randrange(lo, hi))
        lo = hi
    return sorted(j for j in chosen if j < max_pairs)


Sample = tuple[float, float, float]  # (event µs, host wall µs, tail µs) of one timed call


@dataclass
class Results:
    """What a driver reported so far; `feed` takes complete lines (a file read while it is written)."""

    gpu: GpuInfo | None = None
    outputs: list[tuple[int, int, str, str]] = field(default_factory=list)  # (case, dataset, impl, stage)
    timed: list[tuple[int, int, str]] = field(default_factory=list)  # (case, pair, impl)
    times: dict[int, dict[str, list[Sample]]] = field(default_factory=dict)
    unwritten: dict[str, int] = field(default_factory=dict)  # sampled output file name -> NaN elements in the whole output
    stages: list[tuple[int, str, float]] = field(default_factory=list)  # (case or -1, stage, seconds)
    order: dict[tuple, int] = field(default_factory=dict)  # output/timed entry -> position in the file
    done: bool = False
    timing_done: bool = False  # the driver has timed its last size (only correctness runs are left)
    cpus: list[int] = field(default_factory=list)  # the cores the driver ran on
    gpu_start: float | None = None  # when the GPU became the driver's, after its start-up and gate (time.monotonic's clock)
    _pending: str = ""

    def feed(self, chunk: str) -> list[tuple]:
        """Add text; returns the new output and timed entries, as ("output", ...) / ("timed", ...) tuples."""
        text = self._pending + chunk
        lines = text.split("\n")
        self._pending = lines.pop()
        new = []
        for line in lines:
            entry = self._line(line.split())
            if entry is not None:
                self.order[entry] = len(self.order)
                new.append(entry)
        return new

    def _line(self, parts: list[str]) -> tuple | None:
        if not parts:
            return None
        kind = parts[0]
        if kind == "device" and len(parts) >= 8:
            drv, rt = int(parts[6]), int(parts[7])
            self.gpu = GpuInfo(
                name=parts[1].replace("_", " "),
                compute_capability=parts[2],
                sm_count=int(parts[3]),
                l2_bytes=int(parts[4]),
                memory_bytes=int(parts[5]),
                driver_version=f"CUDA {drv // 1000}.{drv % 1000 // 10}",
                cuda_driver_api=f"{drv // 1000}.{drv % 1000 // 10}",
                runtime_version=f"{rt // 1000}.{rt % 1000 // 10}",
            )
        elif kind == "output":
            entry = (int(parts[1]), int(parts[2]), parts[3], parts[4])
            self.outputs.append(entry)
            return ("output", *entry)
        elif kind == "timed":
            entry = (int(parts[1]), int(parts[2]), parts[3])  # type: ignore[assignment]
            self.timed.append(entry)  # type: ignore[arg-type]
            return ("timed", *entry)
        elif kind == "time":
            self.times.setdefault(int(parts[1]), {}).setdefault(parts[2], []).append((float(parts[4]), float(parts[5]), float(parts[6])))
        elif kind == "unwritten":
            self.unwritten[parts[1]] = int(parts[2])
        elif kind == "stage":
            self.stages.append((int(parts[1]), parts[2], float(parts[3])))
        elif kind == "done":
            self.done = True
        elif kind == "timing_done":
            self.timing_done = True
        elif kind == "gpu_start":
            self.gpu_start = float(parts[1])
        elif kind == "cpus":  # the cores the driver runs on (its affinity once set from the plan)
            self.cpus = [int(c) for c in parts[2 : 2 + int(parts[1])]]
        return None

    @classmethod
    def read(cls, path: Path) -> Results:
        results = cls()
        if path.exists():
            results.feed(path.read_text() + "\n")
        return results
