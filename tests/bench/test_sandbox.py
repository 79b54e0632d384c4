"""The OS sandbox (bubblewrap) around every compile and run of code we did not write.

Part 1 probes the sandbox with shell commands: what is visible, writable, reachable and inherited.
Part 2 is an adversarial corpus (tests/bench/candidates/attacks/): each attack is compiled and run by the
real harness in the real sandbox. Host-code attacks run in constructors, before main, so without a GPU
the real driver still runs them (its GPU check is switched off: FAKE GPU CHECK, see sandbox_support).
Part 3 repeats the corpus with a GPU (`pytest -m gpu`), where the kernels must also work inside.
"""

from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from bench_tasks import load_task
from bench_tasks.harness import Verdict, compile_candidate, evaluate
from bench_tasks.harness import sandbox as sb
from bench_tasks.harness import source as src
from settings import HarnessSettings

from .sandbox_support import (
    REPO,
    attack_lines,
    attack_source,
    bwrap_works,
    evaluate_with_gpu,
    evaluate_without_gpu,
    have_nvcc,
    libc_offset,
    only_workdir,
    processes_mentioning,
    scratch_root,
    settings_with,
)

SECRET = "sk-test-SECRET-" + uuid.uuid4().hex
DB_URL = f"postgresql+psycopg://cm:{uuid.uuid4().hex}@127.0.0.1:5432/prod"
requires_nvcc = pytest.mark.skipif(not have_nvcc(), reason="nvcc not installed")


@pytest.fixture
def root():
    with scratch_root() as path:
        yield path


@pytest.fixture
def settings(harness_settings, root) -> HarnessSettings:
    return settings_with(harness_settings, root)


@pytest.fixture
def box(settings) -> sb.Sandbox:
    ok, why = bwrap_works(settings)
    if not ok:
        pytest.skip(f"no working bubblewrap here ({why}); CI installs it (apt-get install bubblewrap)")
    return sb.sandbox_for(settings)


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """Stands for the service's data directory: a secrets file and a database file."""
    d = tmp_path / "data"
    d.mkdir()
    (d / "secret.env").write_text(f"CUDAMASTER_AGENT__API_KEY={SECRET}\n")
    (d / "service.db").write_text("SQLite format 3\0 " + SECRET)
    return d


def sh(box: sb.Sandbox, scratch: Path, script: str, **kwargs) -> tuple[int | None, str]:
    return box.run(["/bin/sh", "-c", script], scratch=scratch, timeout=60, **kwargs)


# -- Part 1: the sandbox itself ------------------------------------------------------------------------------------------


def test_without_bubblewrap_untrusted_code_is_refused_with_how_to_fix(harness_settings, root):
    settings = settings_with(harness_settings, root, sandbox_bwrap="/nonexistent/bwrap")
    with pytest.raises(sb.SandboxUnavailable) as err:
        sb.sandbox_for(settings)
    assert "apt-get install bubblewrap" in str(err.value) and "CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED=true" in str(err.value)
    assert sb.describe(settings).startswith("unavailable: bubblewrap not found")
    variant = load_task("vector_add").variant("fp32")
    with pytest.raises(sb.SandboxUnavailable):  # refused before nvcc ever sees the source
        compile_candidate(variant, "int x = 1;", settings)
    with pytest.raises(sb.SandboxUnavailable):
        evaluate("vector_add", "fp32", "int x = 1;", [{"N": 8}], settings=settings)


def test_running_unsandboxed_needs_the_explicit_opt_out(harness_settings, root):
    missing = settings_with(harness_settings, root, sandbox_bwrap="/nonexistent/bwrap", allow_unsandboxed=True)
    assert sb.sandbox_for(missing).kind == "none"
    assert "WITHOUT a sandbox" in sb.describe(missing)
    with pytest.raises(sb.SandboxUnavailable, match="CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED=true"):
        sb.sandbox_for(settings_with(harness_settings, root, sandbox="none"))
    assert sb.sandbox_for(settings_with(harness_settings, root, sandbox="none", allow_unsandboxed=True)).kind == "none"
    forced = settings_with(harness_settings, root, sandbox="bwrap", sandbox_bwrap="/nonexistent/bwrap", allow_unsandboxed=True)
    with pytest.raises(sb.SandboxUnavailable):  # "bwrap" means bubblewrap or nothing
        sb.sandbox_for(forced)


