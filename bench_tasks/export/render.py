"""A bundle's files, rendered from the task's data (tables.task_document) and templates shipped with the package.

Every task and custom task goes through the same templates: nothing here knows a task by name."""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import keyword
import re
import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from bench_tasks import data
from bench_tasks.harness import source as harness_source
from bench_tasks.spec import ELEM_BYTES, TASKS_DIR, Variant, parse_draw

from . import pycode
from .tables import task_document

TEMPLATES = Path(__file__).parent / "templates"
STATIC = (
    "bundle_common.h",
    "binding.cpp",
    "binding_baseline.cpp",
    "test_kernel.cu",
    "bench_kernel.cu",
    "build.sh",
    "test_torch.py",
    "make_inputs.py",
    "reference_bundle.py",
    "pytest.ini",
)
ROLE_ENUM = {"input": "IN", "output": "OUT", "accumulate": "ACC", "inout": "INOUT", "scalar": "SCALAR"}
DRAW_ENUM = {"uniform": "UNIFORM", "normal": "NORMAL", "randint": "RANDINT", "const": "CONST"}
# The harness's own functions, copied into the bundle's bundle_inputs.py (one rule: the bundle draws as the harness does).
HARNESS_FUNCTIONS = (data.to_bf16_bits, data.from_bf16_bits, data.to_storage, data.to_float64, data.draw)
VENDORED = ("gen_sparse.py", "ref_sparse.py", "compare.py")  # bench_tasks helpers a reference.py may import


@dataclass(frozen=True)
class MeasuredRow:
    """One size as the service measured it."""

    params: dict[str, int]
    baseline_us: float | None
    kernel_us: float | None
    speedup: float | None
    roofline_pct: float | None


@dataclass(frozen=True)
class ExportInput:
    """What a bundle is made of: the variant, the attempt's source, what the service holds about it."""

    variant: Variant
    kernel_source: str
    rows: list[MeasuredRow]
    score: float | None
    environment: dict[str, str]  # gpu, driver, cuda, nvcc, harness, commit
    provenance: dict[str, Any]  # job, attempt, date, models, tokens, cost_usd, ...
    sanitizer: list[dict[str, str]] | None = None  # tool, verdict, detail; None: not run
    extra: dict[str, Any] = field(default_factory=dict)


def _cnum(v: float | int | bool) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return repr(float(v)) if isinstance(v, float) and v == v and abs(v) != float("inf") else str(v)


@cache
def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    env.globals.update(role_enum=ROLE_ENUM, cnum=_cnum)
    return env


def _per_arg(doc: dict[str, Any]):
    def per_arg(size: dict[str, Any], what: str) -> str:
        values = []
        for a in doc["args"]:
            name = a["name"]
            tol = size["tolerance"].get(name, {})
            value = {
                "length": size["lengths"].get(name, 0),
                "scalar": size["scalars"].get(name, 0),
                "atol": tol.get("atol", 0),
                "rtol": tol.get("rtol", 0),
                "max_abs": tol.get("max_abs", False),
            }[what]
            values.append(_cnum(value))
        return ", ".join(values)

    return per_arg


def _call_args(doc: dict[str, Any], torch: bool) -> str:
    parts, b, s = [], 0, 0
    for i, a in enumerate(doc["args"]):
        ctype = ("const " if a["const"] else "") + a["ctype"]
        if a["role"] != "scalar":
            ptr = f"b[{b}].data_ptr()" if torch else f"p[{i}]"
            parts.append(f"({ctype}*){ptr}")
            b += 1
            continue
        value = f"s[{s}]" if torch else f"s[{i}]"
        s += 1
        parts.append(f"__float2bfloat16((float){value})" if a["ctype"] == "__nv_bfloat16" else f"({a['ctype']}){value}")
    return ", ".join(parts)


_GLOBAL_NAME = re.compile(r"__global__\s+void\s+(\w+)\s*\(")


def uses_baseline_kernels(kernel: str, baseline: str) -> bool:
    """Whether the kernel declares and launches a `__global__` kernel of the baseline's without defining it (the
    published format allows it; the harness links the baseline's object beside it): the PyTorch extension of the
    kernel then compiles the baseline too. Read from the text (the extension is built without the harness's symbol
    tools): a declaration is the name followed by `(...)` and `;`, a definition by `(...)` and `{`."""
    for name in set(_GLOBAL_NAME.findall(baseline)):
        used = re.search(rf"\b{name}\s*(<<<|\()", kernel)
        defined = re.search(rf"__global__\s+void\s+{name}\s*\([^;{{]*\)\s*\{{", kernel)
        if used and not defined:
            return True
    return False


