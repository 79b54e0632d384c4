"""Safe evaluation of the size expressions in task specs ("M*K*N", "ceil(N/256)", "3*N*elem").

One evaluator for task.toml files, custom tasks (at submit and when stored ones are registered at start-up)
and the CLI. Only arithmetic on names and numbers, and a few functions, are allowed; nothing is passed to
eval(). It is safe by construction, bounded in time and in the size of every value (issue 30):

- the text is at most MAX_EXPRESSION_CHARS characters and MAX_NODES syntax nodes, so an evaluation is a
  bounded number of steps;
- every value, the names' and every intermediate, is checked 64-bit arithmetic: an integer must lie within
  [-2^63, 2^63) and a float must be finite, or the evaluation stops there with ExpressionError. A power is
  refused from its operands' sizes BEFORE it is computed, so `(((N**64)**64)**64)**64` is refused in
  microseconds instead of building a 168-million-bit integer;
- `check_ctype` then checks a result against the C type it is passed as (int, int64, float, ...), and
  `evaluate_length` a buffer length against 1..MAX_LENGTH.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

INT_BITS = 63  # integers are int64: |v| < 2^63
INT_MIN, INT_MAX = -(1 << INT_BITS), (1 << INT_BITS) - 1
MAX_EXPRESSION_CHARS = 500
MAX_NODES = 200
MAX_EXPONENT = 64
MAX_LENGTH = 1 << 31  # a buffer's element count (custom tasks; the driver's per-buffer bound)

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_FUNCS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "int": int,
    "sqrt": math.sqrt,
}

# The range of each C type a scalar may be passed as (prototype.C_TYPES): (low, high, integral).
_FLT_MAX = 3.4028234663852886e38
_BF16_MAX = 3.3895313892515355e38
CTYPE_RANGES: dict[str, tuple[float, float, bool]] = {
    "int": (-(1 << 31), (1 << 31) - 1, True),
    "int32_t": (-(1 << 31), (1 << 31) - 1, True),
    "unsigned int": (0, (1 << 32) - 1, True),
    "long": (INT_MIN, INT_MAX, True),
    "int64_t": (INT_MIN, INT_MAX, True),
    "size_t": (0, INT_MAX, True),  # within the evaluator's int64 range
    "float": (-_FLT_MAX, _FLT_MAX, False),
    "__nv_bfloat16": (-_BF16_MAX, _BF16_MAX, False),
    "double": (-math.inf, math.inf, False),  # finite: every value is
}


class ExpressionError(ValueError):
    pass


def evaluate(expression: str | int | float, names: Mapping[str, float]) -> int | float:
    """Evaluate `expression` with `names` bound; raises ExpressionError on anything else, and as soon as
    any value leaves the int64 range or stops being finite."""
    src = str(expression)[:80]
    if isinstance(expression, bool) or not isinstance(expression, (str, int, float)):
        raise ExpressionError(f"expression {src!r} must be a string or a number")
    if not isinstance(expression, str):
        return _checked(expression, src, "the value")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"expression {src!r}... is {len(expression)} characters; the limit is {MAX_EXPRESSION_CHARS}")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        raise ExpressionError(f"cannot parse expression {src!r}: {getattr(exc, 'msg', exc)}") from None
    for count, _ in enumerate(ast.walk(tree), start=1):
        if count > MAX_NODES:
            raise ExpressionError(f"expression {src!r} has more than {MAX_NODES} terms; write it shorter")
    return _eval(tree.body, names, src)


def evaluate_int(expression: str | int | float, names: Mapping[str, float]) -> int:
    value = evaluate(expression, names)
    if isinstance(value, float):
        if not value.is_integer():
            raise ExpressionError(f"expression {str(expression)[:80]!r} gave {value}, expected an integer")
        value = int(value)
    return value


def evaluate_length(expression: str | int | float, names: Mapping[str, float], high: int = MAX_LENGTH) -> int:
    """A buffer's element count: an integer in 1..`high`."""
    value = evaluate_int(expression, names)
    if not 1 <= value <= high:
        raise ExpressionError(f"length {str(expression)[:80]!r} is {value}; it must be between 1 and {_power(high)}")
    return value