def test_the_environment_inside_holds_only_what_cuda_needs(box, root, monkeypatch):
    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", SECRET)
    monkeypatch.setenv("CUDAMASTER_SERVICE__DATABASE_URL", DB_URL)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with sb.scratch(box.settings, "cm-t-") as scratch:
        rc, out = sh(box, scratch, "env; cat /proc/self/environ /proc/1/environ | tr '\\0' '\\n'")
    assert rc == 0, out
    names = {line.split("=", 1)[0] for line in out.splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "CUDA_CACHE_PATH", "LD_LIBRARY_PATH", "PWD", "SHLVL", "_"}, names
    assert SECRET not in out and DB_URL not in out and "CUDAMASTER" not in out


def test_it_runs_unprivileged_without_new_privileges_in_its_own_namespaces(box, root):
    with sb.scratch(box.settings, "cm-t-") as scratch:
        rc, out = sh(
            box,
            scratch,
            "id -u; grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status; ls /proc | grep -c '^[0-9]'; "
            "hostname; cat /proc/self/oom_score_adj; unshare --user true 2>/dev/null && echo NESTED-USERNS; "
            "prlimit --noheadings --output RESOURCE,SOFT",
        )
    assert rc == 0, out
    lines = out.splitlines()
    assert lines[0] == str(box.settings.sandbox_uid) and lines[0] != "0"
    assert "NoNewPrivs:\t1" in out and "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out
    assert int(lines[4]) < 10, "the host's processes must not be visible"
    assert lines[5] == "sandbox"
    assert lines[6] == "1000"  # the OOM killer takes the sandbox before the service
    assert "NESTED-USERNS" not in out
    limits = {line.split()[0]: line.split()[1] for line in lines[7:] if len(line.split()) == 2}
    s = box.settings
    assert limits["NPROC"] == str(s.sandbox_max_processes) and limits["NOFILE"] == str(s.sandbox_max_open_files)
    assert limits["FSIZE"] == str(s.sandbox_max_file_bytes) and limits["CPU"] == str(s.sandbox_max_cpu_s) and limits["CORE"] == "0"


def test_only_the_evaluations_gpu_is_bound_and_named_by_uuid_with_a_fake_gpu_table(box, monkeypatch):
    """FAKE nvidia-smi table and device nodes: the mapping from CUDA_VISIBLE_DEVICES-style ids to /dev/nvidiaN."""
    table = (sb.GpuDevice("0", "GPU-aaaa-1111", 3), sb.GpuDevice("1", "GPU-bbbb-2222", 0))
    monkeypatch.setattr(sb, "gpu_devices", lambda: table)
    real_exists = os.path.exists
    monkeypatch.setattr(sb.os.path, "exists", lambda p: str(p).startswith("/dev/nvidia") or real_exists(p))
    nodes, visible = sb.gpu_binding("1")
    assert [n for n in nodes if n[-1].isdigit()] == ["/dev/nvidia0"] and visible == "GPU-bbbb-2222"
    assert "/dev/nvidiactl" in nodes and "/dev/nvidia-uvm" in nodes
    assert sb.gpu_binding("GPU-aaaa")[0][0] == "/dev/nvidia3" and sb.gpu_binding("GPU-aaaa")[1] == "GPU-aaaa-1111"
    assert sb.gpu_binding("-1") == ([], "")
    with pytest.raises(sb.SandboxUnavailable, match="cannot map GPU '7'"):
        sb.gpu_binding("7")
    box.settings.gpu = "0"
    argv, env = box.command(["/bin/true"], Path("/tmp/x"), gpu=True)
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--dev-bind"]
    assert [b for b in bound if b[-1].isdigit()] == ["/dev/nvidia3"] and env["CUDA_VISIBLE_DEVICES"] == "GPU-aaaa-1111"
    argv, env = box.command(["/bin/true"], Path("/tmp/x"), gpu=False)
    assert "--dev-bind" not in argv and "CUDA_VISIBLE_DEVICES" not in env  # compiles get no GPU at all


