"""The README's commands (issue 43, items 7 and 14): its first lines are the two commands, the test command carries
the settings CI runs the suite with (.ci/run), and the five-minute tour's commands run as written against a REAL
`cudamaster serve` process (uvicorn, the FAKE scripted agent of fake_agent.py: no GPU, no LLM) with `cudamaster`
and curl, as a person types them. The install itself is not run again here (CI does: .ci/run)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, sqlite_only

pytestmark = [pytest.mark.timeout(300)]
README = (REPO / "README.md").read_text()
CI = (REPO / ".ci" / "run").read_text()


def _blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def _tour() -> str:
    section = README.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    (block,) = _blocks(section)
    return block


def test_the_readme_opens_with_the_two_commands():
    first = README.splitlines()[:6]
    assert first[0] == "# cudamaster" and first[2] == "```bash" and first[5] == "```"
    serve, test = first[3], first[4]
    assert serve.endswith("pip install -e . && cudamaster serve")
    assert re.search(r'pip install -e "\.\[[a-z,]+\]"', test) and test.split("&&")[-1].split()[-1] == "pytest"
    for line in (serve, test):
        assert subprocess.run(["bash", "-n", "-c", line], capture_output=True).returncode == 0, line


def test_the_readme_test_command_carries_the_settings_ci_runs_pytest_with():
    exported = re.search(r"^export (PYTEST_DISABLE_PLUGIN_AUTOLOAD=\S+ PYTEST_PLUGINS=\S+)$", CI, re.M)
    assert exported and re.search(r"^unset PYTHONDONTWRITEBYTECODE$", CI, re.M)
    test = README.splitlines()[4].split("&&")[-1]
    words = shlex.split(test)
    assert words[:3] == ["env", "-u", "PYTHONDONTWRITEBYTECODE"] and words[-1] == "pytest"
    assert dict(w.split("=", 1) for w in words[3:-1]) == dict(w.split("=", 1) for w in exported.group(1).split())
    ci_extras = set(re.search(r'pip install -q -e "\.\[([a-z,]+)\]"', CI).group(1).split(","))  # type: ignore[union-attr]
    readme_extras = set(re.search(r'pip install -e "\.\[([a-z,]+)\]"', README.splitlines()[4]).group(1).split(","))  # type: ignore[union-attr]
    assert readme_extras == ci_extras  # a new user's run needs what CI's does (ray: the Ray tests; torch: PyTorch references)


def test_the_readme_names_no_command_that_is_gone():
    reference = (REPO / "docs" / "reference" / "cli.md").read_text()
    assert "admin|member|reviewer|viewer" in reference and "cudamaster profile run TASK" in reference


@sqlite_only
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_FAKE_the_readme_tour_runs_as_written(db_url, server_factory, tmp_path):
    server = server_factory(FAKE_AGENT_STEP_SECONDS="0")
    script = _tour().replace("localhost:8000", f"127.0.0.1:{server.port}").replace("127.0.0.1:8000", f"127.0.0.1:{server.port}")
    env = {
        **os.environ,
        "CUDAMASTER_SERVICE__DATABASE_URL": db_url,  # `cudamaster keys create` writes where the service reads
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),  # this venv's `cudamaster`
        "PYTHONPATH": str(REPO),
    }
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = run.stdout
    assert "event: end" in out and '"status":"finished"' in out.replace(" ", "")  # the first job, followed live to its end
    compared, _ = json.JSONDecoder().raw_decode(next(line for line in out.splitlines() if line.startswith("{")))
    job_ids = re.findall(r"/compare/jobs\?ids=(job_[0-9a-f]{16}),(job_[0-9a-f]{16})", out)
    assert job_ids and set(job_ids[0]) <= set(re.findall(r"job_[0-9a-f]{16}", json.dumps(compared)))
