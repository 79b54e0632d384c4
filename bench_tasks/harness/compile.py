"""Compiling and linking: candidates, baselines and drivers, cached by content hash.

A candidate is compiled to an object on its own, its prototype is checked by re-declaring the
expected one after its code, its symbols are checked against an allowlist (CUDA runtime, C math,
C++ support) before anything runs, and every global symbol but its entry point is made local so
that it can neither collide with the baseline nor interpose on the runtime.

Those symbol checks are the first line only. Every nvcc run, every nm/objdump/objcopy/c++filt pass and
every link runs in the OS sandbox (sandbox.py) in a scratch directory of its own, with only the files it
needs copied in; what it builds is copied into the cache afterwards (the cache is not visible inside).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from bench_tasks.prototype import ABI_NAMES, AbiParam, entry_refusal, parse_abi_params
from bench_tasks.spec import Variant
from settings import HarnessSettings

from . import lru
from .result import Verdict
from .sandbox import sandbox_for, scratch, stage
from .symbols import CANDIDATE_DEFINES, refusals

PROTO_MARK = "cudamaster: expected prototype"

# nvcc runs this process actually started (cache misses), per kind ("candidate", "baseline", ...): a
# Ray worker reports it, and the tests prove with it that an evaluation reuses the compile node's object.
NVCC_RUNS: Counter[str] = Counter()


@dataclass
class CompileOutcome:
    verdict: Verdict | None  # None: compiled and passed the symbol checks
    message: str = ""
    log: str = ""
    object_path: Path | None = None
    flags: list[str] = field(default_factory=list)
    cached: bool = False
    params: int | None = None  # how many of the task's parameters the entry declares (trailing ones with defaults may be left out)

    @property
    def ok(self) -> bool:
        return self.verdict is None


@cache
def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    m = re.search(r"release [\d.]+, (V[\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else "unknown"


def _hash(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:24]


def arch_flags(settings: HarnessSettings) -> list[str]:
    sm = settings.nvcc_arch.removeprefix("sm_")
    return [f"-gencode=arch=compute_{sm},code=sm_{sm}"]


def candidate_flags(settings: HarnessSettings, extra: list[str] | None = None) -> list[str]:
    return list(settings.nvcc_flags) + arch_flags(settings) + list(CANDIDATE_DEFINES) + list(extra or [])


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on `directory` (created if needed): one compile per cache entry at a time,
    across threads and processes (the `bench run` pipeline compiles ahead while evaluations run)."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _publish(built: Path, dest: Path) -> None:
    """Copy a file built in a scratch directory into the cache (atomically: concurrent builds may race)."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    shutil.copyfile(built, tmp)
    os.chmod(tmp, 0o755 if os.access(built, os.X_OK) else 0o644)
    os.replace(tmp, dest)


def _nvcc(settings: HarnessSettings) -> str:
    return shutil.which(settings.nvcc) or settings.nvcc


def _nvcc_object(
    source_text: str,
    name: str,
    flags: list[str],
    settings: HarnessSettings,
    kind: str,
    includes: tuple[Path, ...] = (),
    suffix: str = ".cu",
) -> tuple[int | None, str, Path]:
    """Compile in the sandbox, in a scratch directory (`includes` copied there, found with -I.); cache the object."""
    box = sandbox_for(settings)  # refuses here when no sandbox can be set up, cached object or not
    # The sandbox's kind is in the key: an object built without it (opt-out) is never reused with it.
    key = _hash(kind, source_text, " ".join(flags), nvcc_version(settings.nvcc), box.kind)
    work = settings.cache_dir / "objects" / key
    obj = work / f"{name}.o"
    with _locked(work):
        if obj.exists() and (work / "ok").exists():
            lru.touch(work / "log.txt")
            return 0, (work / "log.txt").read_text() if (work / "log.txt").exists() else "", obj
        with scratch(settings, "cm-build-") as tmp:
            NVCC_RUNS[kind] += 1
            src = tmp / f"{name}{suffix}"
            src.write_text(source_text)
            inputs = [src, *(stage(f, tmp) for f in includes)]
            inc = [f"-I{tmp}"] if includes else []
            rc, log = box.run(
                [_nvcc(settings), *flags, *inc, "-std=c++17", "-c", str(src), "-o", str(tmp / obj.name)],
                scratch=tmp,
                read_only=inputs,
                timeout=settings.compile_timeout_s,
                what="the compiler",
            )
            if rc == 0 and not (tmp / obj.name).is_file():
                rc, log = 1, log + "\nnvcc wrote no object file"
            (work / "log.txt").write_text(log)
            if rc == 0:
                _publish(tmp / obj.name, obj)
                (work / "ok").write_text("")
    if rc == 0:  # a new entry: keep the cache within its bound
        prune_compile_cache(settings)
    return rc, log, obj


