"""bf16 rounding, draws, safe expressions and the prototype parser."""

import numpy as np
import pytest

from bench_tasks import data, expr
from bench_tasks.prototype import PrototypeError, parse


def test_bf16_rounds_to_nearest_even_like_float2bfloat16():
    x = np.array([1.0, 1.00390625, 1.005859375, 1.01171875, -2.5, 3.0e38, 1e-40], dtype=np.float32)
    got = data.from_bf16_bits(data.to_bf16_bits(x))
    # 1 + 2^-8 is a tie and goes to the even 1.0; 1 + 3*2^-9 goes up; 1 + 3*2^-8 is a tie that goes up to even.
    assert got[:5].tolist() == [1.0, 1.0, 1.0078125, 1.015625, -2.5]
    assert np.isfinite(got[5]) and abs(got[5] / 3.0e38 - 1) < 2**-8
    assert got[6] != 0.0  # subnormals survive


def test_draws_stay_in_range_and_depend_on_the_seed():
    a = data.draw("uniform(-10, 10)", np.random.default_rng(1), 100_000, single=True)
    b = data.draw("uniform(-10, 10)", np.random.default_rng(1), 100_000, single=True)
    c = data.draw("uniform(-10, 10)", np.random.default_rng(2), 100_000, single=True)
    assert a.dtype == np.float32 and np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() >= -10 and a.max() <= 10 and abs(float(a.mean())) < 0.2
    with pytest.raises(ValueError, match="cannot parse draw"):
        data.draw("import os", np.random.default_rng(1), 3)


def test_expressions_are_arithmetic_only():
    assert expr.evaluate_int("max(rows, floor(rows*cols/100))", {"rows": 1024, "cols": 2048}) == 20971
    assert expr.evaluate("3*N*elem", {"N": 10, "elem": 2}) == 60
    for bad in ("__import__('os').system('x')", "N.__class__", "[1,2]", "lambda: 1", "open('f')"):
        with pytest.raises(expr.ExpressionError):
            expr.evaluate(bad, {"N": 1})
    with pytest.raises(expr.ExpressionError, match="unknown name"):
        expr.evaluate("M*2", {"N": 1})


def test_prototype_parser_handles_defaults_scalars_and_bf16():
    p = parse('extern "C" void elu(const float* input, float* output, int N, float alpha = 1.0f)')
    assert [q.name for q in p.params] == ["input", "output", "N", "alpha"]
    assert p.params[0].const and p.params[0].pointer and p.params[3].default == "1.0f"
    assert p.renamed("elu_optimized").c_declaration().startswith('extern "C" void elu_optimized(const float* input')
    q = parse('extern "C" void m(const __nv_bfloat16* A, __nv_bfloat16* B, __nv_bfloat16 scalar, int32_t M)')
    assert q.params[2].dtype == "bfloat16" and not q.params[2].pointer and q.params[3].dtype == "int32"
    with pytest.raises(PrototypeError):
        parse("void f(int x)")
    with pytest.raises(PrototypeError, match="unsupported type"):
        parse('extern "C" void f(half* x)')


def test_unwritten_count_reads_the_stored_bits():
    values = np.array([1.0, np.nan, -np.inf, 0.0, 3.4e38, np.inf], dtype=np.float32)
    assert data.unwritten_count(values, "float32") == 1  # infinities are written values
    bits = data.to_bf16_bits(values)  # 3.4e38 rounds to bf16 inf: a written value too
    assert data.unwritten_count(bits, "bfloat16") == 1
    poison = np.full(5, 0xFFFF, dtype=np.uint16)  # the harness's poison byte pattern
    assert data.unwritten_count(poison, "bfloat16") == 5
    assert data.unwritten_count(np.full(3, 0xFFFFFFFF, dtype=np.uint32).view(np.float32), "float32") == 3
    assert data.unwritten_count(np.array([1, 2], dtype=np.int32), "int32") == 0
