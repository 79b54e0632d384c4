"""A fair queue: jobs take turns, so one job's 20 evaluations do not starve the others.

Each job has its own first-in-first-out line. A worker that frees up serves the job served least
recently (a job never served yet first, in order of arrival) among those with an item it can run,
and takes that job's first such item. A retried item goes to the front of its job's line (it already
waited once).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from bench_tasks.work import WorkItem


@dataclass
class Request:
    item: WorkItem
    future: Future = field(default_factory=Future)
    failures: list[str] = field(default_factory=list)  # one line per worker that died or hung on it
    avoid: set[str] = field(default_factory=set)  # workers not to run it again on (where one died on it)

    @property
    def job_id(self) -> str:
        return self.item.job_id


class FairQueue:
    def __init__(self) -> None:
        self._lines: OrderedDict[str, deque[Request]] = OrderedDict()  # in order of arrival
        self._served: dict[str, int] = {}  # job -> tick of its last turn (kept while the job has no line, too)
        self._tick = 0
        self._cond = threading.Condition()
        self._closed = False

    def put(self, request: Request, *, front: bool = False) -> None:
        with self._cond:
            line = self._lines.get(request.job_id)
            if line is None:
                line = self._lines[request.job_id] = deque()
            line.appendleft(request) if front else line.append(request)
            self._cond.notify_all()

    def take(self, accepts: Callable[[Request], bool] = lambda r: True, timeout: float | None = None) -> Request | None:
        """The next request `accepts` allows, fairly across jobs; None after `timeout` seconds or when closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._closed:
                turns = sorted(self._lines, key=lambda job: self._served.get(job, -1))  # stable: arrival order among equals
                for job_id in turns:
                    line = self._lines[job_id]
                    request = next((r for r in line if accepts(r)), None)
                    if request is None:
                        continue
                    line.remove(request)
                    if not line:
                        del self._lines[job_id]
                    self._tick += 1
                    self._served[job_id] = self._tick
                    if len(self._served) > 100_000:  # forget the turns of jobs that have nothing queued
                        self._served = {j: t for j, t in self._served.items() if j in self._lines}
                    return request
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)
            return None

    def wake(self) -> None:
        """Make waiting takers look again (a worker's model or the set of workers changed)."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> list[Request]:
        """Stop handing out requests; returns those still queued."""
        with self._cond:
            self._closed = True
            left = [r for line in self._lines.values() for r in line]
            self._lines.clear()
            self._cond.notify_all()
            return left

    def waiting(self) -> dict[str, int]:
        """Queued requests per job, the next job first."""
        with self._cond:
            return {job: len(self._lines[job]) for job in sorted(self._lines, key=lambda j: self._served.get(j, -1))}

    def pending(self) -> list[Request]:
        with self._cond:
            return [r for line in self._lines.values() for r in line]

    def __len__(self) -> int:
        with self._cond:
            return sum(len(line) for line in self._lines.values())


def describe(request: Request) -> dict[str, Any]:
    return {"job_id": request.job_id, "work": request.item.summary(), "retries": len(request.failures)}
