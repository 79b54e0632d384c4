"""The FastAPI app factory: `create_app(settings, run_job=..., evaluator=...)`.

uvicorn: `python -m uvicorn app.main:create_app --factory` (settings from the settings tree, settings/tree.py),
or `cudamaster serve`.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as SqlTimeout
from sqlalchemy.orm import Session, sessionmaker

from gpu.inventory import detect_gpus
from gpu.locked import GpuLockedEvaluator, GpuPool, local_evaluator
from settings import RaySettings, ServiceSettings, Settings, load_settings

from . import stored_tasks, web
from .agent import RunJob, checkpointer, run_with_graph
from .api import campaigns, compare, errors, insights, jobs, keys, reviews, suites, system, tasks
from .api import export as export_api
from .bounds import INT32_MAX
from .campaigns.scheduler import CampaignScheduler
from .db.engine import make_engine, make_sessionmaker
from .db.migrate import upgrade
from .evaluation import Evaluation, plan_evaluation, ray_evaluation
from .headers import NoSniff
from .limits import BodySizeLimit
from .runner import JobRunner

API_PREFIX = "/api/v1"


def describe_sandbox() -> str:
    """Which sandbox the harness runs untrusted kernels in here (bench_tasks.harness.sandbox)."""
    from bench_tasks.harness.sandbox import describe
    from settings import get_harness_settings

    return describe(get_harness_settings())


log = logging.getLogger("cudamaster.service")


@contextmanager
def stop_on_signals(on_stop: Callable[[], None]) -> Iterator[None]:
    """Call `on_stop` first thing on SIGTERM/SIGINT, then the handler already there (uvicorn's, which
    begins its graceful shutdown). Without this the runner hears of the stop only after uvicorn has
    waited for every open connection, event streams included. Main thread only (signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def handler(sig: int, frame: Any) -> None:
        log.info("signal %s: stopping jobs at their next step, closing event streams", signal.Signals(sig).name)
        on_stop()
        before = previous[signal.Signals(sig)]
        if callable(before):
            before(sig, frame)
        elif sig == signal.SIGINT:
            raise KeyboardInterrupt
        elif before != signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
            signal.raise_signal(sig)

    for sig in previous:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, before in previous.items():
            if signal.getsignal(sig) is handler:
                signal.signal(sig, before)


def _join_cluster(ray: RaySettings) -> Any:
    from gpu.ray import make_ray_evaluator

    return make_ray_evaluator(ray.address, settings=ray)


def _settings_tree(settings: Settings | ServiceSettings | None) -> Settings:
    """The whole settings tree: loaded (None), loaded with this service section (ServiceSettings), or as given."""
    if settings is None:
        return load_settings()
    if isinstance(settings, ServiceSettings):
        return load_settings().model_copy(update={"service": settings})
    return settings


def _prepare_database(settings: ServiceSettings, sessions: sessionmaker[Session]) -> None:
    """Migrate the database (when auto_migrate) and register its stored tasks, before any job resumes."""
    if settings.auto_migrate:
        upgrade(settings.database_url)
    with sessions() as session:  # custom tasks and PyTorch references must be loadable before their jobs resume
        stored_tasks.register_all(session)


async def _cluster(evaluator: Any, ray: RaySettings | None) -> tuple[Any, bool]:
    """The Ray cluster the jobs run on (None: none) and whether this service joined it itself (and closes it):
    an injected evaluator with `for_job` (a RayEvaluator), else the cluster at `ray.address`, if any."""
    cluster = evaluator if hasattr(evaluator, "for_job") else None
    own_cluster = cluster is None and ray is not None and ray.address is not None
    if own_cluster and ray is not None:  # fails the start with what to do when the cluster cannot be joined or has no GPU
        cluster = await asyncio.to_thread(_join_cluster, ray)
    return cluster, own_cluster


async def _evaluation(settings: ServiceSettings, cluster: Any, injected: bool) -> Evaluation:
    """Where evaluations run: on the cluster's GPUs, else on the configured (or remote) GPUs next to the ones detected
    here; an unhealthy plan is logged as a warning."""
    inventory = await asyncio.to_thread(detect_gpus)
    if cluster is not None:
        evaluation = ray_evaluation(cluster.status(), inventory)
    else:
        evaluation = plan_evaluation(settings.gpus, settings.remote_gpus, injected, inventory)
    if not evaluation.healthy:
        log.warning("%s", evaluation.note)
    return evaluation


def _job_evaluator(cluster: Any, evaluator: Any, run_job: RunJob | None, gpu_pool: GpuPool) -> Any:
    """The evaluator the runner hands its jobs (None: an injected job function brings its own evaluation)."""
    if cluster is not None:
        return cluster  # the cluster holds its GPUs itself (one worker each); each job gets cluster.for_job(id)
    if evaluator is not None:
        return GpuLockedEvaluator(evaluator, gpu_pool)
    if run_job is None:  # the real agent with the local GPUs, one harness evaluator per GPU
        return GpuLockedEvaluator(local_evaluator, gpu_pool, per_gpu=True)
    return None


async def _note_sandbox(app: FastAPI) -> None:
    """Which sandbox untrusted kernels run in (app.state.sandbox), logged: as an error when there is none."""
    app.state.sandbox = await asyncio.to_thread(describe_sandbox)
    if app.state.sandbox.startswith("unavailable"):
        log.error("untrusted kernels will be REFUSED: sandbox %s", app.state.sandbox)
    else:
        log.info("sandbox for untrusted kernels: %s", app.state.sandbox)


def _lifespan(
    settings: ServiceSettings,
    engine: Engine,
    sessions: sessionmaker[Session],
    gpu_pool: GpuPool,
    checkpoint_url: str,
    *,
    run_job: RunJob | None,
    evaluator: Any,
    ray: RaySettings | None,
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The service's start and stop: database, cluster, evaluation plan, sandbox, then the job runner and the
    campaign scheduler (started only where jobs can run); on stop, the reverse."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _prepare_database(settings, sessions)
        cluster, own_cluster = await _cluster(evaluator, ray)
        app.state.cluster = cluster
        evaluation = await _evaluation(settings, cluster, evaluator is not None or run_job is not None)
        app.state.evaluation = evaluation
        locked = _job_evaluator(cluster, evaluator, run_job, gpu_pool)
        if run_job is None:  # set the checkpoint store up now: a bad URL fails the start, not the first job
            await asyncio.to_thread(checkpointer, checkpoint_url)
        await _note_sandbox(app)
        runner = JobRunner(settings, sessions, run_job or run_with_graph, evaluator=locked, checkpoint_url=checkpoint_url)
        app.state.runner = runner
        app.state.campaigns = CampaignScheduler(settings, sessions, runner)
        if evaluation.can_run_jobs:  # without a GPU, queued jobs (and campaigns) wait for a service that has one
            await runner.start()
            await app.state.campaigns.start()
        log.info(
            "cudamaster service up: database %s, %d job slot(s), %s",
            settings.database_url.split("@")[-1],
            settings.max_running_jobs,
            evaluation.note if cluster is not None else "GPUs " + ",".join(gpu_pool.gpus),
        )
        try:
            with stop_on_signals(runner.begin_stop):
                yield
        finally:
            await app.state.campaigns.stop()
            await runner.stop()
            if own_cluster and cluster is not None:
                await asyncio.to_thread(cluster.close)
            engine.dispose()

    return lifespan


def _include_api(app: FastAPI) -> None:
    """The /api/v1 routers and the API's answer to a request that fails validation."""
    for router in (jobs.router, campaigns.router, tasks.router, keys.router, system.router, insights.router, reviews.router, suites.router):
        app.include_router(router, prefix=API_PREFIX)
    app.add_exception_handler(RequestValidationError, errors.validation_error)  # a page's own: web.mount (app/web/pages.py)
    app.include_router(compare.router, prefix=API_PREFIX)  # runs and campaigns side by side
    app.include_router(export_api.router, prefix=API_PREFIX)  # an attempt's kernel as a package (issue 41)


RETRY_AFTER_S = 5  # what a 503 for an unreachable database asks the client to wait


async def database_unreachable(request: Any, exc: Exception) -> Any:
    """503 JSON with Retry-After for a transient database fault (an outage, a lock wait past its bound); any
    other database error is raised on (500)."""
    from fastapi.responses import JSONResponse

    from graph.database_faults import is_transient

    if not is_transient(exc):
        raise exc
    logging.getLogger("cudamaster.api").warning(
        "%s %s: the database is unreachable (%s)", request.method, request.url.path, type(exc).__name__
    )
    detail = "the database is unreachable or busy for a moment; nothing was changed. Try again shortly."
    return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})


