"""`RayEvaluator`: gpu.protocol's Evaluator over a Ray cluster.

- One long-lived worker (actor) per GPU of the cluster, `num_gpus=1`, pinned to its node; each keeps
  its compile and data/reference caches for its whole life. Compiles go to CPU-only workers
  (`compile_workers`, 1 CPU each), or to the GPU workers when there are none.
- Work waits in a fair queue (gpu/ray/queue.py): jobs take turns; a free worker takes the next
  job's first item it can run.
- A worker that dies, or holds an item longer than `item_timeout_s`, is killed and replaced on its
  node; the item is retried once on another worker (the replacement, where there is no other), then
  answered with the verdict `infrastructure_error`, which is never the candidate's fault. A candidate
  that kills its worker is therefore run twice at most, and an item is never lost: its caller always
  gets a result.
- A job's attempts are measured on one GPU model: `for_job(job_id)` gives the job's evaluator, pinned
  to the model of its first measurement (or to the model it was measured on before a restart).
- The compile node's object travels with the evaluation of the same source (bench_tasks/work.py), so
  the GPU worker does not compile it again.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from bench_tasks import load_task
from bench_tasks.harness import EvaluationResult, Verdict
from bench_tasks.harness.result import SanitizerVerdict
from bench_tasks.harness.sanitize import not_run
from bench_tasks.work import CompiledObject, WorkItem, WorkKind, work_item
from settings import HarnessSettings, RaySettings, get_harness_settings, get_ray_settings

from ..protocol import CompileReport, CompileRequest, EvaluateRequest, KernelRequest, Profile, ProfileRequest, SanitizeRequest, no_profile
from .queue import FairQueue, Request
from .worker import WorkerEngine, WorkOutcome

log = logging.getLogger("cudamaster.cluster")

INFRASTRUCTURE = Verdict.infrastructure_error.value
SHUT_DOWN = "the Ray evaluator was shut down before this ran; the step runs again when the job resumes"


class ClusterError(RuntimeError):
    """The cluster cannot run GPU work (unreachable, or no GPUs); the message says what to do."""


@dataclass
class Slot:
    """One worker: a GPU of a node, or a compile slot."""

    name: str
    role: str  # "gpu" or "cpu"
    node_id: str | None
    actor: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    current: Request | None = None
    replaced: int = 0
    alive: bool = True

    @property
    def model(self) -> str:
        return self.info.get("gpu_model", "")


def _sha(source: str | None) -> str:
    return "baseline" if source is None else hashlib.sha256(source.encode()).hexdigest()


class RayEvaluator:
    def __init__(
        self,
        settings: RaySettings | None = None,
        *,
        harness: HarnessSettings | None = None,
        worker_local: dict[str, Any] | None = None,
        compile_local: dict[str, Any] | None = None,
    ) -> None:
        """Connect to the cluster at `settings.address` and start one worker per GPU (and the compile workers).

        `worker_local` / `compile_local`: machine-local harness settings of the GPU / compile workers
        (e.g. their cache_dir); the default is each machine's own (CUDAMASTER_* there, or `settings.cache_dir`)."""
        import ray

        self.settings = settings or get_ray_settings()
        if not self.settings.address:
            raise ClusterError("no Ray address: set CUDAMASTER_RAY__ADDRESS or pass --ray ADDRESS")
        self.harness = harness or get_harness_settings()
        base = {"cache_dir": self.settings.cache_dir} if self.settings.cache_dir else {}
        self._local = {"gpu": {**base, **(worker_local or {})}, "cpu": {**base, **(compile_local or {})}}
        if not ray.is_initialized():
            try:
                ray.init(address=self.settings.address, namespace=self.settings.namespace, log_to_driver=False, configure_logging=False)
            except Exception as exc:  # noqa: BLE001 - any failure to join is the operator's to fix
                raise ClusterError(
                    f"cannot join the Ray cluster at {self.settings.address}: {exc}; start it with "
                    "`ray start --head` (and `ray start --address HEAD:6379 --num-gpus N` on each GPU machine)"
                ) from None
        self._ray = ray
        self._objects: OrderedDict[tuple, CompiledObject] = OrderedDict()
        self._objects_lock = threading.Lock()
        self._slots_lock = threading.Lock()
        self.queues = {"gpu": FairQueue(), "cpu": FairQueue()}
        self._stop = threading.Event()
        self.slots: list[Slot] = []
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        for node in nodes:
            for i in range(int(node.get("Resources", {}).get("GPU", 0))):
                self.slots.append(Slot(f"gpu-{node['NodeManagerAddress']}-{node['NodeID'][:8]}-{i}", "gpu", node["NodeID"]))
        if not self.slots:
            raise ClusterError(
                f"the Ray cluster at {self.settings.address} has no GPUs: start a worker on a GPU machine with "
                "`ray start --address HEAD:6379 --num-gpus N`"
            )
        self.slots += [Slot(f"compile-{i}", "cpu", None) for i in range(self.settings.compile_workers)]
        for slot in self.slots:
            self._start(slot)
        for slot in self.slots:
            slot.info = self._info(slot)
        self._threads = [threading.Thread(target=self._serve, args=(s,), name=f"ray-{s.name}", daemon=True) for s in self.slots]
        for t in self._threads:
            t.start()
        self._default = self.for_job("")
        log.info("Ray cluster %s: %s", self.settings.address, ", ".join(f"{s.name} ({s.model or 'CPU'})" for s in self.slots))

    # -- workers -----------------------------------------------------------------------------------
    def _start(self, slot: Slot) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options: dict[str, Any] = {"max_restarts": 0, "max_task_retries": 0, "name": None}
        if slot.role == "gpu":
            assert slot.node_id is not None  # a GPU worker belongs to its node
            options |= {"num_gpus": 1, "num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(slot.node_id, soft=False)}
        else:
            options |= {"num_cpus": 1, "num_gpus": 0}
        actor_class = self._ray.remote(WorkerEngine)
        slot.actor = actor_class.options(**options).remote(slot.name, slot.role, self.settings.worker_evaluator, self._local[slot.role])

    def _info(self, slot: Slot) -> dict[str, Any]:
        try:
            return self._ray.get(slot.actor.info.remote(), timeout=self.settings.worker_start_timeout_s)
        except Exception as exc:  # noqa: BLE001
            raise ClusterError(f"worker {slot.name} did not start within {self.settings.worker_start_timeout_s:.0f} s: {exc}") from None

    def _replace(self, slot: Slot, why: str) -> None:
        log.warning("worker %s (%s, pid %s): %s; replacing it", slot.name, slot.info.get("host"), slot.info.get("pid"), why)
        with contextlib.suppress(Exception):  # already gone
            self._ray.kill(slot.actor, no_restart=True)
        slot.replaced += 1
        try:
            self._start(slot)
            info = self._info(slot)
        except Exception as exc:  # noqa: BLE001 - its node is gone: the slot goes with it
            log.error("worker %s could not be replaced (%s); its node has left the cluster", slot.name, exc)
            slot.alive = False
        else:
            slot.info = info
        for queue in self.queues.values():
            queue.wake()

    def _accepts(self, slot: Slot, request: Request) -> bool:
        if slot.name in request.avoid:
            return False
        if slot.role == "cpu":
            return request.item.kind == "compile"
        return request.item.gpu_model is None or request.item.gpu_model == slot.model

    def _queue_of(self, slot: Slot) -> list[FairQueue]:
        # GPU workers also compile when no compile worker exists.
        if slot.role == "cpu":
            return [self.queues["cpu"]]
        return [self.queues["gpu"]] if self.settings.compile_workers else [self.queues["gpu"], self.queues["cpu"]]

    def _serve(self, slot: Slot) -> None:
        from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

        while not self._stop.is_set() and slot.alive:
            request = None
            for queue in self._queue_of(slot):
                request = queue.take(lambda r: self._accepts(slot, r), timeout=0.2)
                if request is not None:
                    break
            if request is None:
                continue
            slot.current = request
            ref = slot.actor.run.remote(request.item)
            try:
                outcome = self._ray.get(ref, timeout=self.settings.item_timeout_s)
            except RayTaskError as exc:  # the worker's code raised (e.g. no GPU there): the caller's error, as it would be locally
                request.future.set_exception(exc.as_instanceof_cause())
            except (RayActorError, GetTimeoutError) as exc:
                hung = isinstance(exc, GetTimeoutError)
                why = (
                    f"held {request.item.summary()} over {self.settings.item_timeout_s:.0f} s"
                    if hung
                    else f"died during {request.item.summary()}"
                )
                request.failures.append(f"{slot.name} on {slot.info.get('host', '?')} {why}")
                self._replace(slot, why)
                self._retry_or_fail(slot, request)
            except Exception as exc:  # noqa: BLE001 - anything else from Ray: the item must still be answered
                request.failures.append(f"{slot.name}: {type(exc).__name__}: {exc}")
                self._replace(slot, f"{type(exc).__name__}: {exc}")
                self._retry_or_fail(slot, request)
            else:
                request.future.set_result(outcome)
            finally:
                slot.current = None

    def _retry_or_fail(self, slot: Slot, request: Request) -> None:
        if self._stop.is_set():  # shutting down: an error, not a verdict, so the job's step runs again on resume
            request.future.set_exception(ClusterError(SHUT_DOWN))
            return
        if len(request.failures) <= 1:
            others = [s for s in self.slots if s is not slot and s.alive and self._accepts(s, request)]
            if others:  # elsewhere; with no other worker that can run it, the replacement is the elsewhere
                request.avoid.add(slot.name)
            self._queue_for(request.item).put(request, front=True)
            return
        request.future.set_result(self._infrastructure_outcome(request))

    def _infrastructure_outcome(self, request: Request, why: str = "") -> WorkOutcome:
        item = request.item
        message = why or (
            "the worker running it died or hung, twice (not the kernel's fault as far as anyone can tell; "
            "it was not retried again): " + "; ".join(request.failures)
        )
        out = WorkOutcome(worker="", host="")
        if item.kind == "compile":
            out.compile = CompileReport(INFRASTRUCTURE, message)
        elif item.kind == "evaluate":
            out.evaluation = EvaluationResult(
                task=item.task.name,
                precision=item.precision,
                verdict=Verdict.infrastructure_error,
                message=message,
                size_set=item.sizes,
                baseline_only=item.source is None,
                implementation="candidate" if item.source is not None else ("vendor" if item.implementation == "vendor" else "baseline"),
            )
        elif item.kind == "sanitize":
            out.sanitizer = not_run(f"no sanitizer run: {message}", item.tools)
        else:
            out.profile = no_profile(f"no profile: {message}")
        return out

    def _queue_for(self, item: WorkItem) -> FairQueue:
        return self.queues["cpu" if item.kind == "compile" else "gpu"]

    # -- running items ------------------------------------------------------------------------------
    def submit(self, item: WorkItem) -> Future:
        request = Request(item)
        if (
            item.kind != "compile"
            and item.gpu_model is not None
            and not any(s.alive and s.role == "gpu" and s.model == item.gpu_model for s in self.slots)
        ):
            request.future.set_result(
                self._infrastructure_outcome(
                    request,
                    (
                        f"no {item.gpu_model} in the cluster any more: the job's attempts are measured on that model only "
                        "(speedups are never compared across GPU models); add a worker with one, or start a new job"
                    ),
                )
            )
            return request.future
        self._queue_for(item).put(request)
        return request.future

    def run(self, item: WorkItem) -> WorkOutcome:
        return self.submit(item).result()

    def remember(self, key: tuple, compiled: CompiledObject) -> None:
        with self._objects_lock:
            self._objects[key] = compiled
            self._objects.move_to_end(key)
            while len(self._objects) > 256:
                self._objects.popitem(last=False)

    def compiled_for(self, key: tuple) -> CompiledObject | None:
        with self._objects_lock:
            return self._objects.get(key)

    def for_job(self, job_id: str, gpu_model: str | None = None) -> JobEvaluator:
        return JobEvaluator(self, job_id, gpu_model)

    # -- gpu.protocol's Evaluator (work of no job) ------------------------------------------------------
    def compile(self, request: CompileRequest) -> CompileReport:
        return self._default.compile(request)

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        return self._default.evaluate(request)

    def profile(self, request: ProfileRequest) -> Profile:
        return self._default.profile(request)

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        return self._default.sanitize(request)

    # -- status and shutdown ----------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The cluster's GPUs (model, host, what each runs) and the queues (per job, in turn order)."""

        def worker(s: Slot) -> dict[str, Any]:
            return {
                "name": s.name,
                "host": s.info.get("host", ""),
                "gpu_model": s.model,
                "driver": s.info.get("driver", ""),
                "alive": s.alive,
                "busy": s.current is not None,
                "running": s.current.item.summary() if s.current else "",
                "job_id": s.current.job_id if s.current else None,
                "replaced": s.replaced,
            }

        return {
            "address": self.settings.address,
            "gpus": [worker(s) for s in self.slots if s.role == "gpu"],
            "compile_workers": [worker(s) for s in self.slots if s.role == "cpu"],
            "queued": {kind: q.waiting() for kind, q in self.queues.items()},
        }

    def worker_info(self) -> list[dict[str, Any]]:
        """Each live worker's own report (pid, nvcc runs, items done)."""
        return self._ray.get([s.actor.info.remote() for s in self.slots if s.alive], timeout=60)

    def close(self) -> None:
        self._stop.set()
        for queue in self.queues.values():
            for request in queue.close():
                request.future.set_exception(ClusterError(SHUT_DOWN))
        for slot in self.slots:
            with contextlib.suppress(Exception):  # already gone
                self._ray.kill(slot.actor, no_restart=True)


class JobEvaluator:
    """The evaluator one job uses: its items carry its id (fair turns) and its GPU model once measured."""

    def __init__(self, cluster: RayEvaluator, job_id: str, gpu_model: str | None = None) -> None:
        self.cluster, self.job_id, self.gpu_model = cluster, job_id, gpu_model

    def _item(self, kind: WorkKind, request: KernelRequest, **fields: Any) -> WorkItem:
        """The self-contained item of `request` (the task's definition travels with it), as this job's work."""
        task = load_task(request.task)
        return work_item(kind, task, request.precision, request.source, settings=self.cluster.harness, job_id=self.job_id, **fields)

    def compile(self, request: CompileRequest) -> CompileReport:
        out = self.cluster.run(self._item("compile", request, flags=list(request.flags)))
        assert out.compile is not None
        if out.compiled is not None:
            self.cluster.remember((request.task, request.precision, _sha(request.source), tuple(request.flags)), out.compiled)
        return out.compile

    def evaluate(self, request: EvaluateRequest) -> EvaluationResult:
        key = (request.task, request.precision, _sha(request.source), tuple(request.flags))
        compiled = self.cluster.compiled_for(key) if request.source is not None else None
        out = self.cluster.run(
            self._item("evaluate", request, flags=list(request.flags), sizes=request.sizes, compiled=compiled, gpu_model=self.gpu_model)
        )
        result = out.evaluation
        assert result is not None
        if self.gpu_model is None and result.verdict != Verdict.infrastructure_error and result.gpu and result.gpu.name:
            self.gpu_model = result.gpu.name  # the job's measurements stay on this model from now on
        return result

    def sanitize(self, request: SanitizeRequest) -> list[SanitizerVerdict]:
        """compute-sanitizer on a GPU of the job's model (the worker's evaluator runs it in the harness's sandbox)."""
        out = self.cluster.run(self._item("sanitize", request, gpu_model=self.gpu_model, tools=request.tools))
        assert out.sanitizer is not None
        return out.sanitizer

    def profile(self, request: ProfileRequest) -> Profile:
        if request.mode == "none":
            return no_profile("profiling switched off for this job")
        rows = list(request.rows) if request.rows is not None else None
        out = self.cluster.run(self._item("profile", request, profile_mode=request.mode, rows=rows, gpu_model=self.gpu_model))
        assert out.profile is not None
        return out.profile