def test_no_network_neither_the_database_nor_the_service(box, root):
    with socket.create_server(("127.0.0.1", 0)) as service, sb.scratch(box.settings, "cm-t-") as scratch:
        port = service.getsockname()[1]
        rc, out = sh(
            box,
            scratch,
            f"cat /proc/net/dev; for p in 5432 {port}; do "
            f'bash -c "echo x > /dev/tcp/127.0.0.1/$p" && echo CONNECTED $p || echo REFUSED $p; done; '
            "bash -c 'echo x > /dev/tcp/1.1.1.1/53' && echo CONNECTED outside || echo REFUSED outside",
        )
        assert not select.select([service], [], [], 0.5)[0], "the service's port received a connection"
    assert rc == 0, out
    assert "CONNECTED" not in out and out.count("REFUSED") == 3
    devices = re.findall(r"^\s*([\w.-]+):\s+\d", out, re.M)  # /proc/net/dev: the namespace's interfaces
    assert devices == ["lo"], devices


def test_the_filesystem_view_hides_the_service_and_other_evaluations(box, root, data_dir, harness_settings):
    other = root / "cm-eval-other"
    other.mkdir()
    (other / "inputs.bin").write_text(SECRET)
    os.chmod(other, 0o755)
    hidden = [
        data_dir / "secret.env",
        data_dir,
        harness_settings.cache_dir,
        REPO / "pyproject.toml",
        Path.home(),
        other / "inputs.bin",
        Path("/etc/passwd"),
        Path("/etc/hostname"),
        Path("/root"),
        Path("/var/lib/postgresql"),
        Path("/run"),
        Path("/srv"),
        Path("/work"),
    ]
    with sb.scratch(box.settings, "cm-t-") as scratch:
        script = "; ".join(f"test -e '{p}' && echo VISIBLE {p}" for p in hidden)
        rc, out = sh(box, scratch, script + "; ls -a ..; nvcc --version | tail -1; test -x /usr/bin/g++ && echo GXX; true")
    assert rc == 0, out
    assert "VISIBLE" not in out, out
    assert SECRET not in out
    assert set(out.split("\n")[0:3]) >= {".", "..", scratch.name} and "cm-eval-other" not in out, "sibling scratch dirs visible"
    assert "Build cuda_" in out and "GXX" in out, "the toolkit and the host compiler must be there"


def test_only_the_scratch_directory_is_writable_and_inputs_are_read_only(box, root, tmp_path):
    marker = tmp_path / "marker"
    with sb.scratch(box.settings, "cm-t-") as scratch:
        inputs = scratch / "inputs"
        inputs.mkdir()
        (inputs / "a.bin").write_text("input")
        script = (
            f"echo ok > out.txt; echo x > inputs/a.bin || echo RO-INPUT; rm -f inputs/a.bin || echo RO-RM; "
            f"touch '{marker}' || echo NO-MARKER; touch /usr/x || echo RO-USR; touch /x || echo RO-ROOT; "
            f"touch ../x; touch /dev/x || echo RO-DEV; echo t > /tmp/t && echo TMP-OK; "
            f"echo s > /dev/shm/s && echo SHM-OK"
        )
        rc, out = sh(box, scratch, script, read_only=[inputs])
        assert (scratch / "out.txt").read_text() == "ok\n"
        assert (inputs / "a.bin").read_text() == "input"
        assert not (root / "x").exists()  # ../x went to the sandbox's private /tmp, not to the host
    assert rc == 0, out
    for word in ("RO-INPUT", "RO-RM", "NO-MARKER", "RO-USR", "RO-ROOT", "RO-DEV", "TMP-OK", "SHM-OK"):
        assert word in out, (word, out)
    assert not marker.exists()


def test_the_private_tmp_is_bounded(box, root):
    settings = box.settings.model_copy(update={"sandbox_tmp_bytes": 8 << 20})
    small = sb.sandbox_for(settings)
    with sb.scratch(settings, "cm-t-") as scratch:
        _rc, out = sh(small, scratch, "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; ls -l /tmp/fill")
    assert "No space left on device" in out
    size = int(next(line for line in out.splitlines() if line.endswith("/tmp/fill")).split()[4])
    assert size <= 8 << 20


def test_filling_the_scratch_directory_stops_the_step_with_a_clear_message(box, root):
    with sb.scratch(box.settings, "cm-t-") as scratch:
        rc, out = box.run(
            ["/bin/sh", "-c", "i=0; while true; do dd if=/dev/zero of=f$i bs=1M count=16 2>/dev/null; i=$((i+1)); done"],
            scratch=scratch,
            timeout=120,
            quota_bytes=64 << 20,
        )
        used = sum(f.stat().st_blocks * 512 for f in scratch.iterdir())
    assert rc is not None and rc < 0
    assert out.startswith("CMERR sandbox the process wrote more than 64 MiB to its scratch directory")
    assert used < (64 << 20) + (1 << 30)


