"""Export (issue 41) of STORED jobs with FAKE measurements, through the command line and the API (each role's key,
tried from the other key's side), and the bundles themselves: their CUDA sources compile (and the custom task's
links, its kernel's helper localised next to the baseline's of the same name) with nvcc, and their PyTorch
binding's C++ compiles against torch's headers. The page's button: test_export_browser.py. On the GPU:
scripts/device_export.sh builds, tests and benchmarks the same six bundles."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sysconfig
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import cli
from app.db.engine import make_engine, make_sessionmaker
from app.main import create_app
from bench_tasks.spec import load_task
from settings import ServiceSettings
from tests.support import export_jobs as ej

from .conftest import make_key

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]
API = "/api/v1"
ROLES = {"owner": ("member", "red"), "mate": ("member", "red"), "viewer": ("viewer", "red"), "reviewer": ("reviewer", "red")}
ROLES |= {"admin": ("admin", "ops"), "stranger": ("member", "blue")}
MISSING_JOB = "job_00000000deadbeef"
GENCODE = "-gencode=arch=compute_90,code=sm_90"
BUNDLE_FILES = {"kernel.cu", "kernel.h", "CMakeLists.txt", "test_kernel.cu", "bench_kernel.cu", "setup.py", "kernel_torch.py"}
BUNDLE_FILES |= {
    "binding.cpp",
    "binding_baseline.cpp",
    "binding.h",
    "test_torch.py",
    "README.md",
    "provenance.json",
    "task_data.h",
    "bundle_common.h",
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A SQLite database with a key per role and the six FAKE-measured jobs of tests/support/export_jobs.py (owner's, team red)."""
    tmp = tmp_path_factory.mktemp("export")
    url = f"sqlite:///{tmp / 'service.db'}"
    keys = {who: make_key(url, who, role=role, team=team) for who, (role, team) in ROLES.items()}
    owner_id = keys["owner"].split("_")[1]
    engine = make_engine(url)
    jobs = {}
    with make_sessionmaker(engine)() as session:
        for case in ej.CASES:
            task = ej.store_custom_task(session, owner_id) if case.name == "custom" else case.task
            sizes = ej.CUSTOM_SPEC["sizes"] if case.name == "custom" else load_task(task).size_list("paper")
            evaluation = ej.fake_evaluation(task, case.precision, sizes)
            job = ej.store_job(
                session, task=task, precision=case.precision, source=case.source(), evaluation=evaluation, api_key_id=owner_id, team="red"
            )
            jobs[case.name] = (job.id, job.best_attempt_id, next(a.id for a in job.attempts if a.verdict != "ok"))
        from app.store import jobs as store

        empty = store.create_job(session, task="vector_add", precision="fp32", settings={}, api_key_id=owner_id, team="red")
        jobs["empty"] = (empty.id, None, None)
    engine.dispose()
    return url, keys, jobs, tmp


def _export(url: str, *args: str):
    return CliRunner().invoke(cli, ["export", *args, "--database-url", url])


@pytest.fixture(scope="module")
def bundles(stored):
    """Every job's bundle exported with `cudamaster export JOB -o DIR`."""
    url, _, jobs, tmp = stored
    out = {}
    for case in ej.CASES:
        job_id = jobs[case.name][0]
        result = _export(url, job_id, "-o", str(tmp / "bundles" / case.name))
        assert result.exit_code == 0, result.output
        out[case.name] = tmp / "bundles" / case.name
    return out


