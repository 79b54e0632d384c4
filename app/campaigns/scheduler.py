"""The campaign scheduler: started with the job runner (app/main.py). Each running campaign gets a
tick (app/campaigns/store.py) every `poll_seconds`, and at once when one of this runner's jobs ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.orm import Session, sessionmaker

from graph import database_faults
from settings import ServiceSettings

from ..runner import JobRunner
from . import store

log = logging.getLogger("cudamaster.campaigns")


class CampaignScheduler:
    def __init__(self, settings: ServiceSettings, sessions: sessionmaker[Session], runner: JobRunner):
        self.settings, self.sessions, self.runner = settings, sessions, runner
        self._wake = asyncio.Event()
        self._main: asyncio.Task | None = None

    async def start(self) -> None:
        self.runner.listeners.append(self.wake)
        self._main = asyncio.create_task(self._loop(), name="campaign-scheduler")

    async def stop(self) -> None:
        if self._main is not None:
            self._main.cancel()
            await asyncio.gather(self._main, return_exceptions=True)

    def wake(self) -> None:
        self._wake.set()

    def tick_all(self) -> list[store.TickResult]:
        """One tick of every running campaign (in a worker thread)."""
        with self.sessions() as session:
            ids = store.running_campaign_ids(session)
        results = []
        for campaign_id in ids:
            with self.sessions() as session:
                results.append(store.tick(session, campaign_id, self.settings.max_jobs_in_flight_per_key))
        return results

    def apply(self, results: list[store.TickResult]) -> None:
        started = False
        for result in results:
            for job_id in result.stopping:
                self.runner.request_stop(job_id)
            started = started or bool(result.started)
        if started:
            self.runner.wake()

    async def _loop(self) -> None:
        while True:
            try:
                self._wake.clear()
                self.apply(await asyncio.to_thread(self.tick_all))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a database hiccup must not kill the scheduler
                if database_faults.is_transient(exc):
                    log.warning("scheduling campaigns: the database is unreachable (%s)", type(exc).__name__)
                else:
                    log.exception("scheduling campaigns failed; retrying in %.1fs", self.settings.poll_seconds)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.settings.poll_seconds)
