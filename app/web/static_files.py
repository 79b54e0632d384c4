"""The dashboard's static files, compressed and cacheable.

- Compressed: gzip when the browser accepts it (Starlette's GZipMiddleware around the files; the API docs'
  1.7 MB script goes out as about 0.5 MB).
- Cached: a URL that names its version is cached for a year (`immutable`): the vendored libraries (their
  directory names carry their versions: vendor/uplot-1.6.32/...) and our own files linked as
  `/static/dashboard.js?v=<content hash>` (`static_url`, a Jinja global of the pages). Any other URL is
  `no-cache`: the browser revalidates it with its ETag (304, no body) before each use.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from starlette.datastructures import Headers, QueryParams
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import ASGIApp, Scope

STATIC = Path(__file__).parent / "static"
PREFIX = "/static"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
VERSIONED_DIRS = ("vendor/",)


@lru_cache(maxsize=256)
def _version(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256((STATIC / path).read_bytes()).hexdigest()[:12]


def version(path: str) -> str:
    """The content hash of static/`path` (recomputed when the file changes)."""
    st = os.stat(STATIC / path)
    return _version(path, st.st_mtime_ns, st.st_size)


def static_url(path: str) -> str:
    """The URL of static/`path` that names its version: browsers cache it for a year."""
    if path.startswith(VERSIONED_DIRS):
        return f"{PREFIX}/{path}"
    return f"{PREFIX}/{path}?v={version(path)}"


class CachedStaticFiles(StaticFiles):
    def file_response(
        self, full_path: os.PathLike[str] | str, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = FileResponse(full_path, status_code=status_code, stat_result=stat_result)
        response.headers["Cache-Control"] = self._cache_control(scope)
        response.headers["X-Content-Type-Options"] = "nosniff"
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response

    def _cache_control(self, scope: Scope) -> str:
        path = self.get_path(scope)
        if path.startswith(VERSIONED_DIRS):
            return IMMUTABLE
        wanted = QueryParams(scope.get("query_string", b"")).get("v")
        try:
            current = version(path)
        except OSError:
            return REVALIDATE
        return IMMUTABLE if wanted == current else REVALIDATE


def app() -> ASGIApp:
    """The /static mount: the files, gzipped for browsers that accept it."""
    return GZipMiddleware(CachedStaticFiles(directory=STATIC), minimum_size=500)
