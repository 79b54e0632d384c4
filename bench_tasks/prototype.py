"""Parse the C prototypes of the spec (`extern "C" void op(const float* A, int N, float alpha = 1.0f)`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# C type (without const) -> (numpy dtype name, size in bytes, driver kind)
C_TYPES = {
    "float": ("float32", 4),
    "double": ("float64", 8),
    "__nv_bfloat16": ("bfloat16", 2),
    "int": ("int32", 4),
    "int32_t": ("int32", 4),
    "unsigned int": ("uint32", 4),
    "long": ("int64", 8),
    "int64_t": ("int64", 8),
    "size_t": ("uint64", 8),
}


class PrototypeError(ValueError):
    pass


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str  # base C type, e.g. "float", "__nv_bfloat16"
    pointer: bool
    const: bool
    default: str | None = None

    @property
    def dtype(self) -> str:
        return C_TYPES[self.ctype][0]

    @property
    def itemsize(self) -> int:
        return C_TYPES[self.ctype][1]

    def c_decl(self, with_default: bool = True) -> str:
        text = ("const " if self.const else "") + self.ctype + ("* " if self.pointer else " ") + self.name
        if with_default and self.default is not None:
            text += " = " + self.default
        return text


@dataclass(frozen=True)
class Prototype:
    name: str
    params: tuple[Param, ...]
    text: str

    def renamed(self, name: str) -> Prototype:
        return Prototype(name=name, params=self.params, text=self.text.replace(self.name + "(", name + "(", 1))

    def c_declaration(self) -> str:
        args = ", ".join(p.c_decl() for p in self.params)
        return f'extern "C" void {self.name}({args});'

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


_PROTO_RE = re.compile(r'^\s*extern\s+"C"\s+void\s+([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*$', re.S)
_PARAM_RE = re.compile(
    r"^(?P<const>const\s+)?(?P<type>unsigned\s+int|[A-Za-z_]\w*)\s*(?P<ptr>\*)?\s*(?:const\s+)?"
    r"(?P<name>[A-Za-z_]\w*)\s*(?:=\s*(?P<default>[^,]+))?$"
)


def parse(text: str) -> Prototype:
    m = _PROTO_RE.match(text)
    if not m:
        raise PrototypeError(f'not a prototype of the form extern "C" void name(args): {text!r}')
    params = []
    for raw in (a.strip() for a in m.group(2).split(",")):
        if not raw:
            continue
        pm = _PARAM_RE.match(raw)
        if not pm:
            raise PrototypeError(f"cannot parse parameter {raw!r} in {text!r}")
        ctype = re.sub(r"\s+", " ", pm.group("type"))
        if ctype not in C_TYPES:
            raise PrototypeError(f"unsupported type {ctype!r} in {text!r}")
        default = pm.group("default").strip() if pm.group("default") else None
        params.append(Param(pm.group("name"), ctype, bool(pm.group("ptr")), bool(pm.group("const")), default))
    return Prototype(name=m.group(1), params=tuple(params), text=text.strip())


# --- prototypes by ABI --------------------------------------------------------------------------------
# The compiler's own spelling (c++filt of a mangled function type) of each spec type: typedefs resolved.
ABI_NAMES = {
    "float": "float",
    "double": "double",
    "__nv_bfloat16": "__nv_bfloat16",
    "int": "int",
    "int32_t": "int",
    "unsigned int": "unsigned int",
    "long": "long",
    "int64_t": "long",
    "size_t": "unsigned long",
}


@dataclass(frozen=True)
class AbiParam:
    base: str  # the compiler's spelling without cv-qualifiers and pointer, e.g. "float"
    pointer: bool
    text: str  # as the compiler wrote it, e.g. "float const*"


def parse_abi_params(text: str) -> list[AbiParam]:
    """The parameters of a demangled function type's parameter list ("float const*, float*, int")."""
    params = []
    for raw in _split_top_level(text):
        raw = raw.strip()
        if not raw or raw == "void":
            continue
        words = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict)\b", " ", raw)
        pointer = words.strip().endswith("*") and words.count("*") == 1
        base = " ".join(words.replace("*", " ").split()) if pointer or "*" not in words else raw
        params.append(AbiParam(base=base, pointer=pointer, text=raw))
    return params


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def abi_mismatch(expected: Prototype, candidate: list[AbiParam], allow_defaults: bool = True) -> str | None:
    """Why `candidate` (the entry's parameters as the compiler sees them) cannot be called as `expected`;
    None when it can. Names, const (on pointers and values) and __restrict__ may differ, and trailing
    parameters that have defaults in `expected` may be left out (when `allow_defaults`); types, order and
    count may not."""
    if len(candidate) > len(expected.params):
        return f"it takes {len(candidate)} parameters; the task's prototype has {len(expected.params)}"
    for i, (want, got) in enumerate(zip(expected.params, candidate, strict=False), start=1):
        if got.base != ABI_NAMES[want.ctype] or got.pointer != want.pointer:
            return f"parameter {i} is `{got.text}` where the task has `{want.c_decl(with_default=False)}`"
    missing = expected.params[len(candidate) :]
    if missing and (not allow_defaults or any(p.default is None for p in missing)):
        left_out = ", ".join(p.c_decl(with_default=False) for p in missing)
        if not allow_defaults:
            return f"it leaves out `{left_out}`: a baseline takes every parameter"
        return f"it leaves out `{left_out}`: only trailing parameters with a default in the task's prototype may be left out"
    return None


