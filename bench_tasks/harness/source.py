"""Candidate sources: validation and the published marked format."""

from __future__ import annotations

from .errors import CandidateError

START_MARK = "// ==== OPTIMIZED KERNEL START ===="
END_MARK = "// ==== OPTIMIZED KERNEL END ===="

# The published harness files put their #includes above the marked block; a marked file gets them
# too (before its own preamble), so a block whose file left some out still compiles.
PRELUDE = """#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cfloat>
#include <climits>
"""


FILE_NAME = "candidate.cu"  # what nvcc's messages call the file in the marked format


def decode(source: str | bytes, limit: int) -> str:
    if isinstance(source, bytes):
        if len(source) > limit:
            raise CandidateError(f"candidate source is {len(source)} bytes; the limit is {limit} (CUDAMASTER_HARNESS__MAX_SOURCE_BYTES)")
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CandidateError(f"candidate source is not UTF-8 (byte {exc.start}); save it as UTF-8 text") from None
    if len(source.encode("utf-8")) > limit:
        raise CandidateError(
            f"candidate source is {len(source.encode())} bytes; the limit is {limit} (CUDAMASTER_HARNESS__MAX_SOURCE_BYTES)"
        )
    if not source.strip():
        raise CandidateError("candidate source is empty; give a .cu that defines the _optimized entry point")
    if "\x00" in source:
        raise CandidateError("candidate source contains NUL bytes; give a plain-text .cu file")
    return source


def extract(source: str) -> str:
    """The code to compile. In the marked format: the harness's includes, then the file's preamble (everything
    above the START marker: its includes, #defines, typedefs and helpers, which the block relies on), then the
    marked block; what follows the END marker (the published file's copy of the baseline, its test harness and
    main) is left out. `#line` keeps nvcc's line numbers those of the file."""
    has_start, has_end = START_MARK in source, END_MARK in source
    if has_start != has_end:
        missing = END_MARK if has_start else START_MARK
        raise CandidateError(f"candidate has one OPTIMIZED KERNEL marker but not the other: add {missing!r}")
    if not has_start:
        return source
    start = source.index(START_MARK) + len(START_MARK)
    end = source.index(END_MARK, start) if END_MARK in source[start:] else -1
    if end < 0:
        raise CandidateError("the OPTIMIZED KERNEL END marker comes before the START marker")
    block = source[start:end]
    if not block.strip():
        raise CandidateError("the block between the OPTIMIZED KERNEL markers is empty")
    preamble = source[: source.index(START_MARK)]
    block_line = source.count("\n", 0, start) + 1  # the START marker's line: the block continues on it
    return f'{PRELUDE}#line 1 "{FILE_NAME}"\n{preamble}\n#line {block_line} "{FILE_NAME}"\n{block}\n'


def prepare(source: str | bytes, limit: int) -> str:
    return extract(decode(source, limit))