def prune_compile_cache(settings: HarnessSettings) -> int:
    """Keep the compiled objects and drivers under `compile_cache_max_bytes` (least recently used go
    first; see lru.py); returns the bytes removed."""
    found = lru.entries(settings.cache_dir / "objects", "log.txt") + lru.entries(settings.cache_dir / "drivers", "driver")
    return lru.prune(found, settings.compile_cache_max_bytes, COMPILE_CACHE_GRACE_S)


COMPILE_CACHE_GRACE_S = 600.0  # an entry used this recently is kept (a link may be about to read it)


class ObjectTooLarge(ValueError):
    pass


def check_size(path: Path, what: str, settings: HarnessSettings) -> None:
    """Raise ObjectTooLarge when a file built from code we did not write passes `max_object_bytes`."""
    size = path.stat().st_size
    if size > settings.max_object_bytes:
        raise ObjectTooLarge(
            f"the {what} is {size} bytes; the limit is {settings.max_object_bytes} "
            "(CUDAMASTER_HARNESS__MAX_OBJECT_BYTES): large constant tables belong in device memory filled at run time"
        )


@dataclass
class _Listing:
    defined: str  # nm -g --defined-only
    undefined: str  # nm -u
    disassembly: str  # objdump -d of the host code


_LISTING_SCRIPT = (
    'nm -u "$1" > undefined.txt && nm -g --defined-only "$1" > defined.txt && objdump -d --no-show-raw-insn "$1" > disassembly.txt'
)


