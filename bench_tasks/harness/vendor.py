"""Vendor references: the registry, where the vendor libraries are, and their trusted compile and link.

`bench_tasks/vendor/<task>.cu` defines `<op>_vendor` and `<op>_bf16_vendor` with the task's published
prototypes, built on cuBLAS, cuSPARSE, cuFFT, cuDNN or CUB; `vendor.toml` there lists, for every task,
the reference and the libraries it links, or why there is none. A reference is a candidate we trust: it
is compiled with the libraries' include directories and linked against them (with an rpath, so that the
driver finds them at run time), its prototype is checked as a candidate's is (the expected prototype is
re-declared after its code), but not its symbols: it is allowed what candidates are not. Its entry is
renamed to the candidate entry, so the generated driver times it in the candidate's place.

The locator looks for each library's headers and shared objects, in this order: the directories in
`CUDAMASTER_HARNESS__VENDOR_PATHS` (settings.vendor_paths: a root with include/ and lib/, or those directories
themselves), the CUDA toolkit that nvcc belongs to, the system's include and library directories, and the
`nvidia/*/{include,lib}` directories of the Python wheels (nvidia-cublas, nvidia-cusparse, nvidia-cufft,
nvidia-cudnn-cu13) in every site-packages directory. `library_dirs()` lists what it found, for a sandbox
that must make those directories visible (read-only) to the compile, the link and the driver.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import site
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from bench_tasks.spec import Variant
from settings import HarnessSettings

from . import compile as cc
from .compile import CompileOutcome
from .errors import VendorUnavailable
from .result import Verdict
from .sandbox import toolkit_root

VENDOR_DIR = Path(__file__).resolve().parent.parent / "vendor"
REGISTRY = VENDOR_DIR / "vendor.toml"
ENTRY_SUFFIX = "_vendor"


# -- the registry -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VendorReference:
    task: str
    libraries: tuple[str, ...]
    timed: str
    path: Path


@cache
def _registry() -> tuple[dict[str, VendorReference], dict[str, str]]:
    data = tomllib.loads(REGISTRY.read_text())
    refs = {
        name: VendorReference(name, tuple(entry["libraries"]), entry["timed"], VENDOR_DIR / f"{name}.cu")
        for name, entry in data.get("reference", {}).items()
    }
    none = {name: entry["reason"] for name, entry in data.get("none", {}).items()}
    return refs, none


def references() -> dict[str, VendorReference]:
    """Every vendor reference, by task name."""
    return dict(_registry()[0])


def no_reference() -> dict[str, str]:
    """Tasks without a vendor reference, with the reason."""
    return dict(_registry()[1])


def reference_for(task: str) -> VendorReference | None:
    return _registry()[0].get(task)


def require_reference(task: str) -> VendorReference:
    ref = reference_for(task)
    if ref is not None:
        return ref
    why = _registry()[1].get(task)
    if why is not None:
        raise VendorUnavailable(f"task {task} has no vendor reference: {why}")
    raise VendorUnavailable(f"task {task} is not in {REGISTRY}: add a [reference.{task}] or [none.{task}] entry")


_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)


def reference_source(ref: VendorReference) -> str:
    """The reference's text with the vendor directory's own headers inlined (each once), so that it
    compiles alone in any scratch directory."""
    seen: set[str] = set()

    def expand(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            path = VENDOR_DIR / name
            if not path.is_file():
                return m.group(0)
            if name in seen:
                return f"// {name}: already included\n"
            seen.add(name)
            return f"// ---- {name} ----\n" + expand(path.read_text()) + f"\n// ---- end of {name} ----\n"

        return _INCLUDE.sub(one, text)

    return expand(ref.path.read_text())


# -- where the libraries are ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LibrarySpec:
    name: str
    headers: tuple[str, ...]
    libs: tuple[str, ...]  # shared objects, as lib<name>.so[.N]


LIBRARIES: dict[str, LibrarySpec] = {
    "cublas": LibrarySpec("cublas", ("cublas_v2.h", "cublasLt.h"), ("cublas", "cublasLt")),
    "cusparse": LibrarySpec("cusparse", ("cusparse.h",), ("cusparse",)),
    "cufft": LibrarySpec("cufft", ("cufft.h", "cufftXt.h"), ("cufft",)),
    "cudnn": LibrarySpec("cudnn", ("cudnn.h",), ("cudnn",)),
    "cub": LibrarySpec("cub", (), ()),  # CCCL: headers only, part of the CUDA toolkit nvcc uses
}
PIP_HINT = (
    "pip install nvidia-cublas nvidia-cusparse nvidia-cufft nvidia-cudnn-cu13 (headers and libraries), or point "
    "CUDAMASTER_HARNESS__VENDOR_PATHS (a JSON list) at directories that hold include/ and lib/"
)


@dataclass(frozen=True)
class FoundLibrary:
    name: str
    origin: str  # vendor_paths | toolkit | system | wheel
    include_dir: Path | None
    lib_files: tuple[Path, ...]


@dataclass(frozen=True)
class _Root:
    origin: str
    includes: tuple[Path, ...]
    libs: tuple[Path, ...]


def _site_dirs() -> list[Path]:
    dirs = []
    candidates = [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
    for d in candidates:
        p = Path(d)
        if p.name in ("site-packages", "dist-packages") and p.is_dir() and p not in dirs:
            dirs.append(p)
    return dirs


def search_roots(settings: HarnessSettings) -> list[_Root]:
    """Where the locator looks, in order."""
    roots: list[_Root] = []
    for p in settings.vendor_paths:
        roots.append(_Root("vendor_paths", (p / "include", p), (p / "lib", p / "lib64", p)))
    top = toolkit_root(settings.nvcc)
    if top is not None:
        target = top / "targets" / f"{platform.machine()}-linux"
        roots.append(_Root("toolkit", (target / "include", top / "include"), (target / "lib", top / "lib64", top / "lib")))
    triple = f"{platform.machine()}-linux-gnu"
    roots.append(
        _Root(
            "system",
            (Path("/usr/include") / triple, Path("/usr/include"), Path("/usr/local/include")),
            (Path("/usr/lib") / triple, Path("/usr/lib64"), Path("/usr/lib"), Path("/usr/local/lib")),
        )
    )
    for sp in _site_dirs():
        for pkg in sorted((sp / "nvidia").glob("*")) if (sp / "nvidia").is_dir() else []:
            roots.append(_Root("wheel", (pkg / "include",), (pkg / "lib",)))
    return roots


def _shared_object(directory: Path, name: str) -> Path | None:
    """lib<name>.so, else the highest lib<name>.so.<N...> in `directory`."""
    plain = directory / f"lib{name}.so"
    if plain.exists():
        return plain
    versioned = [p for p in directory.glob(f"lib{name}.so.*") if re.fullmatch(rf"lib{re.escape(name)}\.so(\.\d+)+", p.name)]
    if not versioned:
        return None
    return max(versioned, key=lambda p: tuple(int(v) for v in p.name.split(".so.")[1].split(".")))


def _headers_in(roots: list[_Root], spec: LibrarySpec) -> list[tuple[str, Path]]:
    return [(r.origin, d) for r in roots for d in r.includes if all((d / h).is_file() for h in spec.headers)]


def _libs_in(roots: list[_Root], spec: LibrarySpec) -> list[tuple[str, tuple[Path, ...]]]:
    found = []
    for r in roots:
        for d in r.libs:
            files = [_shared_object(d, n) for n in spec.libs]
            if all(f is not None for f in files):
                found.append((r.origin, tuple(f for f in files if f is not None)))
    return found


def locate(name: str, settings: HarnessSettings) -> FoundLibrary:
    """Headers and shared objects of one library (raises VendorUnavailable naming where it looked)."""
    spec = LIBRARIES.get(name)
    if spec is None:
        raise VendorUnavailable(f"unknown vendor library {name!r}; known: {', '.join(LIBRARIES)}")
    if not spec.headers and not spec.libs:
        return FoundLibrary(name, "toolkit", None, ())
    roots = search_roots(settings)
    for root in roots:  # headers and libraries from the same place first
        heads, libs = _headers_in([root], spec), _libs_in([root], spec)
        if heads and libs:
            return FoundLibrary(name, root.origin, heads[0][1], libs[0][1])
    heads, libs = _headers_in(roots, spec), _libs_in(roots, spec)
    if heads and libs:
        return FoundLibrary(name, f"{heads[0][0]}+{libs[0][0]}", heads[0][1], libs[0][1])
    missing = ("headers " + ", ".join(spec.headers)) if not heads else ("libraries " + ", ".join(f"lib{n}.so" for n in spec.libs))
    looked = "; ".join(f"{r.origin}: {', '.join(str(d) for d in (r.includes if not heads else r.libs))}" for r in roots)
    raise VendorUnavailable(f"{name}: {missing} not found (looked in {looked}). {PIP_HINT}")


def available(name: str, settings: HarnessSettings) -> bool:
    try:
        locate(name, settings)
        return True
    except VendorUnavailable:
        return False


def library_dirs(settings: HarnessSettings, names: tuple[str, ...] | None = None) -> list[Path]:
    """The include and library directories of the libraries found here (for a sandbox to bind read-only)."""
    dirs: list[Path] = []
    for name in names or tuple(LIBRARIES):
        if not available(name, settings):
            continue
        lib = locate(name, settings)
        for d in ([lib.include_dir] if lib.include_dir else []) + [f.parent for f in lib.lib_files]:
            for p in (d, Path(os.path.realpath(d))):
                if p not in dirs:
                    dirs.append(p)
    return dirs


# The compiler searches these anyway: an -I for them would only change their order.
_DEFAULT_INCLUDES = {Path("/usr/include"), Path("/usr/local/include"), Path("/usr/include") / f"{platform.machine()}-linux-gnu"}


def build_flags(libraries: tuple[str, ...], settings: HarnessSettings) -> tuple[list[str], list[str]]:
    """(nvcc compile flags, link flags) for code that uses `libraries`: -I for each include directory, each
    shared object by path, and an rpath (DT_RPATH, so that it also serves the libraries' own dependencies)
    to its directory."""
    include, link, rpaths = [], [], []
    for name in libraries:
        lib = locate(name, settings)
        if lib.include_dir is not None and lib.include_dir not in _DEFAULT_INCLUDES and f"-I{lib.include_dir}" not in include:
            include.append(f"-I{lib.include_dir}")
        for f in lib.lib_files:
            link += ["-Xlinker", str(f)]
            if str(f.parent) not in rpaths:
                rpaths.append(str(f.parent))
    if "cudnn" in libraries and available("cublas", settings):  # cuDNN's engines load cuBLASLt at run time
        for f in locate("cublas", settings).lib_files:
            if str(f.parent) not in rpaths:
                rpaths.append(str(f.parent))
    if rpaths:
        link += ["-Xlinker", "--disable-new-dtags"] + [a for d in rpaths for a in ("-Xlinker", f"-rpath={d}")]
    return include, link


# -- compiling a reference ------------------------------------------------------------------------------------------------


def vendor_entry(variant: Variant) -> str:
    return variant.entry + ENTRY_SUFFIX


@dataclass
class VendorBuild:
    outcome: CompileOutcome
    link_flags: list[str]
    source: str
    reference: VendorReference


def compile_vendor(variant: Variant, settings: HarnessSettings) -> VendorBuild:
    """Compile the task's vendor reference for this precision (raises VendorUnavailable when there is none
    or its libraries are missing). The outcome's object exports the candidate entry."""
    ref = require_reference(variant.task.name)
    source = reference_source(ref)
    include, link = build_flags(ref.libraries, settings)
    flags = cc.candidate_flags(settings) + include
    entry = vendor_entry(variant)
    text = source + cc._proto_check_lines(variant, entry)
    rc, log, obj = cc._nvcc_object(text, "vendor", flags, settings, "vendor")
    if rc is None:
        return VendorBuild(
            CompileOutcome(
                Verdict.timeout, f"nvcc did not finish the vendor reference within {settings.compile_timeout_s:.0f} s", log, flags=flags
            ),
            link,
            source,
            ref,
        )
    if rc != 0:
        return VendorBuild(
            CompileOutcome(
                Verdict.compile_error, f"the vendor reference {ref.path.name} does not compile: " + cc._first_error(log), log, flags=flags
            ),
            link,
            source,
            ref,
        )
    return VendorBuild(CompileOutcome(None, "", log, _renamed(obj, entry, variant.candidate_entry), flags), link, source, ref)


