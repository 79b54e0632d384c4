"""A PyTorch reference's task stored (issue 42): the row of the `pytorch_tasks` table holds what the sandboxed run
reported, and every process rebuilds an identical task from it without running the reference (the sandbox is
forbidden below, so a rebuild that ran it would fail); a Ray worker rebuilds it from its work item the same way.
Both databases: the .npz of the float64 references goes through a LargeBinary column."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from app import pytorch_tasks, stored_tasks
from app.db.engine import make_engine, make_sessionmaker
from app.db.migrate import upgrade
from app.db.models import StoredPyTorchTask
from app.schemas import PyTorchTaskIn
from app.services.errors import Invalid
from bench_tasks.pytorch import PyTorchTask
from bench_tasks.work import PyTorchDefinition, WorkItem, build_task, work_item
from settings import load_settings

pytest.importorskip("torch")  # the optional extra (CI installs its CPU build)
pytestmark = pytest.mark.timeout(300)

REFERENCE = (Path(__file__).parents[1] / "bench" / "pytorch_refs" / "linear_params.py").read_text()
SIZES = [{"batch_size": 4}, {"batch_size": 8, "out_features": 16}]


@pytest.fixture(scope="module")
def submitted() -> tuple[PyTorchTask, dict]:
    """The reference probed once (in the sandbox) as the service does at submit, and its row's columns."""

    class Collect:  # a session that only collects what is added (the commit is the caller's)
        def __init__(self) -> None:
            self.rows: list = []

        def add(self, row) -> None:
            self.rows.append(row)

    session = Collect()
    body = PyTorchTaskIn(name="linear", reference_py=REFERENCE, sizes=SIZES)
    task = pytorch_tasks.store(session, body, "fp32", None, load_settings().service)
    [row] = session.rows
    columns = {c: getattr(row, c) for c in ("id", "name", "precision", "reference_py", "probe", "reference_arrays", "created_at")}
    return task, columns


def _same_task(a: PyTorchTask, b: PyTorchTask, *, arrays: bool) -> None:
    assert b.name == a.name and b.prototypes["fp32"].text == a.prototypes["fp32"].text
    assert b.args == a.args and b.sizes == a.sizes and b.complexity == a.complexity and b.bytes == a.bytes
    assert b.tolerance == a.tolerance and b.notes == a.notes and b.baseline_text == a.baseline_text
    assert a.probe is not None and b.probe is not None
    assert list(b.probe.constants.items()) == list(a.probe.constants.items())  # file order: the prototype's dims
    assert b.probe.tensors == a.probe.tensors and b.probe.sizes == a.probe.sizes and b.probe.flops == a.probe.flops
    for size in a.size_list("paper"):
        assert b.names(size, "fp32") == a.names(size, "fp32")
    if arrays:
        assert len(b.probe.references) == len(a.probe.references) == len(SIZES)
        for ref_a, ref_b in zip(a.probe.references, b.probe.references, strict=True):
            for seed_a, seed_b in zip(ref_a, ref_b, strict=True):
                assert list(seed_a) == list(seed_b) and seed_a  # inputs, params, outputs of each seed
                for key in seed_a:
                    assert seed_b[key].dtype == seed_a[key].dtype and np.array_equal(seed_b[key], seed_a[key]), key


@pytest.fixture
def no_sandbox(monkeypatch):
    """Rebuilding must not run the reference: any sandboxed run here fails the test."""
    import bench_tasks.pytorch.task as task_module

    def forbidden(*args, **kwargs):
        raise AssertionError("the reference was run to rebuild a stored task")

    monkeypatch.setattr(task_module, "run_child", forbidden)


