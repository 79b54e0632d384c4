"""A server that answers with the CUDAMASTER_* variables it sees (tests/service/test_server_env.py): the health path
the tests' Server waits for, and /env."""

from __future__ import annotations

import os

from fastapi import FastAPI


def create_app() -> FastAPI:
    app = FastAPI()

    @app.get("/api/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/env")
    def env() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k.startswith("CUDAMASTER_")}

    return app