def _renamed(obj: Path, entry: str, as_entry: str) -> Path:
    """The object with `entry` renamed to `as_entry`, every other global symbol made local."""
    key = hashlib.sha256(f"{entry}->{as_entry}".encode()).hexdigest()[:8]
    out = obj.with_name(f"{obj.stem}.{as_entry}.{key}.o")
    if not out.exists():
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        subprocess.run(["objcopy", f"--redefine-sym={entry}={as_entry}", str(obj), str(tmp)], check=True, capture_output=True)
        subprocess.run(["objcopy", f"--keep-global-symbol={as_entry}", str(tmp), str(tmp)], check=True, capture_output=True)
        os.replace(tmp, out)
    return out


def compile_check(task: str, settings: HarnessSettings) -> tuple[bool, str]:
    """Compile the task's reference once with the expected prototypes of every precision re-declared after it
    (what CI can do without a GPU): (compiled and every prototype matches, nvcc's first error)."""
    from bench_tasks.spec import load_task

    ref = require_reference(task)
    t = load_task(task)
    variants = [t.variant(p) for p in t.prototypes]
    include, _ = build_flags(ref.libraries, settings)
    text = reference_source(ref) + "".join(cc._proto_check_lines(v, vendor_entry(v)) for v in variants)
    rc, log, _obj = cc._nvcc_object(text, "vendor_check", cc.candidate_flags(settings) + include, settings, "vendor_check")
    return rc == 0, "" if rc == 0 else cc._first_error(log) if rc is not None else "nvcc timed out"


def prebuild_vendor(variant: Variant, settings: HarnessSettings) -> None:
    """Compile what a vendor evaluate() will need (the baseline, the reference, the linked driver), so that it
    finds them in the cache; failures are left for evaluate() to report as verdicts."""
    from .driver import driver_source

    try:
        base = cc.compile_baseline(variant, settings)
        built = compile_vendor(variant, settings)
        if built.outcome.ok:
            cc.build_driver(variant, driver_source(variant, True), base, built.outcome.object_path, settings, link_flags=built.link_flags)
    except (VendorUnavailable, RuntimeError, cc.LinkError, subprocess.CalledProcessError):
        return