ENTRY_RULE = (
    "Parameter names, const, __restrict__ and trailing parameters with defaults may differ; types, their order and their count may not."
)


def entry_refusal(expected: Prototype, entry: str, ret: str, params: list[AbiParam], allow_defaults: bool = True) -> str | None:
    """The one rule for a candidate's entry point (the harness after compiling, the agent before): why an
    entry `ret entry(params)` cannot be called as `expected`, with what to change; None when it can."""
    why = abi_mismatch(expected, params, allow_defaults)
    if ret != "void":
        why = f"it returns `{ret}`; the entry point returns void"
    if not why:
        return None
    got = f'extern "C" {ret} {entry}({", ".join(p.text for p in params)});'
    return (
        f"{entry} does not match the expected prototype: {why}. {ENTRY_RULE}\n"
        f"  expected:  {expected.renamed(entry).c_declaration()}\n  candidate: {got}"
    )


# --- prototypes read from source text (before compiling) ------------------------------------------------
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict)\b")


def _text_param(raw: str) -> AbiParam | None:
    """One parameter as written (`const float* __restrict__ x`, `int N = 4`) spelled as the compiler's
    demangler would; None when it is not a plain spec type (a typedef, macro, reference, array ...)."""
    decl = raw.split("=", 1)[0].strip()
    if re.search(r"[&\[\]()<>]", decl):
        return None
    stars = decl.count("*")
    words = _QUALIFIERS.sub(" ", decl.replace("*", " ")).split()
    for ctype in (" ".join(words), " ".join(words[:-1])):
        if ctype in C_TYPES and stars <= 1:
            base = ABI_NAMES[ctype]
            return AbiParam(base=base, pointer=stars == 1, text=" ".join(decl.split()))  # as the reply wrote it
    return None


def _param_lists(source: str, entry: str) -> list[str] | None:
    """The parameter text of every `void entry(...)` in `source` (comments removed); None when one of them
    has no closing parenthesis."""
    text = _COMMENTS.sub(" ", source)
    found = []
    for m in re.finditer(rf"\bvoid\s+{re.escape(entry)}\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if depth:
            return None
        found.append(text[m.end() : i - 1])
    return found


def source_refusal(expected: Prototype, entry: str, source: str) -> str | None:
    """entry_refusal told from the source text alone, before compiling: a refusal only when every
    `void entry(...)` the text holds is read with certainty and none of them passes the rule. Anything the
    text cannot settle (no such declaration, a macro, a typedef, an unusual spelling) is None: the compile
    and link check decides. So this never refuses what the harness accepts."""
    lists = _param_lists(source, entry)
    if not lists:
        return None
    refusals = []
    for raw in lists:
        parts = [p.strip() for p in _split_top_level(raw)]
        parts = [] if parts in ([""], ["void"]) else parts
        params = [_text_param(p) for p in parts]
        if any(p is None for p in params):
            return None
        why = entry_refusal(expected, entry, "void", params)  # type: ignore[arg-type]
        if why is None:
            return None
        refusals.append(why)
    return refusals[0]
