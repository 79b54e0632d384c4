"""Shared bits of the profiling tests: fixture paths and fake ncu scripts."""

from __future__ import annotations

import stat
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"
LABELLED_FIXTURES = FIXTURES / "labelled"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


def fake_ncu(tmp_path: Path, body: str, name: str = "ncu") -> Path:
    """A shell script standing in for ncu. `$LOG` is the --log-file argument; `$@` all arguments."""
    script = tmp_path / name
    script.write_text(
        "#!/bin/bash\n"
        'LOG=""; prev=""\n'
        'for a in "$@"; do if [ "$prev" = "--log-file" ]; then LOG="$a"; fi; prev="$a"; done\n'
        'if [ "$1" = "--version" ]; then echo "NVIDIA (R) Nsight Compute Command Line Profiler"; '
        'echo "Version 2025.3.1.0 (fake)"; exit 0; fi\n'
        'echo "$@" > "$(dirname "$0")/args.txt"\n' + body + "\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script
