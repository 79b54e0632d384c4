"""The expression evaluator is bounded by construction (issue 30, defect 1): every intermediate stays within
int64 (or finite), powers are refused from their operands' sizes before they are computed, the text and its
number of terms are bounded; results are checked against the C type they are passed as. One evaluator serves
task.toml files, custom tasks and the CLI (bench_tasks/spec.py goes through it)."""

from __future__ import annotations

import time

import pytest

from bench_tasks import expr
from bench_tasks.spec import TaskError, custom_task

pytestmark = pytest.mark.timeout(30)
N = {"N": 1025}


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("(((N**64)**64)**64)**64", "64-bit integer range"),  # the attack of issue 30: 153 s and 168 Mbit on 2c07d7a
        ("((N**64)**64)**64", "64-bit integer range"),
        ("N**7", "64-bit integer range"),  # 1025^7 > 2^63
        ("2**63", "64-bit integer range"),
        ("(2**62)*2", "64-bit integer range"),
        ("-(2**62)*2 - 1", "64-bit integer range"),
        ("9223372036854775808", "64-bit integer range"),
        ("(N**64.0)**64", "cannot raise"),  # float overflow
        ("1e308*10", "not finite"),
        ("1e400", "not finite"),
        ("(-8)**0.5", "cannot raise"),  # no complex numbers
        ("N**65", "exponent too large"),
        ("N/0", "division by zero"),
        ("N%0", "by zero"),
        ("log2(0)", "math domain"),
        ("sqrt(-1)", "math domain"),
        ("max()", "max"),
        ("N" + "+N" * 150, "more than 200 terms"),
        ("1" * 501, "the limit is 500"),
        ("(" * 240 + "N" + ")" * 240, "cannot parse"),
        ("__import__('os')", "unsupported syntax"),
        ("N.real", "unsupported syntax"),
        ("True + N", "unsupported syntax"),
    ],
)
def test_unbounded_or_unsafe_expressions_are_refused(expression, says):
    with pytest.raises(expr.ExpressionError, match=says):
        expr.evaluate(expression, N)


def test_the_freezing_attack_is_refused_at_once():
    started = time.perf_counter()
    for _ in range(1000):
        with pytest.raises(expr.ExpressionError):
            expr.evaluate("(((N**64)**64)**64)**64", N)
    print(f"1000 refusals in {time.perf_counter() - started:.4f} s")  # the note's figure; no threshold asserted


def test_names_are_checked_too():
    with pytest.raises(expr.ExpressionError, match="the value of N"):
        expr.evaluate("N", {"N": 1 << 64})
    with pytest.raises(expr.ExpressionError, match="not finite"):
        expr.evaluate("N", {"N": float("inf")})


def test_values_within_range_are_exact():
    assert expr.evaluate("2**62 + (2**62 - 1)", {}) == (1 << 63) - 1
    assert expr.evaluate("-(2**62) * 2", {}) == -(1 << 63)
    assert expr.evaluate("N**6", N) == 1025**6
    assert expr.evaluate("2**-1", {}) == 0.5
    assert expr.evaluate_int("ceil(N/256)", N) == 5


@pytest.mark.parametrize(
    ("value", "ctype", "ok"),
    [
        ((1 << 31) - 1, "int", True),
        (1 << 31, "int", False),
        (-(1 << 31), "int32_t", True),
        (-1, "unsigned int", False),
        ((1 << 32) - 1, "unsigned int", True),
        (2.5, "int", False),
        (1 << 40, "long", True),
        (-1, "size_t", False),
        (3.5e38, "float", False),
        (1e38, "float", True),
        (1e300, "double", True),
        (3.4e38, "__nv_bfloat16", False),
    ],
)
def test_values_are_checked_against_their_c_type(value, ctype, ok):
    if ok:
        expr.check_ctype(value, ctype, "v")
    else:
        with pytest.raises(expr.ExpressionError, match=ctype):
            expr.check_ctype(value, ctype, "v")


def test_lengths_are_checked_before_any_huge_number_exists():
    assert expr.evaluate_length("N*4", N) == 4100
    with pytest.raises(expr.ExpressionError, match="between 1 and 2\\^31"):
        expr.evaluate_length("N*N*N*N", N)
    with pytest.raises(expr.ExpressionError, match="between 1 and"):
        expr.evaluate_length("N - N", N)
    with pytest.raises(expr.ExpressionError, match="64-bit"):
        expr.evaluate_length("N**64", N)


PROTO = 'extern "C" void scale(const float* X, float* Y, int N, float a)'


def _task(value: str, length: str = "N") -> None:
    args = {
        "X": {"role": "input", "length": length},
        "Y": {"role": "output", "length": "N"},
        "N": {"role": "scalar", "value": "N"},
        "a": {"role": "scalar", "value": value},
    }
    custom_task("ct_x", "fp32", PROTO, args, [{"N": 1025}], "")


def test_task_specs_check_scalars_and_lengths_with_the_same_evaluator():
    """spec.validate (task.toml files, custom tasks, stored custom tasks at start-up) refuses what the API refuses."""
    _task("2.0")
    with pytest.raises(TaskError, match="64-bit integer range"):
        _task("(((N**64)**64)**64)**64")
    with pytest.raises(TaskError, match="outside the float range"):
        _task("(2.0**64)**2")
    with pytest.raises(TaskError, match=r"length 1050625 must be between|must be between 1 and 2\^31"):
        _task("1.0", length="N*N*N*N")