def _draw_enum(a: dict[str, Any]) -> str:
    return "GENERATED" if a["generated"] else DRAW_ENUM.get(a["draw"] or "", "NONE")


def _module_name(doc: dict[str, Any]) -> str:
    return "".join(c if c.isalnum() else "_" for c in f"cmx_{doc['task']}_{doc['precision']}").lower()


def _python_context(variant: Variant, doc: dict[str, Any]) -> dict[str, Any]:
    task = variant.task
    inputs = [a["name"] for a in doc["args"] if a["role"] in ("input", "inout")]
    size_names = doc["size_names"]
    first = doc["bench_sizes"][0]["params"] if doc["bench_sizes"] else {}
    return {
        "derived": [(k, pycode.python_code(v)) for k, v in task.derived.items()],
        "has_derive": task.oracle != "baseline"
        and (task.directory / "reference.py").is_file()
        and "def derive" in _reference_text(variant),
        "length_code": [(a.name, pycode.python_code(a.length)) for a in task.args if not a.scalar and a.length is not None],
        "scalar_code": [(a.name, pycode.python_code(a.value)) for a in task.args if a.scalar and a.value is not None],
        "elem": ELEM_BYTES[variant.precision],
        "input_names": [(a, _py_name(a)) for a in inputs],
        "size_names": size_names,
        "signature": ", ".join([*map(_py_name, inputs), *(["*"] if size_names else []), *(f"{k}: int" for k in size_names)]),
        "example_call": ", ".join([*(f"{n}=..." for n in inputs), *(f"{k}={v}" for k, v in first.items())]),
        "dtypes_line": ", ".join(sorted({a["torch_dtype"] for a in doc["args"] if a["role"] != "scalar"})),
    }


def _py_name(name: str) -> str:
    """An argument's name as a Python parameter (`in` -> `in_`)."""
    return name + "_" if keyword.iskeyword(name) else name


def _reference_text(variant: Variant) -> str:
    path = variant.task.directory / "reference.py"
    return path.read_text() if not variant.task.custom and path.is_file() else ""


@cache
def _harness_source() -> str:
    storage = "STORAGE = {" + ", ".join(f'"{k}": np.{v.__name__}' for k, v in data.STORAGE.items()) + "}"
    parts = [storage] + ["# harness: bench_tasks/data.py\n" + inspect.getsource(f) for f in HARNESS_FUNCTIONS]
    return "\n\n".join(parts)


