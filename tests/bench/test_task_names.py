"""A task is named, never located: load_task takes only the name of a built-in task (or of a task
registered in this process), so a path cannot make the harness read another folder's task.toml or
import its reference.py."""

from __future__ import annotations

import shutil

import pytest

from bench_tasks.spec import TASKS_DIR, TaskError, load_task, task_names


def test_every_builtin_name_loads():  # published names keep their capitals (FFT, RELU, SwiGLU)
    names = task_names()
    assert "vector_add" in names
    assert [load_task(n).name for n in names] == names


@pytest.mark.parametrize(
    "name",
    [
        "../tasks/vector_add",
        "./vector_add",
        "vector_add/",
        "tasks/vector_add",
        "vector_add/../vector_add",
        str(TASKS_DIR / "vector_add"),
        "Vector_Add",
        "vector_add\x00",
        "",
        "a" * 65,
    ],
)
def test_paths_and_odd_names_are_unknown_tasks(name):
    with pytest.raises(TaskError, match=r"unknown task .*(did you mean|cudamaster bench list)"):
        load_task(name)


def test_a_folder_elsewhere_with_a_task_toml_is_never_read(tmp_path):
    folder = tmp_path / "evil"
    shutil.copytree(TASKS_DIR / "vector_add", folder)
    marker = tmp_path / "imported"
    (folder / "reference.py").write_text(
        f"open({str(marker)!r}, 'w').write('reference.py was imported')\n"
        "def reference(*args, **kwargs):\n    raise AssertionError('not ours')\n"
    )
    for name in (str(folder), str(folder) + "/", f"../../../../../../../..{folder}"):
        with pytest.raises(TaskError, match="unknown task"):
            load_task(name).reference_module  # noqa: B018 - the import is what must not happen
    assert not marker.exists()