def test_a_timeout_kills_everything_in_the_sandbox(box, root):
    with sb.scratch(box.settings, "cm-t-") as scratch:
        child = box.start(["/bin/sh", "-c", "sleep 300 & (setsid sleep 301 &) ; sleep 302"], scratch=scratch)
        rc, _ = child.wait(timeout=1.0)
        assert rc is None
        assert child.inner_pid is not None
        assert not processes_mentioning("sleep 30"), "a process outlived its sandbox"


def test_links_and_special_files_left_in_the_scratch_directory_are_removed(box, root, data_dir):
    with sb.scratch(box.settings, "cm-t-") as scratch:
        (scratch / "out").mkdir()
        rc, out = sh(box, scratch, f"ln -s '{data_dir}/secret.env' results.txt; rm -rf out; ln -s / out; mkfifo pipe; echo done")
        assert rc == 0, out
        assert sorted(p.name for p in scratch.iterdir()) == []  # the harness then finds no results, not a link


def test_a_crash_inside_reads_as_the_signal_that_killed_it(box, root):
    with sb.scratch(box.settings, "cm-t-") as scratch:
        (scratch / "crash.c").write_text("int main(void) { *(volatile int*)0 = 1; return 0; }\n")
        rc, out = sh(box, scratch, "gcc -o crash crash.c && ./crash")
    assert rc == 128 + 11 or rc == -11, (rc, out)  # the shell reports the crash; a direct crash is -11
    with sb.scratch(box.settings, "cm-t-") as scratch:
        (scratch / "crash.c").write_text("int main(void) { *(volatile int*)0 = 1; return 0; }\n")
        assert sh(box, scratch, "gcc -o crash crash.c")[0] == 0
        rc, _ = box.run([str(scratch / "crash")], scratch=scratch, timeout=60)
    assert rc == -11


# -- Part 2: the attack corpus, with the real driver and no GPU ------------------------------------------------------------

attack = [pytest.mark.slow, requires_nvcc]


def _compiles(source: str, settings: HarnessSettings):
    return compile_candidate(load_task("vector_add").variant("fp32"), src.prepare(source, settings.max_source_bytes), settings)


@pytest.mark.parametrize(
    "name",
    [
        "hidden_syscall.cu",
        "puts_offset.cu",
        "env_dump.cu",
        "connect.cu",
        "write_outside.cu",
        "fork_bomb.cu",
        "disk_fill.cu",
        "signal_parent.cu",
        "other_scratch.cu",
    ],
)
@pytest.mark.slow
@requires_nvcc
def test_host_code_attacks_pass_the_static_checks_so_the_sandbox_must_stop_them(name, box, settings, tmp_path):
    """The static checks are the first line only: none of these is caught by them."""
    source = attack_source(
        name,
        MARKER=tmp_path / "m",
        HOST_TMP_MARKER="/tmp/m",
        SYSTEM_MINUS_PUTS=0,
        SECRET="/x",
        PORT=1,
        REPO=REPO,
        CACHE="/c",
        LIMIT_MIB=1,
        PARENT_PID=1,
        OTHER="/o",
    )
    outcome = _compiles(source, settings)
    assert outcome.ok, (outcome.verdict, outcome.message)


@pytest.mark.slow
@requires_nvcc
def test_hidden_syscall_from_a_constructor_creates_nothing_on_the_host(box, settings, tmp_path, monkeypatch):
    marker, host_tmp = tmp_path / "pwned", Path(f"/tmp/cudamaster-pwned-{uuid.uuid4().hex}")
    result, _workdir = evaluate_without_gpu(
        attack_source("hidden_syscall.cu", MARKER=marker, HOST_TMP_MARKER=host_tmp), settings, monkeypatch
    )
    report = attack_lines(result.log)
    assert report["create-marker"] == -2  # ENOENT: the caller's directory does not exist in the sandbox
    assert report["create-host-tmp"] >= 0  # the sandbox's own /tmp: private, gone with it
    assert not marker.exists() and not host_tmp.exists()
    assert result.verdict == Verdict.runtime_error  # no GPU here: CUDA initialisation fails after the attack


