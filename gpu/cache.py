"""A per-job store around any evaluator: compile reports, evaluations and profiles keyed by (task, precision,
source sha, flags, sizes or profile mode), so a resumed job never repeats a finished compile or GPU evaluation.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from bench_tasks.harness import EvaluationResult
from bench_tasks.harness.result import SanitizerStatus, SanitizerVerdict

from .protocol import CompileReport, CompileRequest, EvaluateRequest, Evaluator, Profile, ProfileRequest, SanitizeRequest


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def source_sha(source: str | None) -> str:
    return hashlib.sha256(source.encode()).hexdigest() if source is not None else "baseline"


class CachingEvaluator:
    """Caches compile reports, evaluations and profiles in `store_dir` (the job's store).

    Entries are written atomically (temp file + rename) right after the inner call returns, so a
    process killed after a GPU evaluation but before the graph checkpointed its step finds the
    result here on resume instead of running the GPU again.
    """

    def __init__(self, inner: Evaluator, store_dir: Path):
        self.inner = inner
        self.store_dir = Path(store_dir)

    def _path(self, kind: str, key: str) -> Path:
        return self.store_dir / kind / f"{key}.json"

    def _load(self, kind: str, key: str) -> dict | None:
        p = self._path(kind, key)
        if p.exists():
            try:
                return json.loads(p.read_text())
            except json.JSONDecodeError:
                return None
        return None

    def _save(self, kind: str, key: str, data: dict) -> None:
        p = self._path(kind, key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, p)

    def compile(self, request: CompileRequest) -> CompileReport:
        key = _key("compile", request.task, request.precision, source_sha(request.source), list(request.flags))
        if (hit := self._load("compile", key)) is not None:
            return CompileReport(**hit)
        report = self.inner.compile(request)
        self._save("compile", key, asdict(report))
        return report

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        key = _key("evaluate", request.task, request.precision, source_sha(request.source), list(request.flags), request.sizes)
        if (hit := self._load("evaluations", key)) is not None:
            return EvaluationResult.model_validate(hit)
        result = self.inner.evaluate(request)
        self._save("evaluations", key, result.model_dump(mode="json"))
        return result

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        key = _key("sanitize", request.task, request.precision, source_sha(request.source), list(request.tools))
        if (hit := self._load("sanitizer", key)) is not None:
            return [SanitizerVerdict.model_validate(v) for v in hit["verdicts"]]
        verdicts = self.inner.sanitize(request)
        if all(v.status != SanitizerStatus.not_run for v in verdicts):  # a refused or missing tool may work on the resume
            self._save("sanitizer", key, {"verdicts": [v.model_dump(mode="json") for v in verdicts]})
        return verdicts

    def profile(self, request: ProfileRequest) -> Profile:
        key = _key("profile", request.task, request.precision, source_sha(request.source), request.mode)
        if (hit := self._load("profiles", key)) is not None:
            return Profile.model_validate({**hit, "mode": request.mode})
        result = self.inner.profile(request)
        if result.text:  # a missing profiler may be installed before the resume
            self._save("profiles", key, result.model_dump(mode="json"))
        return result
