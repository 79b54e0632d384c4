import os
import time

import pytest

from profiling import metrics as m
from profiling.classify import Bottleneck
from profiling.errors import (
    CounterPermissionError,
    NcuNotFoundError,
    NoKernelsProfiledError,
    ProfilerTimeoutError,
    ProfilerUnavailableError,
    TargetCrashedError,
)
from profiling.ncu import default_params, ncu_command, profile_command, profile_kernel, run_ncu
from settings import ProfilingSettings, get_profiling_settings

from .helpers import FIXTURES, fake_ncu


def settings_for(monkeypatch, script, timeout=30.0):
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", str(script))
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU_TIMEOUT_S", str(timeout))
    return get_profiling_settings()


def test_command_has_the_required_flags(tmp_path):
    cmd = ncu_command("ncu", ["./driver", "plan.txt"], tmp_path / "r.csv")
    joined = " ".join(cmd)
    assert "--clock-control none" in joined and "--profile-from-start off" in joined
    assert "--csv --page raw" in joined and f"--log-file {tmp_path / 'r.csv'}" in joined
    for section in ("SpeedOfLight", "ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats"):
        assert f"--section {section}" in joined
    assert cmd[-2:] == ["./driver", "plan.txt"]


def test_missing_ncu_with_fake_ncu_path(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", str(tmp_path / "no-such-ncu"))
    with pytest.raises(NcuNotFoundError, match="CUDAMASTER_PROFILING__NCU"):
        run_ncu(["true"], settings=get_profiling_settings())
    monkeypatch.setenv("CUDAMASTER_PROFILING__NCU", "ncu-not-on-path-anywhere")
    with pytest.raises(NcuNotFoundError, match="Install Nsight Compute"):
        profile_kernel("vector_add", "fp32", settings=get_profiling_settings())  # fails before compiling


def test_permission_error_with_fake_ncu(monkeypatch, tmp_path):
    script = fake_ncu(
        tmp_path,
        'echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU '
        'Performance Counters on the target device 0." >> "$LOG"; exit 1',
    )
    with pytest.raises(CounterPermissionError) as exc:
        run_ncu(["./app"], settings=settings_for(monkeypatch, script))
    msg = str(exc.value)
    assert "root" in msg and "NVreg_RestrictProfilingToAdminUsers=0" in msg and "SYS_ADMIN" in msg


def test_permission_error_on_stdout_with_fake_ncu(monkeypatch, tmp_path):
    script = fake_ncu(tmp_path, 'echo "==ERROR== ERR_NVGPUCTRPERM - no permission"; exit 0')
    with pytest.raises(CounterPermissionError):
        run_ncu(["./app"], settings=settings_for(monkeypatch, script))


def test_timeout_with_fake_ncu_kills_the_process_group(monkeypatch, tmp_path):
    marker = tmp_path / "child-survived"
    script = fake_ncu(tmp_path, f'(sleep 3; touch "{marker}") & sleep 30; wait')
    started = time.monotonic()
    with pytest.raises(ProfilerTimeoutError, match="CUDAMASTER_PROFILING__NCU_TIMEOUT_S"):
        run_ncu(["./app"], settings=settings_for(monkeypatch, script, timeout=1.0))
    assert time.monotonic() - started < 10
    time.sleep(3.5)
    assert not marker.exists(), "a child of the timed-out ncu was left running"


def test_target_crash_with_fake_ncu(monkeypatch, tmp_path):
    script = fake_ncu(
        tmp_path,
        'echo "CMERR cuda an illegal memory access was encountered"; '
        'echo "==ERROR== The application returned an error code (3)." >> "$LOG"; exit 3',
    )
    with pytest.raises(TargetCrashedError, match="illegal memory access") as exc:
        run_ncu(["./app"], settings=settings_for(monkeypatch, script))
    assert "exit status 3" in str(exc.value)


def test_profiler_that_cannot_start_with_fake_ncu(monkeypatch, tmp_path):
    script = fake_ncu(tmp_path, 'echo "==ERROR== Failed to initialize the profiler: LibraryNotLoaded"; exit 1')
    with pytest.raises(ProfilerUnavailableError, match="hardware counters cannot be read here"):
        run_ncu(["./app"], settings=settings_for(monkeypatch, script))


def test_no_kernels_with_fake_ncu(monkeypatch, tmp_path):
    script = fake_ncu(tmp_path, f'cat "{FIXTURES / "synthetic_no_kernels.txt"}" >> "$LOG"')
    with pytest.raises(NoKernelsProfiledError):
        run_ncu(["./app"], settings=settings_for(monkeypatch, script))


def test_profile_command_with_fake_ncu(monkeypatch, tmp_path):
    script = fake_ncu(tmp_path, f'cp "{FIXTURES / "synthetic_saxpy_raw.csv"}" "$LOG"')
    report = profile_command(["./labelled", "saxpy_fp32"], name="saxpy_fp32", settings=settings_for(monkeypatch, script))
    assert report.bottleneck == Bottleneck.memory_bandwidth and report.impl == "saxpy_fp32"
    assert report.ncu_version.startswith("Version 2025.3.1.0") and "--profile-from-start" in report.command
    assert report.command[report.command.index("--profile-from-start") + 1] == "off"


def test_default_params_is_the_largest_quick_paper_size():
    from bench_tasks import load_task

    t = load_task("vector_add")
    params = default_params("vector_add", "fp32")
    assert params in t.size_list("paper")
    assert params == max(t.size_list("paper"), key=lambda p: t.work(p, "fp32"))  # all are quick
    tight = ProfilingSettings(quick_bytes=100_000)  # 3 * 4 * N bytes < 1e5: N <= 8333
    assert default_params("vector_add", "fp32", tight) == {"N": 4096}
    none_quick = ProfilingSettings(quick_flops=1)
    assert default_params("vector_add", "fp32", none_quick) == min(t.size_list("paper"), key=lambda p: t.work(p, "fp32"))


@pytest.mark.slow
def test_profile_kernel_end_to_end_with_fake_ncu(monkeypatch, tmp_path, unsandboxed):
    """Compiles the real driver (nvcc, no GPU needed); the fake ncu checks it was handed the driver."""
    script = fake_ncu(
        tmp_path,
        'last="${@: -1}"; test -f "$last" || { echo "==ERROR== no plan $last"; exit 1; }\n'
        f'cp "{FIXTURES / "synthetic_chase_raw.csv"}" "$LOG"',
    )
    report = profile_kernel("vector_add", "fp32", settings=settings_for(monkeypatch, script))
    assert report.task == "vector_add" and report.precision == "fp32" and report.impl == "baseline"
    assert report.params == default_params("vector_add", "fp32")
    assert report.bottleneck == Bottleneck.memory_latency and report.summary[m.SM_THROUGHPUT].value == 0.8
    args = (tmp_path / "args.txt").read_text().split()
    assert args[-1].endswith("plan.txt") and "driver" in args[-2]


@pytest.mark.slow
def test_ncu_and_its_target_run_inside_the_sandbox(monkeypatch, tmp_path, harness_settings):
    """A fake ncu that fails unless it runs as the sandbox's unprivileged user, with a cleared environment,
    without the host's home, and with the staged driver and plan; it writes the report into the scratch
    directory, from where the harness reads it."""
    from bench_tasks.harness import sandbox as sb
    from tests.bench.sandbox_support import scratch_root

    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", "sk-test-not-for-the-sandbox")
    with scratch_root() as root:
        settings = harness_settings.model_copy(update={"scratch_root": root})
        if not sb.describe(settings).startswith("bwrap"):
            pytest.skip(f"no working bubblewrap here: {sb.describe(settings)}")
        tools = root / "fake-ncu"  # a place the sandbox's uid can reach (the tool's directory is bound read-only)
        tools.mkdir(mode=0o755)
        csv = (FIXTURES / "synthetic_chase_raw.csv").read_text()
        script = fake_ncu(
            tools,
            'fail() { echo "==ERROR== $1"; exit 1; }\n'
            '[ "$(id -u)" != 0 ] || fail "ncu runs as root"\n'
            'env | grep -q CUDAMASTER && fail "the environment was not cleared"\n'
            'test -e /root && fail "the host home is visible"\n'
            'last="${@: -1}"; test -f "$last" || fail "no plan $last"\n'
            'test -x "${@: -2:1}" || fail "no driver"\n'
            'case "$LOG" in "$PWD"/*) ;; *) fail "report outside the scratch directory: $LOG";; esac\n'
            f"cat > \"$LOG\" <<'CSV'\n{csv}\nCSV",
        )
        os.chmod(tools, 0o755)
        report = profile_kernel("vector_add", "fp32", settings=settings_for(monkeypatch, script), harness_settings=settings)
    assert report.bottleneck == Bottleneck.memory_latency and report.summary[m.SM_THROUGHPUT].value == 0.8


@pytest.mark.slow
def test_profile_kernel_rejects_a_candidate_that_does_not_build(monkeypatch, tmp_path, unsandboxed):
    script = fake_ncu(tmp_path, "exit 0")
    with pytest.raises(ValueError, match="compile_error"):
        profile_kernel("vector_add", "fp32", "this is not CUDA", {"N": 1024}, settings=settings_for(monkeypatch, script))


@pytest.mark.slow
def test_baseline_corpus_with_fake_ncu(monkeypatch, tmp_path, unsandboxed):
    from profiling.corpus import profile_baselines, write_corpus
    from profiling.otsu import load_corpus

    script = fake_ncu(tmp_path, f'cp "{FIXTURES / "synthetic_saxpy_raw.csv"}" "$LOG"')
    settings = settings_for(monkeypatch, script)
    reports, failures = profile_baselines(["vector_add"], jobs=2, settings=settings)
    assert failures == [] and [(r.task, r.precision) for r in reports] == [("vector_add", "fp32"), ("vector_add", "bf16")]
    write_corpus(reports, tmp_path / "run.json")
    assert [r.params for r in load_corpus(tmp_path / "run.json")] == [r.params for r in reports]
    reports, failures = profile_baselines(["vector_add"], jobs=2, budget_s=0.0, settings=settings)
    assert reports == [] and len(failures) == 2 and all("budget" in f.error for f in failures)
