"""`cudamaster export JOB_ID [--attempt N] -o DIR|FILE.zip` (mounted by app/cli.py): an attempt's kernel as a
package a team can build, test, benchmark and call from PyTorch (issue 41). Reads the service's database, as
`cudamaster campaign report` does; the bundle is the one GET /api/v1/jobs/{id}/export answers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def export(
    job_id: Annotated[str, typer.Argument(help="the job, e.g. job_0123456789abcdef")],
    out: Annotated[Path, typer.Option("--out", "-o", help="a directory to write the bundle into, or FILE.zip")],
    attempt: Annotated[int | None, typer.Option(help="the attempt id (default: the job's best kernel)", min=1)] = None,
    database_url: Annotated[str | None, typer.Option(help="the service's database (default: CUDAMASTER_SERVICE__DATABASE_URL)")] = None,
) -> None:
    """Export a job's kernel (its best, or --attempt) as a package: kernel.cu and kernel.h, a CMake test and
    benchmark, a PyTorch extension with its pytest, README.md with the measurements, provenance.json."""
    from bench_tasks.export import write_directory

    from .service_cli import _fail, _settings, database_session
    from .services.errors import ServiceError
    from .services.export import export_stored

    url = _settings(database_url=database_url).database_url
    with database_session(url) as session:
        try:
            bundle = export_stored(session, job_id, attempt)
        except ServiceError as exc:
            _fail(str(exc))
    if out.suffix == ".zip":
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(bundle.zip())
    else:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            _fail(f"{out} exists and is not an empty directory: give a new directory, or FILE.zip")
        write_directory(bundle.files, out)
    typer.echo(f"wrote {len(bundle.files)} files of {bundle.name} to {out}; see its README.md to build, test and benchmark it")
