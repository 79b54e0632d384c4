"""The system prompt tells the model which pointers are host pointers and how each output is prepared."""

from __future__ import annotations

from pathlib import Path

from bench_tasks import load_task
from bench_tasks.spec import load_task_file
from graph.prompting import arguments_text

FORMAT_TASK = Path(__file__).parents[1] / "bench" / "format_task" / "task.toml"


def test_host_pointers_and_per_precision_roles_are_named():
    task = load_task_file(FORMAT_TASK)
    fp32, bf16 = arguments_text(task.variant("fp32")), arguments_text(task.variant("bf16"))
    assert fp32.startswith("h, y are host pointers") and "- y: zeroed by the harness" in fp32
    assert bf16.startswith("Every pointer is a device pointer.") and "- y: poisoned before every call" in bf16
    assert "- idx: poisoned" in fp32 and "- x:" not in fp32  # inputs are not listed


def test_device_only_tasks_say_so():
    text = arguments_text(load_task("dot_product").variant("fp32"))
    assert text.splitlines() == [
        "Every pointer is a device pointer.",
        "- loss: zeroed by the harness before every call: the kernel adds into it.",
    ]