def check_ctype(value: int | float, ctype: str, what: str) -> None:
    """Raise ExpressionError when `value` cannot be passed as a `ctype` (out of range; a fraction for an integer type)."""
    low, high, integral = CTYPE_RANGES[ctype]
    if integral and isinstance(value, float) and not value.is_integer():
        raise ExpressionError(f"{what} is {value}, not an integer: a {ctype} cannot hold it")
    if not low <= value <= high:
        bounds = f"{_power(low)}..{_power(high)}" if integral else f"±{high:.4g}"
        shown = value if isinstance(value, int) else f"{value:.6g}"
        raise ExpressionError(f"{what} is {shown}, outside the {ctype} range ({bounds}); keep it within the type")


def _power(v: float) -> str:
    """2^k or -2^k (and ±(2^k - 1)) for the bounds in messages; other numbers as they are."""
    for k in range(1, 65):
        for sign, s in ((1, ""), (-1, "-")):
            if v == sign * (1 << k):
                return f"{s}2^{k}"
            if v == sign * ((1 << k) - 1):
                return f"{s}(2^{k} - 1)"
    return str(v)


def _checked(value: Any, src: str, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExpressionError(f"{where} in {src!r} is not a number ({type(value).__name__})")
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        raise ExpressionError(f"{where} in {src!r} passes the 64-bit integer range (2^63); keep every intermediate within it")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExpressionError(f"{where} in {src!r} is not finite ({value}); keep every intermediate within the float range")
    return value


def _pow(base: int | float, exponent: int | float, src: str) -> int | float:
    """base ** exponent, refused before it is computed when an integer result would pass 2^63."""
    if abs(exponent) > MAX_EXPONENT:
        raise ExpressionError(f"exponent too large in {src!r} (at most {MAX_EXPONENT})")
    if isinstance(base, int) and isinstance(exponent, int) and exponent >= 0:
        if abs(base) > 1 and (abs(base).bit_length() - 1) * exponent >= INT_BITS:
            raise ExpressionError(f"a power in {src!r} passes the 64-bit integer range (2^63); keep every intermediate within it")
        return base**exponent
    try:
        return math.pow(base, exponent)  # a float; a negative base with a fraction raises instead of giving a complex
    except (OverflowError, ValueError, ZeroDivisionError) as exc:
        raise ExpressionError(f"cannot raise {base} to {exponent} in {src!r}: {exc}") from None


def _eval(node: ast.AST, names: Mapping[str, float], src: str) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _checked(node.value, src, "a number")
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ExpressionError(f"unknown name {node.id!r} in {src!r} (known: {', '.join(sorted(names))})")
        return _checked(names[node.id], src, f"the value of {node.id}")
    if isinstance(node, ast.BinOp) and (type(node.op) in _BINOPS or isinstance(node.op, ast.Pow)):
        left, right = _eval(node.left, names, src), _eval(node.right, names, src)
        if isinstance(node.op, ast.Pow):
            return _checked(_pow(left, right, src), src, "a power")
        try:
            value = _BINOPS[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError) as exc:
            raise ExpressionError(f"cannot evaluate {src!r}: {exc}") from None
        return _checked(value, src, "an intermediate value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, names, src)
        return _checked(-value if isinstance(node.op, ast.USub) else value, src, "a value")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        args = [_eval(a, names, src) for a in node.args]
        try:
            value = _FUNCS[node.func.id](*args)
        except (ValueError, TypeError, OverflowError, ZeroDivisionError) as exc:
            raise ExpressionError(f"cannot evaluate {node.func.id}(...) in {src!r}: {exc}") from None
        return _checked(value, src, f"{node.func.id}(...)")
    raise ExpressionError(f"unsupported syntax in expression {src!r}: {ast.dump(node)[:60]}")