def test_a_stored_row_round_trips_to_an_identical_task(submitted, db_url, no_sandbox, monkeypatch):
    task, columns = submitted
    assert columns["id"] == task.name and columns["precision"] == "fp32" and columns["reference_py"] == REFERENCE
    assert (
        'extern "C" void ' + task.name + "(float* out, const float* x, const float* weight, const float* bias"
        in task.prototypes["fp32"].text
    )
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            session.add(StoredPyTorchTask(**columns))
            session.commit()
        with make_sessionmaker(engine)() as session:
            row = session.get(StoredPyTorchTask, task.name)
            assert row is not None
            rebuilt = pytorch_tasks.to_task(row, arrays=True)
            _same_task(task, rebuilt, arrays=True)
            # another process: nothing registered; the runner and the submit path register it from the row by its id
            import bench_tasks.spec as spec

            monkeypatch.setattr(spec, "_REGISTERED", {})
            with pytest.raises(spec.TaskError):
                spec.load_task(task.name)
            registered = stored_tasks.register_named(session, task.name)
            assert registered is not None and spec.load_task(task.name) is registered
            _same_task(task, registered, arrays=False)  # type: ignore[arg-type]  # registered without its arrays
            monkeypatch.setattr(spec, "_REGISTERED", {})
            assert stored_tasks.register_all(session) == 1 and isinstance(spec.load_task(task.name), PyTorchTask)
    finally:
        engine.dispose()


def test_a_stored_row_of_another_format_is_refused_with_the_reason(submitted, no_sandbox, monkeypatch):
    import bench_tasks.spec as spec

    _, columns = submitted
    monkeypatch.setattr(spec, "_REGISTERED", {})  # a process that has not registered it
    row = StoredPyTorchTask(**(columns | {"probe": {**columns["probe"], "format": 99}}))
    with pytest.raises(stored_tasks.StoredTaskInvalid, match="format 99"):
        stored_tasks.register(row)


def _npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def test_stored_reference_arrays_that_are_no_npz_or_hold_pickles_are_refused_with_the_reason(submitted, no_sandbox):
    """A row's .npz as the database may hold it after a crash or a hand edit: never unpickled (allow_pickle=False),
    and whatever np.load makes of it is StoredTaskInvalid naming the task, not a zipfile or EOF error."""
    _, columns = submitted
    entry = columns["probe"]["references"][0][0][0][1]  # the first array's name in the .npz
    good = columns["reference_arrays"]
    for arrays in (
        _npz(**{entry: np.array([{"__reduce__": "os.system"}], dtype=object)}),  # a pickle inside the .npz
        b"PK\x03\x04" + b"x" * 64,  # a zip's magic, then nothing of a zip
        good[: len(good) // 2],  # cut short
        b"",
    ):
        row = StoredPyTorchTask(**(columns | {"reference_arrays": arrays}))
        with pytest.raises(pytorch_tasks.StoredTaskInvalid, match=columns["id"]):
            pytorch_tasks.to_task(row, arrays=True)


def test_a_worker_rebuilds_the_task_from_its_work_item_without_running_the_reference(submitted, no_sandbox, tmp_path):
    task, _ = submitted
    item = work_item("evaluate", task, "fp32", "// candidate", settings=task.settings or load_settings().harness)
    assert isinstance(item.task, PyTorchDefinition)
    carried = WorkItem.model_validate_json(item.model_dump_json())  # what travels to the worker
    rebuilt = build_task(carried.task, tmp_path)
    assert isinstance(rebuilt, PyTorchTask) and rebuilt.limits == task.limits
    _same_task(task, rebuilt, arrays=False)  # the worker's oracle runs the reference itself: no arrays travel


def test_reference_arrays_over_the_stored_bound_are_a_422_and_nothing_is_added():
    class Collect:
        def __init__(self) -> None:
            self.rows: list = []

        def add(self, row) -> None:
            self.rows.append(row)

    session = Collect()
    settings = load_settings().service.model_copy(update={"max_pytorch_stored_bytes": 1000})
    body = PyTorchTaskIn(name="linear", reference_py=REFERENCE, sizes=SIZES[:1])
    with pytest.raises(Invalid) as info:
        pytorch_tasks.store(session, body, "fp32", None, settings)  # type: ignore[arg-type]
    assert "CUDAMASTER_SERVICE__MAX_PYTORCH_STORED_BYTES" in str(info.value) and session.rows == []
