"""Seeded inputs, bf16 rounding and the float64 view of what a kernel saw."""

from __future__ import annotations

import numpy as np

from .spec import INPUT_ROLES, TaskError, Variant, parse_draw


def to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """Round to the nearest bfloat16 (ties to even), as __float2bfloat16 does; returns uint16 bits.

    Values are first rounded to float32, then to bfloat16, as a kernel converting floats would."""
    u = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounding = ((u >> 16) & np.uint32(1)) + np.uint32(0x7FFF)
    return ((u + rounding) >> 16).astype(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


STORAGE = {
    "float32": np.float32,
    "float64": np.float64,
    "bfloat16": np.uint16,
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
}


def to_storage(values: np.ndarray, dtype: str) -> np.ndarray:
    """Convert float64/int values to the bytes a kernel reads for a parameter of `dtype`."""
    if dtype == "bfloat16":
        return to_bf16_bits(np.asarray(values, dtype=np.float64))
    return np.ascontiguousarray(values, dtype=STORAGE[dtype])


def to_float64(stored: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return from_bf16_bits(stored).astype(np.float64)
    return stored.astype(np.float64) if dtype.startswith("float") else stored.astype(np.int64)


def unwritten_count(stored: np.ndarray, dtype: str) -> int:
    """Elements still holding the NaN poison (or any NaN) in stored float data; 0 for integer types.

    Infinities are written values (e.g. -FLT_MAX rounds to -inf in bf16) and are left to the comparison."""
    if dtype == "bfloat16":
        exponent_ones = (stored & np.uint16(0x7F80)) == np.uint16(0x7F80)
        return int(np.count_nonzero(exponent_ones & ((stored & np.uint16(0x007F)) != 0)))
    if dtype.startswith("float"):
        return int(np.count_nonzero(np.isnan(stored)))
    return 0


def draw(spec: str, rng: np.random.Generator, n: int, single: bool = False) -> np.ndarray:
    """n values drawn as `spec` says; `single` draws in float32 (for float32/bf16 data: half the memory
    and several times faster at the 10^8-element sizes)."""
    kind, params = parse_draw(spec)
    if kind == "uniform":
        if single:
            a, b = np.float32(params[0]), np.float32(params[1])
            return a + (b - a) * rng.random(n, dtype=np.float32)
        return rng.uniform(params[0], params[1], n)
    if kind == "normal":
        if single:
            return np.float32(params[0]) + np.float32(params[1]) * rng.standard_normal(n, dtype=np.float32)
        return rng.normal(params[0], params[1], n)
    if kind == "randint":
        return rng.integers(int(params[0]), int(params[1]), n, endpoint=False)
    return np.full(n, params[0])  # const


def generate(variant: Variant, params: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """The stored inputs (and in-out data) of one call: name -> array in the parameter's dtype."""
    task = variant.task
    rng = np.random.default_rng(seed)
    lengths = task.lengths(params, variant.precision)
    names = task.names(params, variant.precision)
    produced: dict[str, np.ndarray] = {}
    module = task.reference_module
    if module is not None and hasattr(module, "generate"):
        produced = module.generate(rng, names, variant.precision)
    out: dict[str, np.ndarray] = {}
    for a in task.args:
        if a.role_for(variant.precision) not in INPUT_ROLES:
            continue
        p = variant.param(a.name)
        if a.name in produced:
            values = produced[a.name]
        elif a.draw:
            values = draw(a.draw, rng, lengths[a.name], single=p.dtype in ("float32", "bfloat16"))
        else:
            raise TaskError(f"task {task.name}: input {a.name} has no draw and generate() does not provide it")
        values = np.asarray(values).reshape(-1)
        if values.size != lengths[a.name]:
            raise TaskError(f"task {task.name}: input {a.name} has {values.size} elements, expected {lengths[a.name]}")
        out[a.name] = to_storage(values, p.dtype)
    return out


def float64_inputs(variant: Variant, stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the kernel saw, in float64 (bf16 inputs: their rounded values), for the reference."""
    return {n: to_float64(v, variant.param(n).dtype) for n, v in stored.items()}


def reference_names(variant: Variant, params: dict[str, int]) -> dict[str, float]:
    """What a reference sees in `p`: the size names, derived names, `elem`, and every scalar argument
    as the kernel receives it (rounded to the parameter's type: a bf16 scalar is its bf16 value)."""
    task = variant.task
    names: dict[str, float] = dict(task.names(params, variant.precision))
    for name, value in task.scalar_values(params, variant.precision).items():
        dtype = variant.param(name).dtype
        names[name] = float(to_float64(to_storage(np.array([value]), dtype), dtype)[0])
    return names