def _fmt(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _readme_rows(rows: list[MeasuredRow]) -> list[dict[str, str]]:
    return [
        {
            "params": " ".join(f"{k}={v}" for k, v in r.params.items()),
            "baseline": _fmt(r.baseline_us),
            "kernel": _fmt(r.kernel_us),
            "speedup": _fmt(r.speedup),
            "roofline": _fmt(r.roofline_pct, 1),
        }
        for r in rows
    ]


def _kernel_files(e: ExportInput) -> dict[str, str]:
    """kernel.cu unchanged; a marked-format source (the published harness file) also gets the part the harness compiles."""
    files = {"kernel.cu": e.kernel_source}
    extracted = harness_source.extract(e.kernel_source)
    if extracted != e.kernel_source:
        files["kernel_extracted.cu"] = extracted
    return files


def _reference_files(variant: Variant) -> dict[str, str]:
    text = _reference_text(variant)
    if not text:
        return {}
    files = {"reference/reference.py": text, "reference/bench_tasks/__init__.py": ""}
    for name in VENDORED:
        files[f"reference/bench_tasks/{name}"] = (TASKS_DIR.parent / name).read_text()
    files["reference/bench_tasks/spec.py"] = _spec_shim()
    files["reference_bundle.py"] = (TEMPLATES / "reference_bundle.py").read_text()
    return files


@cache
def _spec_shim() -> str:
    from bench_tasks import spec

    return (
        '"""The parts of bench_tasks.spec that compare.py and reference.py use (copied by `cudamaster export`)."""\n\n'
        "from __future__ import annotations\n\nfrom dataclasses import dataclass\n\n\n"
        + inspect.getsource(spec.Tolerance)
        + "\n\nVariant = object  # only a type annotation there\n"
    )


def _context(e: ExportInput, doc: dict[str, Any], kernel_file: str) -> dict[str, Any]:
    buffers = [a["name"] for a in doc["args"] if a["role"] != "scalar"]
    scalars = [a["name"] for a in doc["args"] if a["role"] == "scalar"]
    sizes_line = "; ".join(" ".join(f"{k}={v}" for k, v in s["params"].items()) for s in doc["bench_sizes"])
    draws = sorted({a.get("draw_spec", "") for a in doc["args"] if a.get("draw_spec")})
    return {
        "doc": doc,
        "prov": e.provenance,
        "env": e.environment,
        "kernel_file": kernel_file,
        "kernel_sources": ["binding.cpp", kernel_file]
        + (["baseline.cu"] if uses_baseline_kernels(e.kernel_source, e.variant.task.baseline_source()) else []),
        "module": _module_name(doc),
        "buffer_names": buffers,
        "scalar_names": scalars,
        "call_args": _call_args(doc, torch=False),
        "torch_call_args": _call_args(doc, torch=True),
        "draw_enum": _draw_enum,
        "per_arg": _per_arg(doc),
        "params_text": lambda s: " ".join(f"{k}={v}" for k, v in s["params"].items()),
        "sizes_line": sizes_line,
        "rows": _readme_rows(e.rows),
        "score": _fmt(e.score, 4),
        "sanitizer": e.sanitizer,
        "generated": [a["name"] for a in doc["args"] if a["generated"]],
        "test_labels": ", ".join(s["label"] for s in doc["test_sizes"]),
        "draws_line": ", ".join(f"{a['name']} ~ {a['draw_spec']}" for a in doc["args"] if a.get("draw_spec"))
        + (
            "; " + ", ".join(a["name"] for a in doc["args"] if a["generated"]) + " from reference.generate()"
            if doc["has_generated"]
            else ""
        ),
        "draws": repr({d: list(parse_draw(d)) for d in draws}),
        "harness_source": _harness_source(),
        **_python_context(e.variant, doc),
    }


def bundle_files(e: ExportInput) -> dict[str, bytes]:
    """Every file of the bundle by its path in the bundle, provenance.json (with the sha256 of every other file) last."""
    doc = task_document(e.variant, [dict(r.params) for r in e.rows])
    text = _kernel_files(e)
    kernel_file = "kernel_extracted.cu" if "kernel_extracted.cu" in text else "kernel.cu"
    text["baseline.cu"] = e.variant.task.baseline_source()
    text["kernel_prelude.h"] = (
        "// The includes the cudamaster harness puts in front of every kernel it compiles.\n" + harness_source.PRELUDE
    )
    text["kernel_source.txt"], text["kernel_entry.txt"] = kernel_file + "\n", doc["candidate_entry"] + "\n"
    text["task.json"] = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    text |= _reference_files(e.variant)
    env, ctx = _env(), _context(e, doc, kernel_file)
    for name in STATIC:
        if name != "reference_bundle.py":
            text[name] = (TEMPLATES / name).read_text()
    for template in sorted(p.name for p in TEMPLATES.glob("*.j2") if p.name != "README.md.j2"):
        text[template.removesuffix(".j2")] = env.get_template(template).render(ctx)
    text["README.md"] = env.get_template("README.md.j2").render(ctx | {"files": sorted([*text, "README.md", "provenance.json"])})
    files = {k: v.encode() for k, v in text.items()}
    provenance = {**e.provenance, "environment": e.environment, "sanitizer": e.sanitizer, **e.extra}
    provenance["files"] = {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}
    files["provenance.json"] = (json.dumps(provenance, indent=1, sort_keys=True, default=str) + "\n").encode()
    return files


EXECUTABLE = ("build.sh",)


def zip_bytes(files: dict[str, bytes], root: str) -> bytes:
    """The bundle as a zip whose entries sit under `root/` (build.sh executable)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in sorted(files.items()):
            info = zipfile.ZipInfo(f"{root}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name in EXECUTABLE else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, content)
    return buf.getvalue()


def write_directory(files: dict[str, bytes], out: Path) -> None:
    for name, content in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        if name in EXECUTABLE:
            path.chmod(0o755)
