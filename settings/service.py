"""Service settings: the `service` section of the settings tree (settings/tree.py), e.g. CUDAMASTER_SERVICE__DATABASE_URL."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from pydantic import BaseModel, Field, SecretStr

DEFAULT_DB = Path.home() / ".cache" / "cudamaster" / "service.db"
MAX_CUSTOM_SIZES = 16  # the most sizes a custom or PyTorch task may list: the API's schema (app/schemas.py) says the same


class ServiceSettings(BaseModel):
    database_url: str = Field(f"sqlite:///{DEFAULT_DB}", description="SQLAlchemy URL; postgresql+psycopg://... for PostgreSQL")
    auto_migrate: bool = Field(True, description="run `alembic upgrade head` when the service starts")

    host: str = "127.0.0.1"
    port: int = 8000

    # Job runner
    max_running_jobs: int = Field(4, ge=1, description="jobs executed at once by this process")
    gpus: list[str] = Field(["0"], description="GPU ids; one evaluation per GPU at a time")
    remote_gpus: int = Field(
        0,
        ge=0,
        description="GPU workers reachable elsewhere (filled by the remote-worker setup); "
        "with none and no local GPU, jobs are refused at submit",
    )
    lease_seconds: float = Field(60.0, gt=0, description="a runner's hold on a job; renewed every third of it")
    poll_seconds: float = Field(2.0, gt=0, description="how often the runner looks for claimable jobs")
    runner_id: str = Field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    drain_seconds: float = Field(30.0, ge=0, description="on shutdown, how long running jobs get to reach a checkpoint")

    # Access and limits
    open_reads: bool = Field(False, description="allow GET requests without an API key")
    max_request_bytes: int = Field(1024 * 1024, gt=0)
    max_source_bytes: int = Field(256 * 1024, gt=0, description="largest .cu source accepted in a submission")
    max_custom_sizes: int = Field(
        MAX_CUSTOM_SIZES, ge=1, le=MAX_CUSTOM_SIZES, description=f"sizes a custom task may list (at most {MAX_CUSTOM_SIZES})"
    )
    max_custom_elements: int = Field(1 << 28, ge=1, description="elements of all a custom task's buffers together, at one size")
    pytorch_reference_seconds: float = Field(
        120.0, gt=0, description="a PyTorch reference's sandboxed run at submit: seconds of its own code (all sizes, float64 references)"
    )
    pytorch_reference_memory_bytes: int = Field(8 << 30, ge=1 << 30, description="a PyTorch reference's sandboxed run: address space")
    max_pytorch_stored_bytes: int = Field(
        256 << 20, ge=1 << 20, description="a stored PyTorch task's float64 reference arrays (compressed): more is refused at submit"
    )
    max_suite_references: int = Field(100, ge=1, le=1000, description="references one suite may list (POST /api/v1/suites)")
    max_suite_bytes: int = Field(
        1 << 20, ge=1, description="the text of all a suite's references together (each is probed in the sandbox at submit)"
    )
    max_jobs_in_flight_per_key: int = Field(8, ge=1, description="queued + running + waiting jobs allowed per API key")
    max_page_size: int = 200
    max_submits_per_minute_per_key: int = Field(30, ge=1, description="job submissions one key may make in any minute")
    max_compiles_at_once: int = Field(
        4, ge=1, description="submit-time compiles (a custom task's baseline) this process runs at once, over every key"
    )
    max_compiles_at_once_per_key: int = Field(1, ge=1, description="submit-time compiles one key may have running at once")
    max_compiles_per_minute_per_key: int = Field(6, ge=1, description="submit-time compiles one key may start in any minute")
    max_auth_failures_per_minute_per_key: int = Field(
        10, ge=1, description="failed authentications of one key id in any minute; past it the key id gets 429 for the rest of it"
    )
    max_auth_failures_per_minute_per_address: int = Field(
        30, ge=1, description="failed authentications from one client address in any minute; past it the address gets 429"
    )
    max_streams_per_key: int = Field(8, ge=1, description="event streams one key may hold open at once")

    # Dashboard (app/web) and review queue (app/reviews.py)
    session_secret: SecretStr | None = Field(
        None,
        description="key that signs the dashboard's session cookies; default: generated once and kept in the database (shared by replicas)",
    )
    session_max_age_s: int = Field(12 * 3600, ge=60, description="a dashboard sign-in lasts this long")
    review_roofline_pct: float = Field(
        90.0, gt=0, description="an attempt whose time at any size is within this % of the roofline floor is flagged for review"
    )
    review_vendor_margin: float | None = Field(
        0.25,
        ge=0,
        description="an attempt more than this fraction faster than the vendor library (cuBLAS, cuDNN, ...) at a size where "
        "the vendor reference (app/vendor_reference.csv) is near the hardware is flagged: on the reference's GPU model "
        "by time, on another by % of the roofline floor; unset (null) turns the comparison off",
    )
    review_vendor_min_pct: float = Field(
        40.0,
        ge=0,
        description="the vendor comparison counts only at sizes where the vendor reference reaches this % of the roofline "
        "floor (below it the library is launch-bound or a poor fit: beating it is ordinary)",
    )
