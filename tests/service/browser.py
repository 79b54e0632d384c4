"""A real headless Chromium (Debian's `chromium`, driven by Playwright) for the dashboard tests and scripts.

Playwright's own browser download needs a host we cannot reach: the system browser is used
(CUDAMASTER_TEST_CHROMIUM, default /usr/bin/chromium; `apt-get install -y chromium`). Root needs
--no-sandbox (Chromium's own sandbox, not the kernel sandbox of bench_tasks)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM = os.environ.get("CUDAMASTER_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed: pip install -e '.[dev]'"
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set CUDAMASTER_TEST_CHROMIUM)"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page: Any, base_url: str, key: str) -> None:
    page.goto(f"{base_url}/login")
    page.fill("input[name=key]", key)
    page.click("form[action='/login'] button[type=submit]")
    page.wait_for_load_state("load")
