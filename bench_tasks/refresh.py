"""Inputs redrawn between timed calls: each arg's refresh draw, and the numpy twin of the device generator.

Every timed call sees input values it has never seen: between calls, outside the timed region, the
driver redraws each refreshed input on the device with `runtime/cm_refresh.h` (Philox4x32-10 under a
secret 64-bit key, counter = (index, call, stream)). `refresh_values` computes the same bits in numpy,
so the harness can check what the device drew and the tests can prove the two agree bit for bit.

An input's refresh draw is its `refresh` spec (FORMAT.md item 6), else its `draw`; an input that
generate() produces and that has no `refresh` is kept (structure: indices, offsets, masks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spec import INPUT_ROLES, SHUFFLE, Task, TaskError, Variant
from .spec import parse_draw as spec_parse_draw

DRAW_CODE = {"uniform": 1, "normal": 2, "randint": 3, "const": 4, "shuffle": 5}
KIND_CODE = {"float32": 0, "bfloat16": 1, "int32": 2, "float64": 3, "int64": 4, "uint32": 5, "uint64": 6}
_INTEGER = ("int32", "int64", "uint32", "uint64")
NORMAL_SCALE = float.fromhex("0x1.3988e1409212ep-17")  # sqrt(3/2) / 2^17, as CM_NORMAL_SCALE
_MASK = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class RefreshDraw:
    """One refreshed argument's draw: `uniform(p0, p1)`, `normal(p0, p1)`, `randint(p0, p1)`, `const(p0)`, or
    `shuffle` (the dataset's own values, permuted per call: for values that must keep a property as a
    whole, e.g. a probability vector's sum)."""

    kind: str
    p0: float = 0.0
    p1: float = 0.0

    @property
    def code(self) -> int:
        return DRAW_CODE[self.kind]

    @property
    def varies(self) -> bool:
        """Whether two calls get different values (a constant is the same every call)."""
        return self.kind != "const" and not (self.kind == "randint" and self.p1 - self.p0 <= 1)


def parse_draw(spec: str, where: str = "") -> RefreshDraw:
    """A draw spec (see spec.parse_draw), or "shuffle", as the generator takes it; randint bounds must be integers."""
    prefix = f"{where}: " if where else ""
    if spec.strip() == SHUFFLE:
        return RefreshDraw("shuffle")
    try:
        kind, params = spec_parse_draw(spec)
    except TaskError as exc:
        raise TaskError(f"{prefix}{exc}") from None
    if kind == "randint":
        lo, hi = params
        if lo != int(lo) or hi != int(hi) or not 0 < hi - lo <= 2**32:
            raise TaskError(f"{prefix}randint({lo:g}, {hi:g}) needs integer bounds with 0 < b - a <= 2^32")
    return RefreshDraw(kind, *params)


def refresh_draw(variant: Variant, name: str) -> RefreshDraw | None:
    """The draw that refreshes input `name` between timed calls, or None when it is kept."""
    arg = variant.task.arg(name)
    if arg.role_for(variant.precision) not in INPUT_ROLES:
        return None
    spec = arg.refresh_for()
    if spec is None:
        return None
    where = f"task {variant.task.name} arg {name}"
    draw = parse_draw(spec, where)
    dtype = variant.param(name).dtype
    if dtype in _INTEGER and draw.kind not in ("randint", "const", "shuffle"):
        raise TaskError(f'{where}: an integer argument is refreshed with randint(a, b), const(v) or "keep", not {draw.kind}')
    return draw


def refreshed_args(variant: Variant) -> list[str]:
    """Inputs whose values change between timed calls."""
    return [a.name for a in variant.task.args if (d := refresh_draw(variant, a.name)) is not None and d.varies]


def replayable_variants(tasks: list[Task]) -> list[str]:
    """Variants whose timed calls would all see the same inputs (every input kept or constant)."""
    return [v.key for t in tasks for v in t.variants() if not refreshed_args(v)]


def stream_id(case: int, arg_index: int) -> int:
    """The generator stream of one argument of one size (counter word 3)."""
    return (case << 8) | arg_index


def philox4x32_10(ctr: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], key: int) -> tuple[np.ndarray, ...]:
    """Philox4x32-10 on arrays of 32-bit counter words (as uint64 arrays); returns four uint64 arrays < 2^32."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) & _MASK for c in ctr)
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(10):
        p0 = c0 * m0
        p1 = c2 * m1
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & _MASK, (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & _MASK
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def refresh_values(dtype: str, draw: RefreshDraw, key: int, call: int, stream: int, index: np.ndarray) -> np.ndarray:
    """The stored values (bf16: uint16 bits) the device writes at `index` for this call: its bit-exact twin."""
    index = np.asarray(index, dtype=np.uint64)
    ctr = (
        index & _MASK,
        index >> np.uint64(32),
        np.full(index.shape, call, dtype=np.uint64),
        np.full(index.shape, stream, dtype=np.uint64),
    )
    w = philox4x32_10(ctr, key)
    if draw.kind == "uniform":
        bits = ((w[0] >> np.uint64(5)) << np.uint64(26)) | (w[1] >> np.uint64(6))
        real = draw.p0 + (draw.p1 - draw.p0) * (bits.astype(np.float64) * 2.0**-53)
        integer = None
    elif draw.kind == "normal":
        s = sum(((x & np.uint64(0xFFFF)) + (x >> np.uint64(16))).astype(np.int64) for x in w)
        real = draw.p0 + draw.p1 * ((2 * s - 8 * 65535).astype(np.float64) * NORMAL_SCALE)  # type: ignore[union-attr]
        integer = None
    elif draw.kind == "randint":
        span = np.uint64(int(draw.p1) - int(draw.p0))
        integer = int(draw.p0) + ((w[0] * span) >> np.uint64(32)).astype(np.int64)
        real = integer.astype(np.float64)
    else:
        real = np.full(index.shape, draw.p0)
        integer = np.full(index.shape, int(draw.p0), dtype=np.int64)
    if dtype == "float32":
        return real.astype(np.float32)
    if dtype == "bfloat16":
        f = real.astype(np.float32).view(np.uint32)
        return ((f + ((f >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF)) >> np.uint32(16)).astype(np.uint16)
    if dtype == "float64":
        return real
    if integer is None:
        raise TaskError(f"{draw.kind} cannot refresh an integer argument")
    return integer.astype({"int32": np.int32, "int64": np.int64, "uint32": np.uint32, "uint64": np.uint64}[dtype])


def shuffle_bits(n: int) -> int:
    """Bits of the Feistel domain for a permutation of [0, n): even, >= 2, 2^bits >= n (as cm::shuffle_bits)."""
    bits = 2
    while bits < 64 and (1 << bits) < n:
        bits += 2
    return bits


def shuffle_indices(n: int, key: int, call: int, stream: int, index: np.ndarray) -> np.ndarray:
    """Where each element at `index` of a shuffled input takes its value from (cm::shuffle_index, bit for bit)."""
    half = shuffle_bits(n) // 2
    mask = np.uint64((1 << half) - 1)
    x = np.asarray(index, dtype=np.uint64).copy()
    todo = np.arange(x.size)
    while todo.size:
        left, right = x[todo] >> np.uint64(half), x[todo] & mask
        for rnd in range(4):
            shape = right.shape
            w = philox4x32_10(
                (
                    right,
                    np.full(shape, rnd, np.uint64),
                    np.full(shape, call, np.uint64),
                    np.full(shape, (stream ^ 0x80000000) & 0xFFFFFFFF, np.uint64),
                ),
                key,
            )
            f = ((w[1] << np.uint64(32)) | w[0]) & mask
            left, right = right, left ^ f
        x[todo] = (left << np.uint64(half)) | right
        todo = todo[x[todo] >= np.uint64(n)]
    return x


def shuffled_values(original: np.ndarray, key: int, call: int, stream: int, index: np.ndarray) -> np.ndarray:
    """The stored values the device writes at `index` of a shuffled input, from the dataset's `original` values."""
    return original[shuffle_indices(original.size, key, call, stream, index).astype(np.int64)]
