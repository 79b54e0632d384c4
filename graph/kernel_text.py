"""Reading model replies: the kernel source in them, its entry point's prototype, nvcc flags."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bench_tasks.prototype import source_refusal
from bench_tasks.spec import Variant

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_CODE_LANGS = {"", "cuda", "cu", "cpp", "c++", "c", "cxx", "h", "hpp"}


def extract_code(reply: str, entry: str) -> str:
    """The kernel source in a reply: the fenced block that defines `entry` (else the one with a
    __global__ kernel, else the longest C/C++/CUDA block); an unfenced reply that defines `entry`
    is taken whole. "" when the reply holds no code."""
    blocks = [(lang.lower(), body.strip()) for lang, body in _FENCE.findall(reply)]
    blocks = [(lang, body) for lang, body in blocks if body and lang in _CODE_LANGS]
    for predicate in (lambda b: re.search(rf"\b{re.escape(entry)}\s*\(", b), lambda b: "__global__" in b):
        hits = [b for _, b in blocks if predicate(b)]
        if hits:
            return max(hits, key=len)
    if blocks:
        longest = max((b for _, b in blocks), key=len)
        if "{" in longest and ";" in longest:
            return longest
    text = reply.strip()
    if "```" not in text and re.search(rf"\b{re.escape(entry)}\s*\(", text) and "{" in text:
        return text
    return ""


@dataclass
class PrototypeCheck:
    changed: bool
    message: str = ""


def check_prototype(source: str, variant: Variant) -> PrototypeCheck:
    """The harness's rule for the entry point (bench_tasks.prototype.entry_refusal), as far as the source text
    settles it before compiling: changed only when every definition or declaration of the entry in the text
    breaks the rule. What the text cannot settle is left to the compile and link check."""
    why = source_refusal(variant.prototype, variant.candidate_entry, source)
    if why is None:
        return PrototypeCheck(False)
    return PrototypeCheck(True, f"the reply changed the entry point's prototype: {why}")


# nvcc flags the compiler role may choose. Anything else in its answer is dropped and noted.
_FLAG_PATTERNS = [
    r"-{1,2}use_fast_math",
    r"-{1,2}maxrregcount=(?:[1-9]\d|1\d\d|2[0-4]\d|25[0-5])",
    r"-{1,2}extra-device-vectorization",
    r"-{1,2}restrict",
    r"-ftz=(?:true|false)",
    r"-prec-div=(?:true|false)",
    r"-prec-sqrt=(?:true|false)",
    r"-fmad=(?:true|false)",
    r"-lineinfo",
]
_PTXAS_OPTIONS = {
    "-O0",
    "-O1",
    "-O2",
    "-O3",
    "-v",
    "--warn-on-spills",
    "-warn-spills",
    "-dlcm=ca",
    "-dlcm=cg",
    "--allow-expensive-optimizations=true",
    "--allow-expensive-optimizations=false",
}
FLAG_ALLOWLIST_TEXT = (
    "-use_fast_math, -maxrregcount=N (16..255), --extra-device-vectorization, -restrict, "
    "-ftz=true|false, -prec-div=true|false, -prec-sqrt=true|false, -fmad=true|false, -lineinfo, "
    "-Xptxas=OPT[,OPT] with OPT in " + ", ".join(sorted(_PTXAS_OPTIONS))
)


def allowed_flag(flag: str) -> bool:
    if any(re.fullmatch(p, flag) for p in _FLAG_PATTERNS):
        return True
    m = re.fullmatch(r"-{1,2}Xptxas[= ](.+)", flag)
    return bool(m) and all(o in _PTXAS_OPTIONS for o in m.group(1).split(","))  # type: ignore[union-attr]


def parse_flags(reply: str) -> tuple[list[str], list[str]]:
    """(allowed flags, dropped ones) from a reply: JSON {"flags": [...]}, a JSON list, or plain text."""
    candidates: list[str] = []
    text = reply.strip()
    fenced = _FENCE.findall(text)
    if fenced:
        text = fenced[0][1].strip()
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            data = data.get("flags", [])
        candidates = [str(x) for x in data] if isinstance(data, list) else []
    except json.JSONDecodeError:
        tokens = text.replace(",", " ").split() if "Xptxas" not in text else re.findall(r"-{1,2}Xptxas[= ]\S+|\S+", text)
        candidates = [t.strip("`'\"") for t in tokens if t.startswith("-")]
    allowed, dropped = [], []  # type: ignore[var-annotated]
    for flag in candidates:
        flag = re.sub(r"^(-{1,2}Xptxas) ", r"\1=", flag.strip())
        (allowed if allowed_flag(flag) else dropped).append(flag)
    return list(dict.fromkeys(allowed)), dropped
