"""Write a slim copy of a Ray wheel: what cudamaster's Ray workers need (core, actors, the raylet's agents), without
the Java jars, the dashboard's web client and the libraries we do not use (RLlib, Data, Serve, Tune, Train, LLM).

    python3 scripts/slim_ray_wheel.py IN.whl OUT_DIR     # OUT_DIR/<same name>.whl, RECORD rewritten

The device machine takes at most 64 MiB of carried files (scripts/make_device_wheels.sh): the full wheel is ~80 MB.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

DROPPED = ("ray/jars/", "ray/rllib/", "ray/data/", "ray/serve/", "ray/tune/", "ray/train/", "ray/llm/", "ray/dashboard/client/")


def slim(wheel: Path, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename.startswith(DROPPED):
                continue
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines()
                data = ("\n".join(line for line in lines if not line.startswith(DROPPED)) + "\n").encode()
            dst.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    made = slim(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{made} {made.stat().st_size / 2**20:.1f} MiB (from {Path(sys.argv[1]).stat().st_size / 2**20:.1f} MiB)")