def _listing(obj: Path, settings: HarnessSettings) -> _Listing:
    """nm and objdump over an object we did not write, in one sandboxed run (kept next to the object)."""
    cached = obj.with_suffix(".listing.json")
    if cached.exists():
        return _Listing(**json.loads(cached.read_text()))
    with scratch(settings, "cm-inspect-") as tmp:
        staged = stage(obj, tmp)
        rc, out = sandbox_for(settings).run(
            ["/bin/sh", "-c", _LISTING_SCRIPT, "sh", str(staged)], scratch=tmp, read_only=[staged], timeout=settings.compile_timeout_s
        )
        if rc != 0:
            raise RuntimeError(f"listing the symbols of {obj.name} failed (exit {rc}): {out.strip()[-500:]}")
        listing = _Listing(*((tmp / f"{part}.txt").read_text(errors="replace") for part in ("defined", "undefined", "disassembly")))
    tmp_file = cached.with_name(f".{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp_file.write_text(json.dumps(listing.__dict__))
    os.replace(tmp_file, cached)
    return listing


def _symbols(nm_output: str) -> list[tuple[str, str]]:
    syms = []
    for line in nm_output.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            syms.append((parts[-2], parts[-1]))
    return syms


def forbidden_imports(obj: Path, settings: HarnessSettings) -> list[str]:
    """The undefined symbols of `obj` that a candidate may not import (symbols.py says why)."""
    return list(forbidden_import_reasons(obj, settings))


def forbidden_import_reasons(obj: Path, settings: HarnessSettings, provided: frozenset[str] = frozenset()) -> dict[str, str]:
    """`provided`: symbols the link provides that the object may use (the baseline's kernels, baseline_kernel_symbols)."""
    return refusals([name for _, name in _symbols(_listing(obj, settings).undefined)], provided)


def raw_syscalls(obj: Path, settings: HarnessSettings) -> bool:
    """Host code that issues system calls itself, bypassing the symbol allowlist. (The first line only: the
    instruction can hide inside another's bytes; the sandbox is what stops it.)"""
    out = _listing(obj, settings).disassembly
    return bool(re.search(r"\t(syscall|sysenter|int\s+\$0x80)\b", out))


def _demangle(names: list[str], settings: HarnessSettings) -> list[str]:
    """c++filt over symbol names from an object we did not write (in the sandbox: it parses them)."""
    with scratch(settings, "cm-demangle-") as tmp:
        rc, out = sandbox_for(settings).run(["c++filt", *names], scratch=tmp, timeout=30, merge_stderr=False)
    lines = out.split("\n")
    return lines[: len(names)] if rc == 0 and len(lines) >= len(names) else names


def _proto_check_lines(variant: Variant, entry: str) -> str:
    params = ", ".join(p.c_decl(with_default=False) for p in variant.prototype.params)
    return f'\n// {PROTO_MARK}\nextern "C" void {entry}({params});\n'


def compile_candidate(variant: Variant, source: str, settings: HarnessSettings, extra_flags: list[str] | None = None) -> CompileOutcome:
    """Compile a prepared candidate source (see source.prepare) and check its entry and symbols."""
    return _compile_untrusted(variant, source, variant.candidate_entry, settings, candidate_flags(settings, extra_flags), "candidate")


ABI_PROBE_FILE = "cudamaster_abi_probe.cu"
_ABI_PROBE_PREFIX = "_ZN14cudamaster_abi5probeI"
_ABI_PROBE_TYPE = re.compile(r"^void cudamaster_abi::probe<(?P<type>.+), (?P<shape>-?\d+)>\(\)$")
_FUNCTION_POINTER = re.compile(r"^(?P<ret>.+?) \(\*\)\((?P<params>.*)\)(?: noexcept)?$")


def _allowed_counts(variant: Variant, allow_defaults: bool) -> list[int]:
    """How many parameters the entry may take: all, or fewer when the left-out trailing ones have defaults."""
    params = variant.prototype.params
    counts = [len(params)]
    while allow_defaults and counts[-1] > 0 and params[counts[-1] - 1].default is not None:
        counts.append(counts[-1] - 1)
    return counts


_MAX_PROBED_TYPES = 256  # a custom task with more pointers than that: only the one-function probe


def _accepted_types(variant: Variant, n: int) -> list[str]:
    """Every function pointer type the rule accepts with the task's first `n` parameters: the task's types,
    each pointer to const or not (top-level const and __restrict__ are not part of a function's type)."""
    params = variant.prototype.params[:n]
    pointers = [i for i, p in enumerate(params) if p.pointer]
    if 2 ** len(pointers) > _MAX_PROBED_TYPES:
        return []
    types = []
    for mask in range(2 ** len(pointers)):
        spelled = []
        for i, p in enumerate(params):
            const = p.pointer and bool(mask >> pointers.index(i) & 1)
            spelled.append(("const " if const else "") + ABI_NAMES[p.ctype] + ("*" if p.pointer else ""))
        types.append(f"void (*)({', '.join(spelled)})")
    return types


def _probed_types(variant: Variant, allow_defaults: bool) -> list[str]:
    """The function types the probe resolves the entry's name against, in the order of their probe ids."""
    return [t for n in _allowed_counts(variant, allow_defaults) for t in _accepted_types(variant, n)]


def _abi_probe_lines(variant: Variant, entry: str, allow_defaults: bool = True) -> str:
    """Appended to code we did not write: explicit instantiations whose mangled names are the entry's function
    type as the compiler sees it (typedefs resolved; names, top-level const and __restrict__ gone): the
    prototype is then compared by ABI (bench_tasks/prototype.entry_refusal), not by text.

    `probe<F, -1>`: the type of the one function of that name; `none` when the name is overloaded (a
    `__global__` kernel or a helper of the same name beside the extern "C" entry: legal C++). Then
    `probe<F, i>` for each function type the rule accepts (_accepted_types, every count of parameters the
    task allows): that type when an overload of the name has it exactly, else `none`. _abi_of keeps the
    one that is not a C++ overload in the object: the extern "C" entry's."""
    lines = [f'\n#line 1 "{ABI_PROBE_FILE}"\n// {PROTO_MARK}: the type of the entry point, read back from the object']
    if any(p.ctype == "__nv_bfloat16" for p in variant.prototype.params):
        lines.append("struct __nv_bfloat16;")  # as cuda_bf16.h declares it: the probe compiles without the header
    lines += [
        "namespace cudamaster_abi {",
        "struct none {};",
        "template <typename F, int Shape> void probe() {}",
        "template <class T, class F> auto same(F f) -> decltype(f);",
        "template <class T, class F> F exact(F f);",
        f"template <class T> auto pick_same(int) -> decltype(same<T>(&{entry}));",
        "template <class T> none pick_same(...);",
        "template void probe<decltype(pick_same<void>(0)), -1>();",
    ]
    for i, spelled in enumerate(_probed_types(variant, allow_defaults)):
        lines += [
            f"template <class T> auto pick{i}(int) -> decltype(exact<T, {spelled}>(&{entry}));",
            f"template <class T> none pick{i}(...);",
            f"template void probe<decltype(pick{i}<void>(0)), {i}>();",
        ]
    return "\n".join([*lines, "}"]) + "\n"


def _abi_of(entry: str, symbols: set[str], shapes: int, settings: HarnessSettings) -> tuple[str, list[AbiParam]] | str:
    """(return type, parameters) of the extern "C" entry from the probe's symbols, or why they cannot be read.
    `symbols`: the object's defined and undefined names (its C++ overloads of `entry` among them); `shapes`: how
    many typed probes the harness wrote (ids -1 .. shapes-1, each exactly once: any other is the candidate's)."""
    probes = sorted(name for name in symbols if name.startswith(_ABI_PROBE_PREFIX))
    found: dict[int, str] = {}
    seen: set[int] = set()
    for text in _demangle(probes, settings):
        m = _ABI_PROBE_TYPE.match(text)
        if not m or int(m.group("shape")) in seen or not -1 <= int(m.group("shape")) < shapes:
            return f"the object holds a cudamaster_abi::probe symbol the harness did not write ({text}): a candidate may not define that namespace"
        seen.add(int(m.group("shape")))
        if m.group("type") != "cudamaster_abi::none":
            found[int(m.group("shape"))] = m.group("type")
    if len(seen) != shapes + 1:
        return f"the object holds {len(seen)} of the harness's {shapes + 1} cudamaster_abi::probe symbols: a candidate may not define that namespace"
    types = [found[-1]] if -1 in found else [t for n, t in sorted(found.items()) if t not in _cxx_overloads(entry, symbols, settings)]
    if len(types) != 1:
        return (
            f"{entry} is overloaded and no single overload has the task's parameters: keep one "
            'extern "C" function of that name with the expected prototype (a same-named kernel or helper beside it must take '
            "other parameters, or rename it)"
        )
    m = _FUNCTION_POINTER.match(types[0])
    if not m:
        raise RuntimeError(f"reading the entry point's type back failed (c++filt gave {types[0]!r}): a harness bug")
    return m.group("ret"), parse_abi_params(m.group("params"))


def _cxx_overloads(entry: str, symbols: set[str], settings: HarnessSettings) -> set[str]:
    """The function types (as probe spells them, `void (*)(float*, int)`) of the C++ functions named `entry` in the object."""
    prefix = f"_Z{len(entry)}{entry}"
    names = sorted(name for name in symbols if name.startswith(prefix))
    return {f"void (*)({d[len(entry) + 1 : -1]})" for d in _demangle(names, settings) if d.startswith(entry + "(")}


def _compile_untrusted(variant: Variant, source: str, entry: str, settings: HarnessSettings, flags: list[str], kind: str) -> CompileOutcome:
    """Compile code we did not write: the entry's type read back and compared by ABI, symbols checked, globals localised.

    Trailing whitespace is dropped first (the probe starts a `#line` of its own, so nothing of the object or the
    messages changes): a file (`bench eval`) and the same code read from a model's reply (stripped) are then
    one text, one cache entry, one compile."""
    text = source.rstrip() + "\n" + _abi_probe_lines(variant, entry, allow_defaults=kind != "custom_baseline")
    rc, log, obj = _nvcc_object(text, kind, flags, settings, kind)
    expected = variant.prototype.renamed(entry).c_declaration()
    if rc is None:
        return CompileOutcome(Verdict.timeout, f"nvcc did not finish within {settings.compile_timeout_s:.0f} s", log, flags=flags)
    if rc != 0:
        unresolved = re.search(r"Unresolved extern function '([^']+)'", log)
        if unresolved:
            return CompileOutcome(Verdict.compile_error, _extern_device_call(unresolved.group(1), settings), log, flags=flags)
        errors = [line for line in log.splitlines() if re.search(r"\): error|:\d+:(\d+:)? error", line)]
        if errors and all(ABI_PROBE_FILE in line for line in errors):  # the candidate compiled; the probe did not
            if any("is undefined" in line for line in errors):
                return CompileOutcome(Verdict.link_error, f"missing entry point {entry}. Expected: {expected}", log, flags=flags)
            return CompileOutcome(
                Verdict.link_error,
                f"{entry} is overloaded (or a template) and no single overload has the task's parameters: keep one "
                f'extern "C" function of that name with the expected prototype (a same-named kernel or helper beside it '
                f"must take other parameters, or rename it). Expected: {expected}",
                log,
                flags=flags,
            )
        return CompileOutcome(Verdict.compile_error, _first_error(log), log, flags=flags)
    try:
        check_size(obj, f"{kind} object", settings)
    except ObjectTooLarge as exc:
        return CompileOutcome(Verdict.rejected, str(exc), log, flags=flags)
    defined = {name for kind, name in _symbols(_listing(obj, settings).defined)}
    if entry not in defined:
        cxx = [d for d, raw in zip(_demangle(sorted(defined), settings), sorted(defined), strict=True) if d.startswith(entry + "(")]
        hint = ' It is defined with C++ linkage: declare it extern "C".' if cxx else ""
        return CompileOutcome(Verdict.link_error, f"missing entry point {entry}.{hint} Expected: {expected}", log, obj, flags)
    listing = _listing(obj, settings)
    shapes = len(_probed_types(variant, kind != "custom_baseline"))
    abi = _abi_of(entry, defined | {name for _, name in _symbols(listing.undefined)}, shapes, settings)
    if isinstance(abi, str):
        verdict = Verdict.rejected if "cudamaster_abi" in abi else Verdict.link_error
        return CompileOutcome(verdict, f"{abi}. Expected: {expected}", log, obj, flags)
    ret, params = abi
    why = entry_refusal(variant.prototype, entry, ret, params, allow_defaults=kind != "custom_baseline")
    if why:
        return CompileOutcome(Verdict.link_error, why, log, obj, flags)
    refused = _host_code_refusal(variant, obj, kind, settings)
    if refused:
        return CompileOutcome(Verdict.rejected, refused, log, obj, flags)
    return CompileOutcome(None, "", log, _localized(obj, entry, settings), flags, params=len(params))


def _host_code_refusal(variant: Variant, obj: Path, kind: str, settings: HarnessSettings) -> str | None:
    """Why the object's host code is refused (a forbidden symbol, a direct system call), or None."""
    bad = forbidden_import_reasons(obj, settings)
    if bad and kind == "candidate":  # launches of the baseline's kernels are allowed (the published format's)
        bad = forbidden_import_reasons(obj, settings, baseline_kernel_symbols(variant, settings))
    if bad:
        first, why = next(iter(bad.items()))
        others = f" (also refused: {', '.join(list(bad)[1:10])})" if len(bad) > 1 else ""
        return f"forbidden symbol {first}: {why}{others}"
    if raw_syscalls(obj, settings):
        return (
            "host code issues system calls directly (a `syscall` instruction): not allowed; remove the inline assembly "
            "(host code may only launch kernels, manage device memory and print)"
        )
    return None


# Stream creation in code we compile goes through the runtime's wrappers, which make every stream
# blocking (see cm_runtime.h): no work can run outside the harness's events on the default stream.
BLOCKING_STREAM_WRAPPERS = {
    "cudaStreamCreateWithFlags": "cm_stream_create_with_flags",
    "cudaStreamCreateWithPriority": "cm_stream_create_with_priority",
}


def _localized(obj: Path, keep: str, settings: HarnessSettings, also_keep: tuple[str, ...] = ()) -> Path:
    """Every global symbol but `keep` made local, stream creation renamed to the blocking wrappers.

    COMDAT section groups are removed too (`-R .group`): a template or inline function the object shares
    with the harness's own objects (a `std::vector<int>` destructor, say) would otherwise be a group the
    linker keeps from the first object and discards from this one, leaving this object's references to
    its now-local copy unresolved ("defined in discarded section", seen with the H200 image's host
    compiler). Ungrouped, the object keeps its own private copy, as localisation intends."""
    renames = [f"--redefine-sym={old}={new}" for old, new in BLOCKING_STREAM_WRAPPERS.items()] + ["-R", ".group"]
    kept = [f"--keep-global-symbol={name}" for name in (keep, *also_keep)]
    out = obj.with_name(f"{obj.stem}.{keep}.{_hash(*renames, *kept[1:])[:8]}.o")
    if not out.exists():  # built aside and published atomically: the pipeline may localise one object twice at once
        with scratch(settings, "cm-objcopy-") as tmp:
            staged = stage(obj, tmp)
            rc, log = sandbox_for(settings).run(
                ["objcopy", *kept, *renames, str(staged), str(tmp / out.name)],
                scratch=tmp,
                read_only=[staged],
                timeout=settings.compile_timeout_s,
            )
            if rc != 0 or not (tmp / out.name).is_file():
                raise RuntimeError(f"objcopy of {obj.name} failed (exit {rc}): {log.strip()[-500:]}")
            _publish(tmp / out.name, out)
    return out


def _extern_device_call(symbol: str, settings: HarnessSettings) -> str:
    name = _demangle([symbol], settings)[0]
    return (
        f"device function {name} is declared but not defined in the candidate. A candidate is compiled without "
        "relocatable device code, so its kernels cannot call a __device__ function of another file (the baseline's "
        "included): copy the function into the candidate. The baseline's __global__ kernels can be declared and launched."
    )


def _first_error(log: str) -> str:
    sandbox = next((line for line in log.splitlines() if line.startswith("CMERR sandbox ")), None)
    if sandbox:  # the sandbox stopped the compiler (disk, file size or CPU limit)
        return sandbox.removeprefix("CMERR sandbox ")[:400]
    for line in log.splitlines():
        if "error" in line:
            return re.sub(r"\S*/((?:candidate|custom_baseline)\.cu)", r"\1", line.strip())[:400]
    return log.strip().splitlines()[-1][:400] if log.strip() else "nvcc failed"


class BaselineError(ValueError):
    """A custom task's baseline does not build or uses forbidden symbols; `outcome` says how."""

    def __init__(self, outcome: CompileOutcome):
        super().__init__(f"the task's baseline: {outcome.verdict.value}: {outcome.message}")  # type: ignore[union-attr]
        self.outcome = outcome


def compile_baseline(variant: Variant, settings: HarnessSettings) -> Path:
    """The baseline's object, every global symbol local but its entry and (built-in baselines) its kernels."""
    if variant.task.custom:  # a team's own baseline is untrusted code too
        text, flags = variant.task.baseline_source(), candidate_flags(settings)
        outcome = _compile_untrusted(variant, text, variant.entry, settings, flags, "custom_baseline")
        if not outcome.ok:
            raise BaselineError(outcome)
        return outcome.object_path  # type: ignore[return-value]
    obj = _builtin_baseline_object(variant, settings)
    return _localized(obj, variant.entry, settings, tuple(sorted(_kernel_stubs(obj, settings))))


def _builtin_baseline_object(variant: Variant, settings: HarnessSettings) -> Path:
    rc, log, obj = _nvcc_object(variant.task.baseline_source(), "baseline", candidate_flags(settings), settings, "baseline")
    if rc != 0:
        raise RuntimeError(f"baseline of {variant.key} failed to compile (a harness bug):\n{log}")
    return obj


def baseline_kernel_symbols(variant: Variant, settings: HarnessSettings) -> frozenset[str]:
    """The host-stub symbols of the baseline's `__global__` kernels, which stay global in its linked object.

    In the published format the optimized block shares a file with a copy of the baseline, and published
    kernels declare and launch its kernels (conv_2d BF16: `extern "C" __global__ void conv_2d_bf16_kernel(...)`;
    spmv_coo BF16: `__global__ void spmv_coo_float_kernel(...)`). A host-side launch calls the kernel's host
    stub, which registers and launches the baseline's own device code: it resolves across objects without
    relocatable device code. A `__device__` function of the baseline cannot be called that way (that needs
    -rdc and a device link): a candidate copies the helper into its own file. A team's own baseline (a custom
    task) exports nothing: it is untrusted code, localised like a candidate."""
    if variant.task.custom:
        return frozenset()
    return frozenset(_kernel_stubs(_builtin_baseline_object(variant, settings), settings))


_DEVICE_STUB = re.compile(r"_Z(\d+)__device_stub__")


def _kernel_stubs(obj: Path, settings: HarnessSettings) -> set[str]:
    """The defined global host stubs of `obj`'s top-level kernels (see kernel_stub_names)."""
    return kernel_stub_names({name for kind, name in _symbols(_listing(obj, settings).defined) if kind in "TW"})


def kernel_stub_names(defined: set[str]) -> set[str]:
    """Which of an object's defined global symbols are host stubs of top-level kernels, found by nvcc's
    `__device_stub__` helpers: for `__global__ void k(float*)` nvcc emits the launch stub `_Z1kPf` (`k` with
    C linkage) and a helper `_Z<n>__device_stub__Z1kPfPf` whose name holds the kernel's mangled name. A kernel
    in a namespace or a class is not found (none of our baselines has one)."""
    stubs = set()
    for name in defined:
        m = _DEVICE_STUB.match(name)
        inner = name[m.end() : m.end() + int(m.group(1)) - len("__device_stub__")] if m else ""
        ident = re.match(r"Z(\d+)", inner)
        if not ident:
            continue
        mangled, plain = "_" + inner, inner[ident.end() : ident.end() + int(ident.group(1))]
        if mangled in defined:
            stubs.add(mangled)
        elif plain in defined:  # extern "C"
            stubs.add(plain)
    return stubs


RUNTIME_DIR = Path(__file__).parent / "runtime"
RUNTIME_HEADERS = ("cm_driver.h", "cm_refresh.h", "cm_host.h", "cm_kernels.h")


def compile_runtime(settings: HarnessSettings) -> tuple[Path, Path]:
    """The harness runtime as two objects, compiled once per content and flags, at the same time: its host
    code (runtime/cm_runtime.h, plain C++ for the host compiler) and its kernels (runtime/cm_kernels.cu).
    One nvcc run over both took twice as long: its device passes and the host compiler's pass over the
    host code ran one after the other."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        kernels = pool.submit(_compile_runtime_part, "cm_kernels", ".cu", ["-O2", *arch_flags(settings)], settings)
        host = _compile_runtime_part("cm_runtime", ".cpp", ["-O2"], settings)
        return host, kernels.result()


def _compile_runtime_part(name: str, suffix: str, flags: list[str], settings: HarnessSettings) -> Path:
    files = ("cm_runtime.h", *RUNTIME_HEADERS)
    text = "".join((RUNTIME_DIR / f).read_text() for f in files)
    source = (RUNTIME_DIR / f"{name}{suffix}").read_text() + f"// runtime {_hash(text)}\n"
    rc, log, obj = _nvcc_object(source, name, flags, settings, "runtime", includes=tuple(RUNTIME_DIR / f for f in files), suffix=suffix)
    if rc != 0:
        raise RuntimeError(f"the harness runtime failed to compile (a harness bug):\n{log}")
    return obj


def compile_driver_object(variant: Variant, driver_source: str, settings: HarnessSettings) -> Path:
    """The generated driver's host code (C++ against cm_driver.h) as an object, compiled once per content."""
    headers = "".join((RUNTIME_DIR / f).read_text() for f in RUNTIME_HEADERS)
    rc, log, drv_obj = _nvcc_object(
        driver_source + "\n// headers " + _hash(headers),
        "driver",
        ["-O2"],
        settings,
        "driver",
        includes=tuple(RUNTIME_DIR / f for f in RUNTIME_HEADERS),
        suffix=".cpp",
    )
    if rc != 0:
        raise RuntimeError(f"generated driver for {variant.key} failed to compile (a harness bug):\n{log}")
    return drv_obj


def build_driver(
    variant: Variant,
    driver_source: str,
    baseline_obj: Path,
    candidate_obj: Path | None,
    settings: HarnessSettings,
    link_flags: list[str] | None = None,
) -> Path:
    """Compile the generated driver (host C++ against cm_driver.h) and link it with the runtime, baseline
    (and candidate) objects (both steps in the sandbox).

    `link_flags`: extra linker arguments (a vendor reference's libraries and rpath); never for a candidate."""
    runtime_objs = compile_runtime(settings)
    drv_obj = compile_driver_object(variant, driver_source, settings)
    objs = [drv_obj, *runtime_objs, baseline_obj] + ([candidate_obj] if candidate_obj else [])
    key = _hash(*(o.read_bytes() for o in objs), sandbox_for(settings).kind, *(link_flags or []))
    exe = settings.cache_dir / "drivers" / key / "driver"
    with _locked(exe.parent):
        if exe.exists():
            lru.touch(exe)
        else:
            with scratch(settings, "cm-link-") as tmp:
                staged = [stage(o, tmp, f"{i}_{o.name}") for i, o in enumerate(objs)]
                rc, log = sandbox_for(settings).run(
                    [_nvcc(settings), *arch_flags(settings), "-o", str(tmp / "driver"), *map(str, staged), *(link_flags or [])],
                    scratch=tmp,
                    read_only=staged,
                    timeout=settings.compile_timeout_s,
                    what="the linker",
                )
                if rc != 0 or not (tmp / "driver").is_file():
                    raise LinkError(log)
                try:
                    check_size(tmp / "driver", "linked driver", settings)
                except ObjectTooLarge as exc:
                    raise LinkError(str(exc)) from None
                _publish(tmp / "driver", exe)
            prune_compile_cache(settings)
    return exe


class LinkError(RuntimeError):
    pass


def have_nvcc(settings: HarnessSettings) -> bool:
    return shutil.which(settings.nvcc) is not None
