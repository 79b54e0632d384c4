"""Work items (bench_tasks/work.py): a worker rebuilds the task from the item, and an evaluation reuses the
compile node's object instead of running nvcc again (counted with the harness's nvcc-run counter)."""

from __future__ import annotations

import pytest

from bench_tasks import load_task
from bench_tasks.harness import compile as cc
from bench_tasks.harness.datacache import task_version
from bench_tasks.spec import TaskError, custom_task
from bench_tasks.work import CompiledObject, CustomDefinition, WorkItem, build_task, definition_of, work_item
from settings import HarnessSettings
from tests.conftest import requires_nvcc
from tests.support import kernels as k

PROTO = 'extern "C" void scale(const float* X, float* Y, float a, int N)'
ARGS = {
    "X": {"role": "input", "length": "N"},
    "Y": {"role": "output", "length": "N"},
    "a": {"role": "scalar", "value": "0.5"},
    "N": {"role": "scalar", "value": "N"},
}
BASELINE = """
__global__ void scale_kernel(const float* X, float* Y, float a, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) Y[i] = a * X[i];
}
extern "C" void scale(const float* X, float* Y, float a, int N) {
  scale_kernel<<<(N + 127) / 128, 128>>>(X, Y, a, N);
}
"""


@pytest.fixture
def restore_registry():
    """WorkerEngine registers the tasks it rebuilds: keep this process's registry as it was."""
    from bench_tasks import spec

    saved = dict(spec._REGISTERED)
    yield
    spec._REGISTERED.clear()
    spec._REGISTERED.update(saved)


def test_a_builtin_task_is_rebuilt_from_its_item_alone(tmp_path):
    original = load_task("matrix_mul")
    item = work_item("evaluate", original, "fp32", None, settings=HarnessSettings(cache_dir=tmp_path))
    carried = WorkItem.model_validate_json(item.model_dump_json())  # what crosses the wire
    rebuilt = build_task(carried.task, tmp_path / "worker")
    assert rebuilt.directory != original.directory and rebuilt.directory.is_relative_to(tmp_path / "worker")
    assert (rebuilt.prototypes, rebuilt.args, rebuilt.sizes, rebuilt.tolerance, rebuilt.complexity) == (
        original.prototypes,
        original.args,
        original.sizes,
        original.tolerance,
        original.complexity,
    )
    assert rebuilt.baseline_source() == original.baseline_source()
    # Same files, same data-cache version: a worker's cached datasets stay valid for the rebuilt task.
    assert task_version(rebuilt.variant("fp32")) == task_version(original.variant("fp32"))


def test_a_changed_definition_is_a_different_task_not_a_cached_one(tmp_path):
    definition = definition_of(load_task("vector_add"))
    changed = definition.model_copy(update={"task_toml": definition.task_toml.replace("Element-wise", "Elementwise", 1) + "\n"})
    assert changed.digest != definition.digest
    assert build_task(changed, tmp_path).directory != build_task(definition, tmp_path).directory


def test_a_custom_task_is_rebuilt_from_its_item_where_it_was_never_registered(tmp_path):
    task = custom_task("ct_work_item_scale", "fp32", PROTO, ARGS, [{"N": 1000}, {"N": 4096}], BASELINE, summary="scale")
    with pytest.raises(TaskError):  # this process never registered it: only the item knows it
        load_task("ct_work_item_scale")
    item = WorkItem.model_validate_json(work_item("compile", task, "fp32", "// src", settings=HarnessSettings()).model_dump_json())
    assert isinstance(item.task, CustomDefinition)
    rebuilt = build_task(item.task, tmp_path)
    assert rebuilt.custom and rebuilt.oracle == "baseline"
    assert (rebuilt.name, rebuilt.args, rebuilt.sizes, rebuilt.tolerance, rebuilt.complexity, rebuilt.bytes) == (
        task.name,
        task.args,
        task.sizes,
        task.tolerance,
        task.complexity,
        task.bytes,
    )
    assert rebuilt.baseline_source() == BASELINE
    assert rebuilt.variant("fp32").prototype.c_declaration() == task.variant("fp32").prototype.c_declaration()


def test_an_item_carries_the_measurement_settings_but_not_the_machine_ones(tmp_path):
    submitter = HarnessSettings(cache_dir=tmp_path / "service", nvcc_flags=["-O2"], seeds=[7, 8], nvcc="/opt/odd/nvcc")
    item = work_item("evaluate", load_task("vector_add"), "fp32", None, settings=submitter)
    assert "cache_dir" not in item.harness and "nvcc" not in item.harness
    worker = HarnessSettings(cache_dir=tmp_path / "worker")
    on_worker = item.settings_on(worker)
    assert (on_worker.nvcc_flags, on_worker.seeds) == (["-O2"], [7, 8])
    assert (on_worker.cache_dir, on_worker.nvcc) == (tmp_path / "worker", worker.nvcc)


def test_a_compile_cache_entry_refuses_odd_names(tmp_path):
    with pytest.raises(ValueError):
        CompiledObject(key="../x", files={"ok": b""}).install(tmp_path)
    with pytest.raises(ValueError):
        CompiledObject(key="abc", files={"ok": b"", "../../evil": b"x"}).install(tmp_path)


@requires_nvcc
def test_the_evaluation_reuses_the_compile_nodes_object_on_another_machine_with_fake_gpu(tmp_path, restore_registry):
    """Two workers with their own caches (two machines): the compile worker runs nvcc once; the GPU worker
    evaluates the same source with the compiled object it was handed and runs nvcc for the candidate 0 times.
    Without the object (the control) it runs nvcc for it: the count is real."""
    from gpu.ray.worker import WorkerEngine

    factory = "gpu.fake:FakeGpuEvaluator"
    compiler = WorkerEngine("compile-0", "cpu", factory, {"cache_dir": str(tmp_path / "cpu")})
    gpu = WorkerEngine("gpu-0", "gpu", factory, {"cache_dir": str(tmp_path / "gpu")})
    control = WorkerEngine("gpu-1", "gpu", factory, {"cache_dir": str(tmp_path / "gpu-control")})
    source = k.fast_kernel(2.0) + f"\n// {tmp_path.name}\n"  # a source no cache has seen
    settings = HarnessSettings()
    task = load_task("vector_add")

    before = cc.NVCC_RUNS["candidate"]
    compiled = compiler.run(work_item("compile", task, "fp32", source, settings=settings))
    assert compiled.compile is not None and compiled.compile.ok, compiled.compile
    assert compiled.compiled is not None and compiled.nvcc_runs["candidate"] == before + 1

    done = gpu.run(work_item("evaluate", task, "fp32", source, settings=settings, compiled=compiled.compiled))
    assert done.evaluation is not None and done.evaluation.ok and done.evaluation.score == 2.0
    assert done.nvcc_runs["candidate"] == before + 1, "the GPU worker compiled the candidate again"
    assert done.evaluation.gpu.host and done.evaluation.gpu.name.startswith("FAKE GPU")

    again = control.run(work_item("evaluate", task, "fp32", source, settings=settings))
    assert again.evaluation is not None and again.evaluation.ok
    assert again.nvcc_runs["candidate"] == before + 2