def test_cli_exports_a_directory_and_a_zip_of_the_same_files_FAKE(stored, bundles):
    url, _, jobs, tmp = stored
    job_id, best, _wrong = jobs["sparse"]
    folder = bundles["sparse"]
    assert {p.name for p in folder.iterdir()} >= BUNDLE_FILES
    assert (folder / "kernel.cu").read_text() == ej.CASES[3].source()  # unchanged
    provenance = json.loads((folder / "provenance.json").read_text())
    assert provenance["job"] == job_id and provenance["attempt"] == best and provenance["models"] == ["export-model"]
    for name, digest in provenance["files"].items():
        import hashlib

        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    readme = (folder / "README.md").read_text()
    assert "FAKE NVIDIA H100" in readme and "not run" in readme
    first = " ".join(f"{k}={v}" for k, v in load_task("spmv_coo").size_list("paper")[0].items())
    assert f"| {first} | 20.000 | 10.000 | 2.000 | 50.0 |" in readme  # the service's measurement, as stored
    assert "spmv_coo_bf16_optimized" in (folder / "kernel.h").read_text()

    result = _export(url, job_id, "--attempt", str(best), "-o", str(tmp / "sparse.zip"))
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp / "sparse.zip") as z:
        names = {n.split("/", 1)[1] for n in z.namelist()}
        assert names == {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        assert all(n.startswith(f"spmv_coo_bf16_{job_id}_a{best}/") for n in z.namelist())


def test_cli_refuses_what_cannot_be_exported_and_writes_nothing_FAKE(stored):
    url, _, jobs, tmp = stored
    job_id, _, wrong = jobs["gemm"]
    cases = [
        ([MISSING_JOB], "no job"),
        ([jobs["empty"][0]], "has no correct kernel to export yet"),
        ([job_id, "--attempt", str(wrong)], "verdict wrong_answer"),
        ([job_id, "--attempt", "999999"], "has no attempt 999999"),
    ]
    for args, why in cases:
        result = _export(url, *args, "-o", str(tmp / "refused"))
        assert result.exit_code == 2 and why in result.output, (args, result.output)
        assert not (tmp / "refused").exists()


@pytest.fixture(scope="module")
def api(stored):
    url = stored[0]
    with TestClient(create_app(ServiceSettings(database_url=url))) as client:
        yield client


def test_api_export_from_each_roles_key_and_the_other_teams_side_FAKE(stored, api):
    _, keys, jobs, _ = stored
    job_id, best, wrong = jobs["custom"]
    path = f"{API}/jobs/{job_id}/export"
    for who in ("owner", "mate", "viewer", "reviewer", "admin"):
        r = api.get(path, headers={"X-API-Key": keys[who]})
        assert r.status_code == 200, (who, r.text)
        assert r.headers["content-type"] == "application/zip"
        assert f"_{job_id}_a{best}.zip" in r.headers["content-disposition"]
        with zipfile.ZipFile(io.BytesIO(r.content)) as z:
            assert {n.split("/", 1)[1] for n in z.namelist()} >= BUNDLE_FILES
    # Another team's key: exactly the answer for a job that does not exist (ids do not leak).
    r = api.get(path, headers={"X-API-Key": keys["stranger"]})
    twin = api.get(path.replace(job_id, MISSING_JOB), headers={"X-API-Key": keys["stranger"]})
    assert r.status_code == twin.status_code == 404
    assert r.json()["detail"].replace(job_id, MISSING_JOB) == twin.json()["detail"]
    assert api.get(path).status_code == 401
    r = api.get(path, params={"attempt": wrong}, headers={"X-API-Key": keys["viewer"]})
    assert r.status_code == 409 and "no correct kernel" in r.json()["detail"]
    r = api.get(f"{API}/jobs/{jobs['empty'][0]}/export", headers={"X-API-Key": keys["owner"]})
    assert r.status_code == 409 and "no correct kernel to export yet" in r.json()["detail"]
    r = api.get(path, params={"attempt": 999999}, headers={"X-API-Key": keys["owner"]})
    assert r.status_code == 404 and "has no attempt 999999" in r.json()["detail"]


def _nvcc(args: list[str], cwd: Path) -> None:
    done = subprocess.run(["nvcc", GENCODE, "-O1", "-std=c++17", *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{cwd.name}: nvcc {' '.join(args)}\n{done.stderr[-3000:]}"


def _compile(folder: Path) -> None:
    """The kernel as the bundle builds it (alone, the harness's includes in front), and test_kernel.cu with
    bench_kernel.cu (the generated code) in one translation unit (task_data.h is included once: #pragma once); compile
    only. The baselines are the harness's own, compiled by its tests (tests/bench/test_baseline_kernels.py)."""
    kernel = (folder / "kernel_source.txt").read_text().strip()
    _nvcc(["--pre-include", "kernel_prelude.h", "-c", kernel, "-o", "kernel.o"], folder)
    (folder / "both.cu").write_text(
        '#define main test_main\n#include "test_kernel.cu"\n#undef main\n#define main bench_main\n#include "bench_kernel.cu"\n'
    )
    _nvcc(["-I.", "-c", "both.cu", "-o", "both.o"], folder)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_every_bundles_cuda_sources_compile_with_nvcc_and_the_custom_one_links_FAKE(bundles):
    custom = bundles["custom"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(_compile, [f for f in bundles.values() if f != custom]))
    # The custom bundle is built whole without CMake (build.sh): its kernel defines a kernel named as its baseline's,
    # which the build localises (objcopy) so that both link into test_kernel and bench_kernel.
    env = os.environ | {"CMX_GENCODE": GENCODE}
    done = subprocess.run(["./build.sh", "linked"], cwd=custom, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (custom / "linked" / "test_kernel").is_file() and (custom / "linked" / "bench_kernel").is_file()


def test_every_bundles_binding_compiles_against_torchs_headers_FAKE(bundles, tmp_path):
    """One translation unit: torch/extension.h once, every bundle's binding.h in a namespace of its own, and one
    bundle's binding.cpp (the module definition); built as the extension would be (g++, C++17, torch's include paths)."""
    from torch.utils.cpp_extension import include_paths

    homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda", str(Path(shutil.which("nvcc") or "/").resolve().parent.parent)]
    cuda_include = next((Path(h) / "include" for h in homes if h and (Path(h) / "include" / "cuda_bf16.h").is_file()), None)
    assert cuda_include is not None, f"no CUDA include directory with cuda_bf16.h under {homes}: set CUDA_HOME"
    lines = ["#include <torch/extension.h>"]
    for i, folder in enumerate(bundles.values()):
        lines += [f"#define CMX_BINDING_NS b{i}", f'#include "{folder / "binding.h"}"', "#undef CMX_BINDING_NS"]
    lines += ["#define CMX_BINDING_NS b0", f'#include "{next(iter(bundles.values())) / "binding.cpp"}"']
    (tmp_path / "bindings.cpp").write_text("\n".join(lines) + "\n")
    includes = [f"-I{p}" for p in [*include_paths(), sysconfig.get_paths()["include"], str(cuda_include)]]
    done = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-w", "-DTORCH_EXTENSION_NAME=cmx_bindings", *includes, "bindings.cpp"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_bundle_python_computes_the_harness_lengths_FAKE(bundles, monkeypatch):
    """kernel_torch.py's lengths and scalars (the task's expressions as generated Python) equal the harness's at every size."""
    import importlib.util

    for name, folder in bundles.items():
        monkeypatch.syspath_prepend(str(folder))
        spec = importlib.util.spec_from_file_location(f"kernel_torch_{name}", folder / "kernel_torch.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for size in module.TASK["test_sizes"]:
            n = module.names(size["params"])
            assert module.lengths(n) == size["lengths"], (name, size["label"])
            assert module.scalars(n) == pytest.approx(size["scalars"]), (name, size["label"])


def test_sanitizer_verdicts_are_read_from_wherever_the_attempt_holds_them():
    """The bundle's README shows the attempt's compute-sanitizer verdicts where it has them (issue 41 part 1 stores
    them), and 'not run' otherwise: a typed list, a dict keyed by tool, or the evaluation document's entry."""
    from types import SimpleNamespace

    from app.services.export import sanitizer_verdicts

    assert sanitizer_verdicts(SimpleNamespace(evaluation=None)) is None
    assert sanitizer_verdicts(SimpleNamespace(evaluation={"sanitizer": []})) is None
    listed = [{"tool": "memcheck", "verdict": "clean"}, {"tool": "racecheck", "verdict": "not_run", "reason": "Device not supported"}]
    rows = sanitizer_verdicts(SimpleNamespace(sanitizer=listed, evaluation={}))
    assert rows == [
        {"tool": "memcheck", "verdict": "clean", "detail": ""},
        {"tool": "racecheck", "verdict": "not_run", "detail": "Device not supported"},
    ]
    keyed = {"verdicts": {"synccheck": {"verdict": "findings", "findings": ["barrier in divergent code at k.cu:12"]}}}
    assert sanitizer_verdicts(SimpleNamespace(evaluation={"sanitizer": keyed})) == [
        {"tool": "synccheck", "verdict": "findings", "detail": "barrier in divergent code at k.cu:12"}
    ]
    # The shape the service stores: SanitizerVerdict's own dump, whose findings are its `report` lines.
    from bench_tasks.harness.result import SanitizerStatus, SanitizerVerdict

    stored = SanitizerVerdict(tool="racecheck", status=SanitizerStatus.findings, kernel="k", errors=1, report=["Race at k.cu:7"])
    assert sanitizer_verdicts(SimpleNamespace(sanitizer=[stored.model_dump(mode="json")], evaluation={})) == [
        {"tool": "racecheck", "verdict": "findings", "detail": "Race at k.cu:7"}
    ]


def test_attempt_measured_at_sizes_not_the_tasks_is_a_409_not_a_server_error_FAKE(tmp_path):
    """A stored attempt whose rows' parameters are not its task's (N for square_matrix_mul's M) cannot be exported:
    a 409 that says so (schemathesis found a 500 here, the bundle's size expressions raising)."""
    from app.services.errors import Conflict
    from app.services.export import export_stored

    engine = make_engine(f"sqlite:///{tmp_path / 'service.db'}")
    from app.db.models import Base

    Base.metadata.create_all(engine)
    with make_sessionmaker(engine)() as session:
        evaluation = ej.fake_evaluation("square_matrix_mul", "fp32", [{"N": 1024}])
        job = ej.store_job(
            session,
            task="square_matrix_mul",
            precision="fp32",
            source=ej.CASES[0].source(),
            evaluation=evaluation,
            api_key_id=None,
            team="red",
        )
        with pytest.raises(Conflict, match=r"do not fit task square_matrix_mul .*unknown name 'M'"):
            export_stored(session, job.id)
    engine.dispose()
