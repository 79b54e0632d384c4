"""The CI's own checks (.ci/run), in the standard library only (they run before the virtual environment exists):

    python3 scripts/ci_check.py tools                          # before anything is installed
    python3 scripts/ci_check.py skips JUNIT_XML                # after pytest, on its --junitxml file
    python3 scripts/ci_check.py postgres                       # PostgreSQL only (scripts/device_gpu_suite.sh)

`tools` fails at once, naming what is missing, when the CI machine lacks a tool the suite needs: without them the
tests that need it skip and CI would pass having run less (without nvcc about 290 more tests skip, without
PostgreSQL the 70 `[postgresql]` variants).

`skips` fails when a test that is not a GPU test skipped, unless its reason is one of ALLOWED_SKIPS below (each
says why it may skip on the CI machine). GPU tests are told apart by a property tests/conftest.py puts on every
`gpu`-marked test (`<property name="marker" value="gpu"/>` in the JUnit XML): they skip on the CPU machine and run
on the device (`pytest -m gpu`, scripts/device_gpu_suite.sh). It reads pytest's own report: no test runs twice.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

# (pattern of the skip message, why a non-GPU test may skip on the CI machine for it)
# On the CI machine (root, 2 cores, nvcc, bubblewrap, Chromium, PostgreSQL) no non-GPU test skips today (2026-12-07:
# 486 `gpu` items skip, nothing else).
ALLOWED_SKIPS: tuple[tuple[str, str], ...] = (
    (
        r"^the root fallback exists only for a service running as root$",
        "tests/bench/test_sandbox.py's check of the sandbox's fallback for a service running as root: CI runs as root "
        "and runs it; .ci/run started by an ordinary user skips it",
    ),
)

# Where the tests look for each tool (the same variables the tests read).
NVCC_VARIABLE = "CUDAMASTER_HARNESS__NVCC"
CHROMIUM_VARIABLE = "CUDAMASTER_TEST_CHROMIUM"
POSTGRES_VARIABLE = "CUDAMASTER_TEST_POSTGRES"  # tests/service/conftest.py's server (the default below)
POSTGRES_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True)
class Skip:
    test: str
    message: str


def postgres_address(environ: dict[str, str]) -> tuple[str, int]:
    url = urlsplit(environ.get(POSTGRES_VARIABLE) or POSTGRES_DEFAULT)
    return url.hostname or "127.0.0.1", url.port or 5432


def postgres_missing(environ: dict[str, str]) -> str | None:
    host, port = postgres_address(environ)
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as exc:
        return (
            f"PostgreSQL is not reachable at {host}:{port} ({exc}): start it (trust auth, database `test`; "
            f"{POSTGRES_VARIABLE} names another server); the [postgresql] variants of the service tests need it"
        )
    return None


def missing_tools(environ: dict[str, str] | None = None) -> list[str]:
    """What the CI machine lacks, one sentence each (what to do included); empty when nothing is missing."""
    env = dict(os.environ) if environ is None else environ
    path = env.get("PATH", "")
    problems = []
    nvcc = env.get(NVCC_VARIABLE, "nvcc")
    if shutil.which(nvcc, path=path) is None:
        problems.append(
            f"nvcc is missing ({nvcc!r} not on PATH; {NVCC_VARIABLE} names another): install the CUDA toolkit's compiler; "
            "about 290 tests compile kernels with it"
        )
    if (postgres := postgres_missing(env)) is not None:
        problems.append(postgres)
    if shutil.which("bwrap", path=path) is None:
        problems.append("bubblewrap (bwrap) is missing: apt-get install bubblewrap; kernels compile and run in its sandbox")
    chromium = env.get(CHROMIUM_VARIABLE) or shutil.which("chromium", path=path) or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        problems.append(f"chromium is missing (no {chromium}): apt-get install chromium; the dashboard's browser tests drive it")
    return problems


def skips(xml: Path) -> tuple[list[Skip], int]:
    """The skipped tests that are not `gpu`-marked, and how many `gpu`-marked ones skipped."""
    root = ET.parse(xml).getroot()
    plain: list[Skip] = []
    gpu = 0
    for case in root.iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None:
            continue
        if any(p.get("name") == "marker" and p.get("value") == "gpu" for p in case.iter("property")):
            gpu += 1
            continue
        message = skipped.get("message") or skipped.text or ""
        plain.append(Skip(f"{case.get('classname')}::{case.get('name')}", message))
    return plain, gpu


def unexpected(found: list[Skip]) -> list[Skip]:
    return [s for s in found if not any(re.search(pattern, s.message) for pattern, _ in ALLOWED_SKIPS)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="check", required=True)
    sub.add_parser("tools", help=f"fail when nvcc, PostgreSQL ({POSTGRES_VARIABLE}), bubblewrap or Chromium is missing")
    sub.add_parser("postgres", help=f"only PostgreSQL ({POSTGRES_VARIABLE}): scripts/device_gpu_suite.sh asks")
    sk = sub.add_parser("skips", help="fail when a non-GPU test skipped for a reason not in ALLOWED_SKIPS")
    sk.add_argument("junit", type=Path)
    args = ap.parse_args(argv)
    if args.check == "tools":
        problems = missing_tools()
        for p in problems:
            print(f"CI cannot run the whole suite: {p}", file=sys.stderr)
        return 1 if problems else 0
    if args.check == "postgres":
        problem = postgres_missing(dict(os.environ))
        print(problem or "PostgreSQL reachable", file=sys.stderr if problem else sys.stdout)
        return 1 if problem else 0
    found, gpu = skips(args.junit)
    bad = unexpected(found)
    print(f"skips: {gpu} gpu tests (run on the device), {len(found) - len(bad)} allowed, {len(bad)} not allowed")
    for s in bad:
        print(f"  not allowed to skip: {s.test}: {s.message}", file=sys.stderr)
    if bad:
        print(
            "a non-GPU test skipped on CI: make it run here, mark it gpu, or add its reason to ALLOWED_SKIPS in scripts/ci_check.py (say why)",
            file=sys.stderr,
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
