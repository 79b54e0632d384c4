"""Issue 40, attack 12 (the API's half): the routes reach the database only through app/services (an import-linter
contract, kept by `lint-imports` in CI, and checked here on the sources), and the job spec's `profile_mode` and
`precision` defaults are written once (graph.contract re-exports them from the layers that define their literals)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("app.store", "app.db.models")


def _imports(path: Path) -> set[str]:
    """The absolute modules a file of app/api imports (relative imports resolved against app.api)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "app" if node.level == 2 else ("app.api" if node.level == 1 else "")
            module = ".".join(p for p in (base, node.module or "") if p)
            found |= {module} | {f"{module}.{a.name}" for a in node.names}
    return found


def test_no_route_imports_a_store_or_a_model_and_the_contract_says_so():
    offenders = {p.name: sorted(m for m in _imports(p) if m.startswith(FORBIDDEN)) for p in sorted((ROOT / "app" / "api").glob("*.py"))}
    assert not any(offenders.values()), offenders
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert any(
        c["type"] == "forbidden" and c["source_modules"] == ["app.api"] and set(FORBIDDEN) <= set(c["forbidden_modules"]) for c in contracts
    ), contracts


def _imports_of(path: Path, package: str) -> set[str]:
    """The absolute modules a file of `package` (app.api, app.web) imports, relative imports resolved."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) + 1 - node.level]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found |= {module} | {f"{module}.{a.name}" for a in node.names}
    return found


def test_routes_and_pages_compare_runs_through_the_service_and_the_contract_says_so():
    """app/api/compare.py and app/web/compare_pages.py (and the job page's diff) call app/services/compare.py only;
    of app/compare they import its response models alone."""
    offenders = {}
    for package in ("app.api", "app.web"):
        for path in sorted((ROOT / package.replace(".", "/")).glob("*.py")):
            wrong = sorted(m for m in _imports_of(path, package) if m.startswith("app.compare") and not m.startswith("app.compare.schemas"))
            if wrong:
                offenders[f"{package}.{path.stem}"] = wrong
    assert not offenders, offenders
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert any(
        c["type"] == "forbidden"
        and {"app.api", "app.web"} <= set(c["source_modules"])
        and {"app.compare.runs", "app.compare.campaigns"} <= set(c["forbidden_modules"])
        for c in contracts
    ), contracts


def test_profile_mode_and_precision_defaults_are_written_once():
    written = re.compile(r"""(=|or|,)\s*["'](filtered|fp32)["']\s*(,|\)|$)""", re.M)
    hits = []
    for package in ("app", "graph", "gpu", "profiling"):
        for path in (ROOT / package).rglob("*.py"):
            for line in path.read_text().splitlines():
                if written.search(line) and "Literal[" not in line and not line.lstrip().startswith("#"):
                    hits.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    allowed = {"profiling/modes.py"}
    hits = [h for h in hits if h.split(":")[0] not in allowed and "graph/runner.py" not in h]  # runner: a placeholder spec
    assert not hits, hits
