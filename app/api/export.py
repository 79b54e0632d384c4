"""GET /api/v1/jobs/{id}/export: an attempt's kernel as a zip a team can build, test, benchmark and call from
PyTorch (issue 41). Who may: whoever may read the job's sources (app/services/export.py)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from ..bounds import INT32_MAX
from ..services import export
from .deps import Reader, SessionDep
from .errors import as_http, responses

router = APIRouter(prefix="/jobs", tags=["jobs"])
_ZIP: dict[int | str, dict[str, Any]] = {200: {"content": {"application/zip": {}}, "description": "the bundle, a zip"}}


@router.get(
    "/{job_id}/export",
    response_class=Response,
    summary="Export an attempt's kernel as a package (zip): CMake test and benchmark, PyTorch binding, README",
    responses=_ZIP | responses(401, 403, 404, 409),
)
def export_job(
    job_id: Annotated[str, Path(max_length=64, description="a job id, job_ and 16 hex digits")],
    session: SessionDep,
    caller: Reader,
    attempt: Annotated[int | None, Query(ge=1, le=INT32_MAX, description="an attempt id (default: the job's best)")] = None,
) -> Response:
    """409 when the attempt (or the job, for its best) has no correct kernel; 404 for an unknown job or attempt."""
    with as_http():
        bundle = export.export_for(session, caller, job_id, attempt)
    return Response(
        bundle.zip(),
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{bundle.name}.zip"'},
    )