@pytest.mark.slow
@requires_nvcc
def test_libc_reached_through_puts_plus_an_offset_runs_a_shell_that_can_do_nothing(box, settings, tmp_path, data_dir, monkeypatch):
    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", SECRET)
    marker = tmp_path / "pwned"
    source = attack_source("puts_offset.cu", SYSTEM_MINUS_PUTS=libc_offset("puts", "system"), MARKER=marker, SECRET=data_dir / "secret.env")
    result, _ = evaluate_without_gpu(source, settings, monkeypatch)
    assert f"ATTACK shell as {settings.sandbox_uid}" in result.log or "ATTACK shell as 65534" in result.log, result.log[-2000:]
    assert "ATTACK shell done" in result.log  # the shell ran, inside the sandbox
    assert not marker.exists()
    assert SECRET not in result.model_dump_json()
    assert result.verdict == Verdict.runtime_error


def _secret_paths(data_dir: Path) -> dict[str, Path]:
    return {"data dir": data_dir / "secret.env", "database": data_dir / "service.db", "repository": REPO / "pyproject.toml"}


@pytest.mark.slow
@requires_nvcc
@pytest.mark.parametrize("which", ["data dir", "database", "repository"])
@pytest.mark.parametrize("attack_file, missing", [("include_file.cu", "No such file or directory"), ("incbin_file.cu", "file not found")])
def test_reading_a_server_file_at_compile_time_fails_with_no_such_file(which, attack_file, missing, box, settings, data_dir):
    path = _secret_paths(data_dir)[which]
    outcome = _compiles(attack_source(attack_file, PATH=path), settings)
    assert outcome.verdict == Verdict.compile_error, outcome.message
    assert missing in outcome.log and str(path) in outcome.log
    text = path.read_text()
    assert SECRET not in outcome.log + outcome.message and (which != "repository" or 'name = "cudamaster"' not in outcome.log)
    assert text.strip() and text.splitlines()[0] not in outcome.log


@pytest.mark.slow
@requires_nvcc
def test_without_the_sandbox_the_same_include_does_leak(harness_settings, root, data_dir):
    """The contrast that shows the test above could fail: the opt-out runs nvcc on the host."""
    unsandboxed = settings_with(harness_settings, root, sandbox="none", allow_unsandboxed=True)
    outcome = _compiles(attack_source("include_file.cu", PATH=data_dir / "secret.env"), unsandboxed)
    assert not outcome.ok and SECRET in outcome.log


@pytest.mark.slow
@requires_nvcc
def test_the_drivers_environment_holds_no_secret(box, settings, monkeypatch):
    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", SECRET)
    monkeypatch.setenv("CUDAMASTER_SERVICE__DATABASE_URL", DB_URL)
    result, workdir = evaluate_without_gpu(attack_source("env_dump.cu"), settings, monkeypatch)
    dump = (workdir / "env-dump.txt").read_text()
    assert "PATH=" in dump and "ENV PATH=" in result.log  # the attack ran and reported
    for text in (dump, result.model_dump_json()):
        assert SECRET not in text and DB_URL not in text and "CUDAMASTER_" not in text


@pytest.mark.slow
@requires_nvcc
def test_connections_to_the_database_and_the_service_are_refused(box, settings, monkeypatch):
    with socket.create_server(("127.0.0.1", 0)) as service:
        port = service.getsockname()[1]
        result, _ = evaluate_without_gpu(attack_source("connect.cu", PORT=port), settings, monkeypatch)
        assert not select.select([service], [], [], 0.5)[0], "the service's port received a connection"
    report = attack_lines(result.log)
    assert report["connect-postgres"] in (-111, -101) and report["connect-service"] in (-111, -101), report  # refused/unreachable


@pytest.mark.slow
@requires_nvcc
def test_writes_outside_the_scratch_directory_create_nothing(box, settings, tmp_path, root, monkeypatch):
    marker = tmp_path / "pwned"
    source = attack_source("write_outside.cu", MARKER=marker, REPO=REPO, CACHE=settings.cache_dir)
    result, _workdir = evaluate_without_gpu(source, settings, monkeypatch)
    report = attack_lines(result.log)
    assert len(report) == 6 and all(rc < 0 for what, rc in report.items() if what != "write-parent"), report
    # ../ is the sandbox's own /tmp (private, size-limited) when scratch directories live under /tmp
    assert not marker.exists() and not (REPO / "cm-pwned.txt").exists() and not (settings.cache_dir / "cm-pwned.txt").exists()
    assert not (root / "cm-pwned.txt").exists() and not Path("/usr/cm-pwned.txt").exists() and not Path("/cm-pwned.txt").exists()


