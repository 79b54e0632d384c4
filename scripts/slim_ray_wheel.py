"""Write a slim copy of a Ray wheel: what cudamaster's Ray workers need (core, actors, the raylet's agents), without
the Java jars, the dashboard's web client and the libraries we do not use (RLlib, Data, Serve, Tune, Train, LLM), and
with the debug symbols stripped from its native binaries (binutils `strip`; skipped where there is none).

    python3 scripts/slim_ray_wheel.py IN.whl OUT_DIR     # OUT_DIR/<same name>.whl, RECORD rewritten

The device machine takes at most 64 MiB of carried files (scripts/make_device_wheels.sh): the full wheel is ~80 MB.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

DROPPED = ("ray/jars/", "ray/rllib/", "ray/data/", "ray/serve/", "ray/tune/", "ray/train/", "ray/llm/", "ray/dashboard/client/")


def _stripped(name: str, data: bytes) -> bytes:
    """`data` without its debug symbols, if it is an ELF binary and `strip` exists."""
    strip = shutil.which("strip")
    if strip is None or not data.startswith(b"\x7fELF"):
        return data
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(data)
        done = subprocess.run(
            [strip, "--strip-unneeded" if name.endswith(".so") else "--strip-all", str(path)], capture_output=True, check=False
        )
        return path.read_bytes() if done.returncode == 0 else data


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def slim(wheel: Path, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / wheel.name
    changed: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        infos = [i for i in src.infolist() if not i.filename.startswith(DROPPED)]
        record = next(i for i in infos if i.filename.endswith(".dist-info/RECORD"))
        for info in infos:
            if info is record:
                continue
            data = src.read(info)
            slim_data = _stripped(info.filename, data)
            if slim_data is not data:
                changed[info.filename] = _record_line(info.filename, slim_data)
            dst.writestr(info, slim_data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
        lines = [
            changed.get(line.split(",", 1)[0], line) for line in src.read(record).decode().splitlines() if not line.startswith(DROPPED)
        ]
        dst.writestr(record, "\n".join(lines) + "\n", compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    made = slim(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{made} {made.stat().st_size / 2**20:.1f} MiB (from {Path(sys.argv[1]).stat().st_size / 2**20:.1f} MiB)")
