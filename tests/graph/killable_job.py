"""Child process for the kill-and-resume test: starts a job whose first compile announces itself
(touches a file) and then hangs, so the parent can SIGKILL it in the middle of the compile step.

    python -m tests.graph.killable_job DB STATE_DIR HARNESS_CACHE BASE_URL MARKER
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from gpu.fake import FakeGpuEvaluator
from graph.contract import JobSpec
from graph.runner import make_checkpointer, start_job
from settings import AgentSettings, HarnessSettings, RetrySettings

MODELS = {"planner": "planner-model", "coder": "coder-model", "compiler": "compiler-model", "debugger": "debugger-model"}


def main() -> None:
    db, state_dir, harness_cache, base_url, marker = sys.argv[1:6]

    def announce_and_hang(source: str) -> None:
        Path(marker).write_text(source)
        time.sleep(600)  # the parent kills us here

    settings = AgentSettings(
        base_url=base_url,
        api_key="test-key",
        state_dir=Path(state_dir),
        prices={},
        roles={r: {"model": m} for r, m in MODELS.items()},
        retry=RetrySettings(initial_interval_s=0.01),
    )
    evaluator = FakeGpuEvaluator(HarnessSettings(cache_dir=Path(harness_cache)), before_compile=announce_and_hang)
    start_job(
        JobSpec(task="vector_add", precision="fp32", rounds=2, debug=1),
        job_id="killed",
        checkpointer=make_checkpointer(f"sqlite:///{db}"),
        evaluator=evaluator,
        settings=settings,
    )


if __name__ == "__main__":
    main()