@pytest.mark.slow
@requires_nvcc
def test_a_fork_bomb_is_contained_and_times_out(box, settings, monkeypatch):
    settings = settings.model_copy(update={"run_timeout_s": 5.0, "sandbox_max_processes": 64})
    result, workdir = evaluate_without_gpu(attack_source("fork_bomb.cu"), settings, monkeypatch)
    assert result.verdict == Verdict.timeout, result.message
    assert "did not finish within 5 s" in result.message
    assert not processes_mentioning(str(workdir)), "bomb processes outlived the sandbox"
    assert subprocess.run(["true"]).returncode == 0  # the machine still forks


@pytest.mark.slow
@requires_nvcc
def test_filling_the_disk_is_bounded_with_a_clear_verdict(box, settings, monkeypatch):
    result, workdir = evaluate_without_gpu(attack_source("disk_fill.cu", LIMIT_MIB=4096), settings, monkeypatch)
    assert result.verdict == Verdict.runtime_error
    assert "to its scratch directory and was stopped (sandbox disk limit)" in result.message, result.message
    sizes = [p.stat().st_size for p in workdir.glob("fill-*.bin")]
    assert sizes and max(sizes) <= settings.sandbox_max_file_bytes  # RLIMIT_FSIZE per file
    assert sum(sizes) < settings.sandbox_scratch_bytes + (512 << 20)  # the watchdog's quota, plus what one poll lets through


@pytest.mark.slow
@requires_nvcc
def test_signalling_the_harness_reaches_nothing(box, settings, monkeypatch):
    result, _ = evaluate_without_gpu(attack_source("signal_parent.cu", PARENT_PID=os.getpid()), settings, monkeypatch)
    report = attack_lines(result.log)
    assert report["kill-host-parent"] == -3, report  # ESRCH: the harness is not in the sandbox's PID namespace
    assert report["ppid"] == 0  # the driver is the namespace's first process: its parent is outside
    assert report["kill-everyone"] == -3  # nobody else to kill
    assert result.verdict == Verdict.runtime_error  # and we are still here to read it


@pytest.mark.slow
@requires_nvcc
def test_another_evaluations_scratch_directory_is_not_there(box, settings, root, monkeypatch):
    other = root / "cm-other-evaluation"
    other.mkdir(mode=0o755)
    (other / "inputs.bin").write_text(SECRET)
    os.chmod(other / "inputs.bin", 0o644)
    result, workdir = evaluate_without_gpu(attack_source("other_scratch.cu", OTHER=other), settings, monkeypatch)
    report = attack_lines(result.log)
    assert report["open-other"] == -2 and report["list-parent"] > 0, report
    siblings = {line.split(" ", 1)[1] for line in result.log.splitlines() if line.startswith("SIBLING ")}
    # Its own scratch directory, the read-only directory its datasets are drawn into and the data cache's
    # directory (holding only its own cached datasets); never another evaluation's.
    assert workdir.name in siblings and other.name not in siblings, siblings
    allowed = {workdir.name, *(p.name for p in root.glob("cm-in-*")), *(p.name for p in root.glob("cudamaster-data-*"))}
    assert {s for s in siblings if s not in (".", "..")} <= allowed, siblings
    assert SECRET not in result.model_dump_json()


@pytest.mark.slow
@requires_nvcc
def test_concurrent_evaluations_do_not_see_each_other_with_fake_gpu_check(harness_settings, monkeypatch):
    from .sandbox_support import EVALUATE_MODULE as ev

    monkeypatch.setattr(ev, "require_gpu", lambda settings: None)  # FAKE GPU CHECK (see sandbox_support)
    with scratch_root() as shared:
        settings = settings_with(harness_settings, shared)
        if not bwrap_works(settings)[0]:
            pytest.skip("no working bubblewrap here")
        source = attack_source("other_scratch.cu", OTHER=shared / "cm-eval-nonexistent")
        results = []

        def one() -> None:
            results.append(ev.evaluate("vector_add", "fp32", source, [{"N": 1024}], settings=settings, timing=False))

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(results) == 2
    for result in results:
        siblings = [line.split(" ", 1)[1] for line in result.log.splitlines() if line.startswith("SIBLING ")]
        # itself, its own inputs directory and the data cache's directory: never the other evaluation's
        evals = [s for s in siblings if s.startswith("cm-eval-")]
        inputs = [s for s in siblings if s.startswith("cm-in-")]
        assert len(evals) == 1 and len(inputs) <= 1, siblings
        assert set(siblings) <= {".", "..", *evals, *inputs, *(s for s in siblings if s.startswith("cudamaster-data-"))}, siblings


