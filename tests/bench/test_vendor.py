"""Vendor references: the registry covers every task, the references define the published prototypes (the CUB-only
ones compiled against them on every machine with nvcc; those that need cuBLAS, cuSPARSE, cuFFT or cuDNN marked `gpu`:
they compile on the device machine, which has the libraries, and fail there if one is missing), the locator finds
headers and libraries and links with an rpath, and evaluate() refuses what it cannot measure."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from bench_tasks.harness import VendorUnavailable, evaluate
from bench_tasks.harness import compile as cc
from bench_tasks.harness import vendor as vd
from bench_tasks.harness.driver import driver_source
from bench_tasks.spec import all_tasks, load_task
from settings import HarnessSettings
from tests.conftest import Ahead, requires_nvcc
from tests.support.workers import compile_cache

TASKS = {t.name: t for t in all_tasks()}
REFS = vd.references()
NONE = vd.no_reference()


def test_every_task_has_a_reference_or_a_reason():
    for name in TASKS:
        assert (name in REFS) != (name in NONE), f"{name}: needs exactly one of [reference.{name}] / [none.{name}] in vendor.toml"
    for name, why in NONE.items():
        assert len(why) > 20, f"{name}: say why there is no vendor reference"


def test_every_reference_has_its_file_and_known_libraries():
    files = {p.stem for p in vd.VENDOR_DIR.glob("*.cu")}
    assert files == set(REFS), "every .cu in bench_tasks/vendor is registered, and every registered one exists"
    for ref in REFS.values():
        assert ref.libraries and set(ref.libraries) <= set(vd.LIBRARIES), ref.task
        assert ref.timed, ref.task


@pytest.mark.parametrize("name", sorted(set(REFS) & set(TASKS)))
def test_reference_defines_both_published_entries(name):
    source = vd.reference_source(REFS[name])
    assert '#include "' not in source.replace('#include "cm', ""), "the vendor headers are inlined"
    for precision, variant in ((p, TASKS[name].variant(p)) for p in TASKS[name].prototypes):
        entry = vd.vendor_entry(variant)
        assert re.search(rf'extern "C" void {re.escape(entry)}\(', source), f"{name}/{precision}: defines {entry}"
    uses = {
        lib
        for lib, pattern in (
            ("cublas", r"\bcublas\w*\("),
            ("cusparse", r"\bcusparse\w*\("),
            ("cufft", r"\bcufft\w*\("),
            ("cudnn", r"\bcudnn\w*\("),
            ("cub", r"\bcub::"),
        )
        if re.search(pattern, source)
    }
    listed = set(REFS[name].libraries)
    assert uses - {"cub"} == listed - {"cub"}, f"{name}: vendor.toml lists exactly the libraries the file links"
    assert "cub" not in listed or "cub" in uses, f"{name}: lists CUB but does not use it"


def test_inlining_includes_each_header_once():
    text = vd.reference_source(REFS["dot_product"])  # cub_util.cuh and cublas_util.cuh both include vendor_common.cuh
    assert text.count("---- vendor_common.cuh ----") == 1 and "vendor_common.cuh: already included" in text


# -- the locator ------------------------------------------------------------------------------------------------------------


def _fake_install(root: Path, soname: str = "13") -> Path:
    (root / "include").mkdir(parents=True)
    (root / "lib").mkdir()
    for h in ("cublas_v2.h", "cublasLt.h", "cudnn.h"):
        (root / "include" / h).write_text("")
    for lib in ("cublas", "cublasLt"):
        for v in (soname, "9"):
            (root / "lib" / f"lib{lib}.so.{v}").write_text("")
    return root


def test_locator_prefers_vendor_paths_and_the_highest_soname_in_a_fake_install(tmp_path):
    root = _fake_install(tmp_path / "wheel")
    s = HarnessSettings(vendor_paths=[root])
    found = vd.locate("cublas", s)
    assert found.origin == "vendor_paths" and found.include_dir == root / "include"
    assert [f.name for f in found.lib_files] == ["libcublas.so.13", "libcublasLt.so.13"]
    inc, link = vd.build_flags(("cublas",), s)
    assert inc == [f"-I{root / 'include'}"]
    assert link[:4] == ["-Xlinker", str(root / "lib" / "libcublas.so.13"), "-Xlinker", str(root / "lib" / "libcublasLt.so.13")]
    assert "--disable-new-dtags" in link and f"-rpath={root / 'lib'}" in link
    assert root / "lib" in vd.library_dirs(s, ("cublas",))
    assert vd.locate("cub", s).lib_files == ()  # headers only, from the toolkit


def test_locator_names_where_it_looked_and_how_to_fix_in_a_fake_install(tmp_path):
    root = _fake_install(tmp_path / "partial")
    s = HarnessSettings(vendor_paths=[root])
    if vd.available("cufft", HarnessSettings()):
        pytest.skip("cuFFT is installed on this machine")
    with pytest.raises(
        VendorUnavailable, match=r"cufft: headers cufft.h, cufftXt.h not found .*vendor_paths.*CUDAMASTER_HARNESS__VENDOR_PATHS"
    ):
        vd.locate("cufft", s)


def test_evaluate_refuses_what_it_cannot_measure():
    with pytest.raises(VendorUnavailable, match="RELU has no vendor reference: elementwise"):
        evaluate("RELU", "fp32", implementation="vendor")
    with pytest.raises(ValueError, match="pass no candidate source"):
        evaluate("vector_add", "fp32", 'extern "C" void vector_add_optimized() {}', implementation="vendor")
    with pytest.raises(ValueError, match="implementation must be"):
        evaluate("vector_add", "fp32", implementation="cublas")


# -- compiling the references -----------------------------------------------------------------------------------------------


def _needs_libraries(name: str) -> bool:
    """A reference that links a library beyond the toolkit (cuBLAS, cuSPARSE, cuFFT, cuDNN): CI does not download
    their 1.3 GB of wheels, the device machine has them."""
    return any(vd.LIBRARIES[lib].headers or vd.LIBRARIES[lib].libs for lib in REFS[name].libraries)


def _every_reference() -> list:
    """CUB-only references run everywhere; the others are `gpu` tests (the device machine's libraries)."""
    names = sorted(set(REFS) & set(TASKS))
    return [pytest.param(n, marks=pytest.mark.gpu) if _needs_libraries(n) else n for n in names]


def _library_missing(names: tuple[str, ...], s: HarnessSettings) -> str | None:
    missing = [lib for lib in names if not vd.available(lib, s)]
    if not missing:
        return None
    return (
        f"{', '.join(missing)} not found here: the device machine must have them "
        "(pip install nvidia-cublas nvidia-cusparse nvidia-cufft nvidia-cudnn-cu13, or set CUDAMASTER_HARNESS__VENDOR_PATHS)"
    )


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> HarnessSettings:
    return HarnessSettings(cache_dir=compile_cache(tmp_path_factory))  # the run's one cache, for all xdist workers


@pytest.fixture(scope="module")
def compile_checks(request, settings) -> Ahead:
    """Every collected reference's compile check, started at once on all cores (CUB and cuDNN headers: ~10 s each)."""
    return Ahead(
        request, "test_reference_compiles_against_the_published_prototypes", ("name",), lambda name: vd.compile_check(name, settings)
    )


@requires_nvcc
@pytest.mark.slow
@pytest.mark.parametrize("name", _every_reference())
def test_reference_compiles_against_the_published_prototypes(name, compile_checks, settings):
    """CUB-only references everywhere (CUB ships with the toolkit); the others on the device machine (`gpu`), where
    their libraries must be found: a prototype that differs from the task's fails here, exactly as it would for a
    candidate."""
    assert (missing := _library_missing(REFS[name].libraries, settings)) is None, f"{name}: {missing}"
    ok, error = compile_checks.get(name)
    assert ok, f"{name}: {error}"


@pytest.mark.gpu
@pytest.mark.parametrize("library", sorted(lib for lib, spec in vd.LIBRARIES.items() if spec.headers or spec.libs))
def test_device_machine_has_every_vendor_library(library, settings):
    """The device machine's GPU runs compile and time every vendor reference: a library missing there is a failure,
    not a skip."""
    assert (missing := _library_missing((library,), settings)) is None, missing


@requires_nvcc
def test_a_mismatched_prototype_is_caught(settings, tmp_path, monkeypatch):
    wrong = tmp_path / "vector_add.cu"
    wrong.write_text(REFS["reverse_array"].path.read_text().replace("reverse_array", "vector_add"))
    monkeypatch.setitem(vd._registry()[0], "vector_add", vd.VendorReference("vector_add", ("cub",), "test", wrong))
    ok, error = vd.compile_check("vector_add", settings)
    assert not ok and "vector_add_vendor" in error


@requires_nvcc
@pytest.mark.slow
def test_reference_links_into_a_driver_that_exports_only_the_candidate_entry(settings):
    """The renamed object is what the driver calls in the candidate's place; every other symbol is local."""
    variant = load_task("reverse_array").variant("bf16")
    built = vd.compile_vendor(variant, settings)
    assert built.outcome.ok, built.outcome.message
    defined = subprocess.run(["nm", "-g", "--defined-only", str(built.outcome.object_path)], capture_output=True, text=True).stdout
    names = {line.split()[-1] for line in defined.splitlines() if line.split()[-2] in "TDBRW"}
    assert names == {"reverse_array_bf16_optimized"}
    exe = cc.build_driver(
        variant,
        driver_source(variant, True),
        cc.compile_baseline(variant, settings),
        built.outcome.object_path,
        settings,
        link_flags=built.link_flags,
    )
    assert exe.is_file()


@requires_nvcc
@pytest.mark.gpu
@pytest.mark.slow
def test_library_reference_links_with_an_rpath(settings):
    """On the device machine (it has cuBLAS): the driver needs libcublas and carries an rpath to it."""
    s = settings.model_copy()
    assert (missing := _library_missing(("cublas",), s)) is None, missing
    variant = load_task("matrix_mul").variant("fp32")
    built = vd.compile_vendor(variant, s)
    assert built.outcome.ok, built.outcome.message
    exe = cc.build_driver(
        variant, driver_source(variant, True), cc.compile_baseline(variant, s), built.outcome.object_path, s, link_flags=built.link_flags
    )
    dynamic = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True).stdout
    assert "libcublas.so" in dynamic and "RPATH" in dynamic and str(vd.locate("cublas", s).lib_files[0].parent) in dynamic
