"""Safe evaluation of the size expressions in task specs ("M*K*N", "ceil(N/256)", "3*N*elem").

Only arithmetic on names and numbers, and a few functions, are allowed; nothing is passed to eval().
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "int": int,
    "sqrt": math.sqrt,
}


class ExpressionError(ValueError):
    pass


def evaluate(expression: str | int | float, names: Mapping[str, float]) -> int | float:
    """Evaluate `expression` with `names` bound; raises ExpressionError on anything else."""
    if isinstance(expression, (int, float)):
        return expression
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse expression {expression!r}: {exc.msg}") from None
    return _eval(tree.body, names, expression)


def evaluate_int(expression: str | int | float, names: Mapping[str, float]) -> int:
    value = evaluate(expression, names)
    if isinstance(value, float):
        if not value.is_integer():
            raise ExpressionError(f"expression {expression!r} gave {value}, expected an integer")
        value = int(value)
    return value


def _eval(node: ast.AST, names: Mapping[str, float], src: str):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ExpressionError(f"unknown name {node.id!r} in {src!r} (known: {', '.join(sorted(names))})")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, names, src), _eval(node.right, names, src)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ExpressionError(f"exponent too large in {src!r}")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, names, src)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*(_eval(a, names, src) for a in node.args))  # type: ignore[operator]
    raise ExpressionError(f"unsupported syntax in expression {src!r}: {ast.dump(node)[:60]}")