# -- Part 3: the same with a GPU -------------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_honest_kernels_reach_the_gpu_inside_the_sandbox(box, settings):
    from .sandbox_support import ATTACKS

    result = evaluate("vector_add", "fp32", (ATTACKS.parent / "fast.cu").read_text(), [{"N": 1 << 20}], settings=settings)
    assert result.verdict == Verdict.ok, result.message
    assert result.gpu is not None and result.gpu.name and result.score and result.score > 1


@pytest.mark.gpu
def test_gpu_attacks_do_no_harm(box, settings, tmp_path, data_dir, monkeypatch, root):
    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", SECRET)
    monkeypatch.setenv("CUDAMASTER_SERVICE__DATABASE_URL", DB_URL)
    marker = tmp_path / "pwned"
    host_tmp = Path(f"/tmp/cudamaster-pwned-{uuid.uuid4().hex}")
    with socket.create_server(("127.0.0.1", 0)) as service:
        port = service.getsockname()[1]
        cases = {
            "hidden_syscall.cu": dict(MARKER=marker, HOST_TMP_MARKER=host_tmp),
            "puts_offset.cu": dict(SYSTEM_MINUS_PUTS=libc_offset("puts", "system"), MARKER=marker, SECRET=data_dir / "secret.env"),
            "env_dump.cu": {},
            "connect.cu": dict(PORT=port),
            "write_outside.cu": dict(MARKER=marker, REPO=REPO, CACHE=settings.cache_dir),
            "signal_parent.cu": dict(PARENT_PID=os.getpid()),
            "other_scratch.cu": dict(OTHER=data_dir),
        }
        for name, subs in cases.items():
            result, workdir = evaluate_with_gpu(attack_source(name, **subs), settings)
            # The attack fails harmlessly; the kernel itself is correct, so the verdict is ok (or the
            # driver's own failure when an attack broke it), and always one of the documented ones.
            assert result.verdict in (Verdict.ok, Verdict.runtime_error), (name, result.verdict, result.message)
            assert SECRET not in result.model_dump_json() and DB_URL not in result.model_dump_json(), name
            assert not marker.exists() and not host_tmp.exists(), name
            sb.remove_scratch(workdir)
        assert not select.select([service], [], [], 0.5)[0]
    bomb = settings.model_copy(update={"run_timeout_s": 10.0, "sandbox_max_processes": 64})
    result, workdir = evaluate_with_gpu(attack_source("fork_bomb.cu"), bomb)
    assert result.verdict == Verdict.timeout and not processes_mentioning(str(workdir))
    sb.remove_scratch(workdir)
    result, workdir = evaluate_with_gpu(attack_source("disk_fill.cu", LIMIT_MIB=4096), settings)
    assert result.verdict == Verdict.runtime_error and "sandbox disk limit" in result.message
    assert only_workdir(settings) == workdir
    after = evaluate(
        "vector_add", "fp32", (Path(__file__).parent / "candidates" / "fast.cu").read_text(), [{"N": 4096}], settings=settings, timing=False
    )
    assert after.verdict == Verdict.ok, "the GPU must be usable after the attacks"


