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

    def renamed(self, name: str) -> "Prototype":
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
