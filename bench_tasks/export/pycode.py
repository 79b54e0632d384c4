"""Size expressions as Python code for the bundle's wrapper (kernel_torch.py): `rows + 1` -> `(n['rows'] + 1)`.

The expressions were checked by bench_tasks.expr when the task loaded (names, numbers, arithmetic, a few
functions); this rewrites that same syntax tree, refusing anything else, so the generated code computes what
the harness computes."""

from __future__ import annotations

import ast

from bench_tasks import expr

_FUNCS = {"min": "min", "max": "max", "int": "int", "ceil": "math.ceil", "floor": "math.floor", "log2": "math.log2", "sqrt": "math.sqrt"}
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _code(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return repr(node.value)
    if isinstance(node, ast.Name):
        return f"n[{node.id!r}]"
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
        return f"({_code(node.left)} {_OP_TEXT[type(node.op)]} {_code(node.right)})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return f"({'-' if isinstance(node.op, ast.USub) else '+'}{_code(node.operand)})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return f"{_FUNCS[node.func.id]}({', '.join(_code(a) for a in node.args)})"
    raise expr.ExpressionError(f"unsupported syntax in a size expression: {ast.dump(node)[:60]}")


_OP_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def python_code(expression: str | int | float) -> str:
    """Python source computing `expression` from a dict `n` of names (and `math`)."""
    if not isinstance(expression, str):
        return repr(expression)
    return _code(ast.parse(expression.strip(), mode="eval").body)