@pytest.mark.skipif(os.geteuid() != 0, reason="the root fallback exists only for a service running as root")
def test_the_root_fallback_holds_the_same_line(box, root, data_dir, monkeypatch):
    """Where unprivileged user namespaces are off, a root service sets the sandbox up itself and setpriv drops
    to the sandbox uid inside (mode "root"); the same probes hold."""
    monkeypatch.setenv("CUDAMASTER_AGENT__API_KEY", SECRET)
    fallback = sb._build_bwrap(box.settings, modes=("root",))
    assert fallback.mode == "root" and "set up by root" in fallback.describe()
    with socket.create_server(("127.0.0.1", 0)) as service, sb.scratch(box.settings, "cm-t-") as scratch:
        port = service.getsockname()[1]
        rc, out = sh(
            fallback,
            scratch,
            f"id -u; grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status; env; "
            f"test -e '{data_dir}' && echo VISIBLE; touch /usr/x 2>/dev/null && echo WROTE; "
            f"bash -c 'echo > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo CONNECTED; "
            # the sleeps then end without another fork (`kill $(jobs -p)` needed one, which the full process limit
            # refused now and then on a loaded machine: sh then exited 2): the shell ignores the TERM it sends its group
            "for i in $(seq 600); do sleep 30 & done 2>&1 | grep -c -m1 'fork' ; trap '' TERM; kill 0; true",
        )
        assert not select.select([service], [], [], 0.5)[0]
        child = fallback.start(["/bin/sh", "-c", "sleep 303 & sleep 304"], scratch=scratch)
        assert child.wait(timeout=1.0)[0] is None and not processes_mentioning("sleep 30")
    assert rc == 0, out
    lines = out.splitlines()
    assert lines[0] == str(box.settings.sandbox_uid)
    assert "NoNewPrivs:\t1" in out and "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out
    assert SECRET not in out and "VISIBLE" not in out and "WROTE" not in out and "CONNECTED" not in out
    assert lines[-1] == "1", out[-500:]  # the 513th process could not be forked (RLIMIT_NPROC for the sandbox uid)


def test_removing_a_scratch_directory_never_changes_its_parents_permissions(tmp_path, monkeypatch):
    """A removal error on the scratch directory itself (removed meanwhile, or a file created in it) made the error
    handler chmod its parent to 0700: on a CI run that parent was the system's /tmp, and every later sandboxed
    step failed. The handler now stays inside the scratch tree."""
    import shutil

    parent = tmp_path / "tmp"
    parent.mkdir(mode=0o777)
    parent.chmod(0o1777)
    path = parent / "cm-eval-x"
    (path / "out").mkdir(parents=True)
    (path / "out" / "f.bin").write_bytes(b"x")
    (path / "out").chmod(0o500)  # a sandboxed step may leave a directory without write permission
    real_rmtree = shutil.rmtree

    def failing_rmtree(p, onerror=None, **kwargs):
        real_rmtree(p, onerror=onerror, **kwargs)  # handles the inner directory without permissions
        onerror(os.rmdir, str(p), None)  # and then, say, the top directory was already gone
        onerror(os.rmdir, str(parent), None)  # a path outside the tree (never passed by rmtree): left alone

    monkeypatch.setattr(shutil, "rmtree", failing_rmtree)
    sb.remove_scratch(path)
    assert not path.exists()
    assert parent.stat().st_mode & 0o7777 == 0o1777


def test_a_steps_output_names_no_host_path(tmp_path):
    """What a step prints reaches clients (a 422's compile log, an attempt's log): the scratch directory's host path
    and nvcc's intermediates read as plain file names (issue 30)."""
    scratch = tmp_path / "cm-build-x1y2z3"
    scratch.mkdir()
    log = (
        f'{scratch}/candidate.cu(12): error: expected a ";"\n'
        f'1 error detected in the compilation of "{scratch}/candidate.cu".\n'
        f"nvcc -I{scratch} -c {scratch}/candidate.cu -o {scratch}/candidate.o\n"
        "ptxas /tmp/tmpxft_00001a2b_00000000-6_candidate.ptx, line 7; error   : Unknown symbol 'x'\n"
        f"cwd {scratch}\n"
    )
    out = sb.neutral_paths(log, scratch)
    assert out == (
        'candidate.cu(12): error: expected a ";"\n'
        '1 error detected in the compilation of "candidate.cu".\n'
        "nvcc -I. -c candidate.cu -o candidate.o\n"
        "ptxas candidate.ptx, line 7; error   : Unknown symbol 'x'\n"
        "cwd .\n"
    )
    assert str(tmp_path) not in out and "/tmp/" not in out and "cm-build-" not in out
    assert sb.neutral_paths("/usr/local/cuda/include/cuda.h(3): warning", scratch) == "/usr/local/cuda/include/cuda.h(3): warning"


def test_a_sandboxed_steps_output_comes_back_without_the_scratch_path(box, root):
    with sb.scratch(box.settings, "cm-build-") as scratch:
        rc, out = sh(box, scratch, "echo $PWD/candidate.cu; pwd; echo /tmp/tmpxft_0000002a_00000000-6_candidate.ptx")
    assert rc == 0, out
    assert out.splitlines() == ["candidate.cu", ".", "candidate.ptx"]