def create_app(
    settings: Settings | ServiceSettings | None = None,
    *,
    run_job: RunJob | None = None,
    evaluator: Any = None,
    ray: RaySettings | None = None,
) -> FastAPI:
    """`settings`: the whole tree, or only its service section (the rest then comes from load_settings()).

    `ray`: the Ray section (default: the tree's, CUDAMASTER_RAY__*); with an address, every compile, evaluation and
    profile runs on that Ray cluster. An injected `evaluator` with `for_job` (a RayEvaluator) is used the same way."""
    tree = _settings_tree(settings)
    settings = tree.service
    checkpoint_url = tree.checkpoint_store()
    if ray is None and evaluator is None and run_job is None:
        ray = tree.ray
    engine = make_engine(settings.database_url)
    sessions = make_sessionmaker(engine)
    gpu_pool = GpuPool(settings.gpus)
    app = FastAPI(
        title="cudamaster",
        version="0.1.0",
        lifespan=_lifespan(settings, engine, sessions, gpu_pool, checkpoint_url, run_job=run_job, evaluator=evaluator, ray=ray),
        description="Submit CUDA kernel optimization jobs, follow them, and read their attempts, measurements and costs. "
        "Every write needs an API key (`cudamaster keys create`); reads too unless CUDAMASTER_SERVICE__OPEN_READS=true.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
    )  # docs: app/web/docs.py
    app.state.tree, app.state.settings, app.state.engine, app.state.sessions, app.state.gpu_pool = (
        tree,
        settings,
        engine,
        sessions,
        gpu_pool,
    )
    _include_api(app)
    for fault in (DBAPIError, SqlTimeout):
        app.add_exception_handler(fault, database_unreachable)
    web.mount(app, API_PREFIX)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(NoSniff)  # every answer: X-Content-Type-Options: nosniff (app/headers.py)
    bound_page_size_in_openapi(app, settings.max_page_size)
    return app


def bound_page_size_in_openapi(app: FastAPI, max_page_size: int) -> None:
    """Every list route refuses a `limit` over CUDAMASTER_SERVICE__MAX_PAGE_SIZE (a setting, so not in its Query):
    the OpenAPI document says the same bound (`maximum`), not the Query's static INT32_MAX (issue 30)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                for param in operation.get("parameters", []) if isinstance(operation, dict) else []:
                    bounds = param.get("schema", {})
                    if param.get("name") == "limit" and param.get("in") == "query" and bounds.get("maximum") == INT32_MAX:
                        bounds["maximum"] = max_page_size
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
