#!/usr/bin/env bash
# Build .whl/: the wheels the device machine (Python 3.12, no network) lacks to run cudamaster's
# GPU tests and figure scripts. Packages the device image already has (numpy, scipy, rich, typer,
# httpx, pytest, tiktoken, ...) are left out. Run here, then carry .whl in the device call. pytest-xdist: pyproject's
# addopts pass -n (the CPU suite's workers), which pytest refuses without it; the device's GPU runs are serial (-n 0).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_27_x86_64 --platform manylinux1_x86_64 -d .whl \
  pydantic==2.14.4 pydantic-settings==2.16.3 langgraph==1.2.24 langgraph-checkpoint-sqlite==3.1.2 \
  langchain-core==1.8.1 langchain-openai==1.7.4 fastapi==0.165.0 uvicorn==0.54.0 sqlalchemy==2.1.9 \
  alembic==1.20.1 "psycopg[binary,pool]==3.3.9" pytest-timeout==2.4.0 pytest-xdist==3.8.0 \
  jinja2==3.1.6 itsdangerous==2.2.0 threadpoolctl==3.8.0 python-multipart==0.0.34 python-dotenv==1.2.4
# Ray (scripts/ray_device.sh): a slim copy of its wheel (~37 MiB instead of ~80: no Java jars, dashboard web client,
# RLlib, Data, Serve, Tune, Train, LLM; scripts/slim_ray_wheel.py) and the dependencies the device image lacks. The Ray
# wheel goes to .whl-ray/ (33 MiB), carried only by calls with ray-* steps: with it, .whl and the tree pass the device
# call's 64 MiB limit.
rm -rf /tmp/cm-ray-wheel && mkdir -p /tmp/cm-ray-wheel
python3 -m pip download -q --only-binary=:all: --no-deps --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d /tmp/cm-ray-wheel ray==2.60.0
rm -rf .whl-ray && mkdir -p .whl-ray
python3 scripts/slim_ray_wheel.py /tmp/cm-ray-wheel/ray-2.60.0-*.whl .whl-ray
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  "msgpack>=1.0.0,<2.0.0" "protobuf>=3.20.3" jsonschema filelock
# drop what the device image already provides
for p in numpy scipy rich typer httpx httpcore anyio idna certifi h11 click pygments markdown_it mdurl pytest pluggy iniconfig \
         shellingham typing_extensions tiktoken regex requests urllib3 charset_normalizer PyYAML pyyaml \
         packaging MarkupSafe markupsafe xxhash tqdm greenlet \
         zstandard psycopg psycopg_binary psycopg_pool; do  # zstandard: optional for langsmith; psycopg: the device uses SQLite (64 MiB carry limit)
  rm -f .whl/${p}-*.whl
done
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
du -sh .whl; ls .whl | wc -l
# The device has no package manager: carry bubblewrap's .deb (the sandbox for untrusted kernels) in the
# git-ignored .devsite/; scripts/device_checks.sh unpacks it with dpkg -x and points CUDAMASTER_HARNESS__SANDBOX_BWRAP at it.
mkdir -p .devsite && rm -f .devsite/bubblewrap_*.deb && (cd .devsite && apt-get download bubblewrap >/dev/null) && ls .devsite
