"""The OS sandbox for code we did not write: no network, no secrets, one writable scratch directory.

Every nvcc run on untrusted source, every link of its objects, every binutils pass over them, every
driver run and every ncu run goes through `Sandbox.start` / `Sandbox.run`, which run the command as

    [when the service is root: Popen as uid/gid 65534 (sandbox_uid), so that limits count that uid]
    bwrap --unshare-all --unshare-user --disable-userns --die-with-parent --new-session --cap-drop ALL
          --clearenv --setenv PATH/HOME/TMPDIR/LD_LIBRARY_PATH/CUDA_VISIBLE_DEVICES ...
          --ro-bind /usr /usr (and /bin, /lib* as on the host), /etc/ld.so.cache, /etc/alternatives,
          the CUDA toolkit and the GPU driver's libraries wherever they live (read-only)
          --proc /proc --dev /dev, --dev-bind only the evaluation's /dev/nvidiaN, nvidiactl, nvidia-uvm*
          --size T --tmpfs /tmp, --size T --tmpfs /dev/shm  (private, size-limited)
          --bind SCRATCH SCRATCH  (the one writable path), --ro-bind over its inputs, --chdir SCRATCH
          --remount-ro / --remount-ro /dev
          -- prlimit --nproc --nofile --fsize --cpu --core=0 [--as, steps without the GPU] -- [choom -n 1000 --] ARGV

Memory: a step without the GPU (compile, link, binutils) has an address-space limit per process
(`sandbox_max_memory_bytes`, RLIMIT_AS, inherited by cicc, ptxas and the host compiler; applied even without
bwrap); a GPU step (the driver, ncu) a resident-memory limit over all its processes, which the watchdog polls
(`sandbox_max_run_memory_bytes`): RLIMIT_AS breaks CUDA contexts, which reserve huge virtual ranges.

What is not bound does not exist inside: the service's data directory, database files, home,
configuration, keys, the compile cache and other evaluations' scratch directories. Files a step needs
from the cache are copied into its scratch directory first (`stage`). A watchdog stops the sandbox
when its scratch directory grows past a quota (disk fill); after it exits, symlinks and special files
it left in the scratch directory are removed before the harness reads anything there.

Where no sandbox can be set up the harness refuses to compile or run untrusted code
(`SandboxUnavailable`), unless the operator opted out (`allow_unsandboxed`) for single-user local use.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from settings import HarnessSettings

from .child import Child

INSTALL_HINT = (
    "Install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), or point "
    "CUDAMASTER_HARNESS__SANDBOX_BWRAP at a bwrap binary (without a package manager: `apt-get download bubblewrap` elsewhere, "
    "then `dpkg -x bubblewrap_*.deb DIR` and use DIR/usr/bin/bwrap). For single-user local use only, untrusted kernels "
    "may run without a sandbox: CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED=true."
)
USERNS_HINT = (
    "bubblewrap needs unprivileged user namespaces: `sysctl kernel.unprivileged_userns_clone=1` (Debian), "
    "`sysctl kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04), user.max_user_namespaces > 0; in Docker, "
    "run with `--security-opt seccomp=unconfined --security-opt apparmor=unconfined`."
)
POLL_S = 0.05  # the scratch quota watchdog's period
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/alternatives")
_NCU_HOMES = ("/opt/nvidia/nsight-compute",)
_GPU_SHARED_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
_SYS_DIRS = ("/sys/bus", "/sys/class", "/sys/dev", "/sys/devices")  # GPU steps only: the driver reads PCI topology


class SandboxUnavailable(RuntimeError):
    """No sandbox can be set up and running without one was not allowed; the message says how to fix it."""


# -- what the host has --------------------------------------------------------------------------------------------------


@cache
def _bwrap_version(bwrap: str) -> tuple[int, ...]:
    out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(g or 0) for g in m.groups()) if m else (0, 0, 0)


@cache
def toolkit_root(nvcc: str) -> Path | None:
    """The CUDA toolkit's root as nvcc itself reports it (nvcc may be a wrapper script)."""
    exe = shutil.which(nvcc)
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--dryrun", "-E", "-x", "cu", os.devnull], capture_output=True, text=True, timeout=60)
        m = re.search(r"^#\$ TOP=(.+)$", out.stdout + out.stderr, re.M)
    except (OSError, subprocess.TimeoutExpired):
        m = None
    return Path(os.path.realpath(m.group(1).strip())) if m else Path(os.path.realpath(exe)).parent.parent


@cache
def driver_library_dirs() -> tuple[Path, ...]:
    """Directories holding the GPU driver's user-space libraries (libcuda, libnvidia-ml)."""
    found: list[Path] = []
    candidates = [
        Path(d) / name for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d for name in ("libcuda.so.1", "libnvidia-ml.so.1")
    ]
    ldconfig = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)
    if ldconfig:
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
            candidates += [Path(m) for m in re.findall(r"(?:libcuda|libnvidia-ml)\.so\.1 \(.*\) => (\S+)", out)]
        except (OSError, subprocess.TimeoutExpired):
            pass
    for lib in candidates:
        if lib.exists():
            for d in (lib.parent, Path(os.path.realpath(lib)).parent):
                if d not in found:
                    found.append(d)
    return tuple(found)


@dataclass(frozen=True)
class GpuDevice:
    index: str
    uuid: str
    minor: int


@cache
def gpu_devices() -> tuple[GpuDevice, ...]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ()
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,uuid,minor_number", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    devices = []
    for line in out.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[2].isdigit():
            devices.append(GpuDevice(parts[0], parts[1], int(parts[2])))
    return tuple(devices)


def gpu_binding(spec: str | None) -> tuple[list[str], str]:
    """(device nodes to bind, CUDA_VISIBLE_DEVICES inside) for a CUDA_VISIBLE_DEVICES-style GPU choice.

    `spec` is an nvidia-smi index or a GPU UUID (comma-separated for several); None: the environment's
    CUDA_VISIBLE_DEVICES, else GPU 0. Only those GPUs' nodes are bound; inside, they are named by UUID.
    """
    spec = spec if spec is not None else os.environ.get("CUDA_VISIBLE_DEVICES") or "0"
    entries = [e.strip() for e in spec.split(",") if e.strip()]
    if not entries or entries[0].startswith("-"):
        return [], ""
    table = gpu_devices()
    nodes, names = [], []
    for entry in entries:
        dev = next((d for d in table if entry in (d.index, d.uuid) or (entry.startswith("GPU-") and d.uuid.startswith(entry))), None)
        if dev is not None:
            nodes.append(f"/dev/nvidia{dev.minor}")
            names.append(dev.uuid)
        elif not table and entry.isdigit():  # no nvidia-smi: the index is the device minor
            nodes.append(f"/dev/nvidia{entry}")
            names.append(str(len(names)))
        else:
            raise SandboxUnavailable(
                f"cannot map GPU {entry!r} to a device node (nvidia-smi lists "
                f"{', '.join(d.index + ' ' + d.uuid for d in table) or 'no GPU'}); set CUDAMASTER_HARNESS__GPU "
                "to an nvidia-smi index or a GPU UUID"
            )
    nodes = [n for n in nodes if os.path.exists(n)]
    shared = [n for n in _GPU_SHARED_NODES if os.path.exists(n)]
    if os.path.isdir("/dev/nvidia-caps"):
        shared.append("/dev/nvidia-caps")
    return (nodes + shared) if nodes else [], ",".join(names)


# -- the scratch directory ------------------------------------------------------------------------------------------------


def make_scratch(settings: HarnessSettings, prefix: str) -> Path:
    """A fresh scratch directory for one step (under `scratch_root`, default the system temp dir)."""
    root = settings.scratch_root
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root))


def remove_scratch(path: Path) -> None:
    top = os.path.abspath(path)

    def unblock(func, p, _exc) -> None:  # a sandboxed step may leave directories without permissions
        # Only inside the scratch tree: an error on the top directory itself (removed by someone else, or a file
        # created in it meanwhile) once made this chmod its parent, the system's /tmp, to 0700.
        with contextlib.suppress(OSError):
            p = os.path.abspath(p)
            if os.path.commonpath([top, p]) != top:
                return
            if p != top:
                os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)

    if os.path.isdir(path):
        shutil.rmtree(path, onerror=unblock)


@contextlib.contextmanager
def scratch(settings: HarnessSettings, prefix: str) -> Iterator[Path]:
    path = make_scratch(settings, prefix)
    try:
        yield path
    finally:
        remove_scratch(path)


# nvcc's intermediate files (`/tmp/tmpxft_00001a2b_00000000-6_candidate.ptx`), named in ptxas and host compiler errors.
_NVCC_TEMP = re.compile(r"(?:/[\w.+-]+)*/tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_")


def neutral_paths(text: str, scratch: Path) -> str:
    """`text` (a step's output) without the host's paths of its scratch directory: `/tmp/cm-build-x1y2/candidate.cu(12):
    error` reads `candidate.cu(12): error`, nvcc's intermediates their plain names. Every output of a sandboxed step
    goes through here before anything reads it (a compile log shown to a client, a verdict's message)."""
    for root in dict.fromkeys((str(scratch), os.path.realpath(scratch))):
        text = text.replace(root + "/", "").replace(root, ".")
    return _NVCC_TEMP.sub("", text)


def stage(src: Path, directory: Path, name: str | None = None) -> Path:
    """Copy a file the step needs (an object, a driver) into its scratch directory; returns the copy."""
    dst = directory / (name or src.name)
    shutil.copy2(src, dst)
    return dst


def _walk(root: Path, skip: set[Path], limit: int) -> tuple[int, int]:
    """(bytes allocated, entries) under root without following links; stops counting after `limit` entries."""
    total = count = 0
    stack = [str(root)]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for entry in it:
                count += 1
                if count > limit:
                    return total, count
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode) and Path(entry.path) not in skip:
                    stack.append(entry.path)
    return total, count


def _hand_over(root: Path, skip: set[Path], uid: int) -> None:
    """Give the scratch directory (not its read-only inputs) to the sandbox's uid; never follows links."""
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) not in skip]
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            if p not in skip:
                os.chown(p, uid, uid, follow_symlinks=False)


def sanitize(root: Path) -> list[str]:
    """After a sandboxed step: remove the symlinks and special files it left, so that the harness never
    follows a link out of the scratch directory nor blocks on a FIFO. Returns what was removed."""
    removed = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode) or not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                with contextlib.suppress(OSError):
                    os.unlink(p)
                    removed.append(os.path.relpath(p, root))
            elif stat.S_ISDIR(st.st_mode) and st.st_mode & 0o700 != 0o700 and os.geteuid() != 0:
                with contextlib.suppress(OSError):
                    os.chmod(p, st.st_mode | 0o700)
        dirnames[:] = [d for d in dirnames if os.path.isdir(os.path.join(dirpath, d)) and not os.path.islink(os.path.join(dirpath, d))]
    return removed


_PAGE = os.sysconf("SC_PAGE_SIZE")
# What a process that hit RLIMIT_AS says (cicc/EDG, GCC, ld, C++ and Python runtimes).
_OUT_OF_MEMORY = re.compile(
    r"out of memory|cannot allocate memory|virtual memory exhausted|memory exhausted|std::bad_alloc|MemoryError", re.I
)


def tree_rss(root: int) -> int:
    """Resident bytes of process `root` and all its descendants (0 once it is gone); reads /proc/*/stat."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                data = f.read()
            fields = data[data.rindex(b")") + 2 :].split()
            pid, ppid, pages = int(entry.name), int(fields[1]), int(fields[21])
        except (OSError, ValueError, IndexError):
            continue
        rss[pid] = pages * _PAGE
        children.setdefault(ppid, []).append(pid)
    total, stack, seen = 0, [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total


def gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB"


# -- the child ------------------------------------------------------------------------------------------------------------


class SandboxedChild(Child):
    """A Child in the sandbox: a scratch quota watchdog, exit statuses as if unwrapped, violations named.

    `wait()` returns bwrap's 128+N as -N (killed by signal N) and prefixes the output with one line
    `CMERR sandbox <what was stopped>` when the sandbox stopped the step (disk quota, file size, CPU or memory limit).
    """

    def __init__(
        self,
        argv: list[str],
        *,
        env: dict[str, str],
        scratch: Path,
        skip: set[Path],
        quota_bytes: int,
        max_files: int,
        limits: dict[str, int],
        bwrap: bool,
        info_r: int | None = None,
        rss_bytes: int = 0,
        what: str = "the process",
        **popen: Any,
    ):
        """`info_r`: the read end of bwrap's --info-fd pipe (its first process's PID); `rss_bytes`: the resident memory
        the step's processes may use together (0: not watched); `what`: who it is, in a verdict ("the compiler");
        `popen` goes to Child."""
        self.scratch, self.skip, self.quota_bytes, self.max_files, self.limits = scratch, skip, quota_bytes, max_files, limits
        self.bwrap, self.violation, self.inner_pid = bwrap, None, None
        self.rss_bytes, self.what, self.peak_rss = rss_bytes, what, 0
        self.base_bytes, self.base_files = _walk(scratch, skip, 1 << 62)
        self._info_r = info_r
        self._done = threading.Event()
        super().__init__(argv, env=env, cwd=scratch, **popen)
        self._watch = threading.Thread(target=self._watchdog, name="sandbox-watchdog", daemon=True)
        self._watch.start()

    def _read_info(self) -> None:
        if self._info_r is None:
            return
        with os.fdopen(self._info_r, "rb") as f:
            data = f.read(65536)
        self._info_r = None
        with contextlib.suppress(ValueError, json.JSONDecodeError):
            self.inner_pid = int(json.loads(data.decode() or "{}").get("child-pid"))  # type: ignore[assignment]

    def _watchdog(self) -> None:
        self._read_info()  # bwrap writes it once its namespaces exist (EOF if it failed)
        while self.proc.poll() is None:
            used, files = _walk(self.scratch, self.skip, self.base_files + self.max_files)
            if used - self.base_bytes > self.quota_bytes:
                self.violation = (
                    f"the process wrote more than {self.quota_bytes / 2**20:.0f} MiB to its scratch directory "  # type: ignore[assignment]
                    "and was stopped (sandbox disk limit)"
                )
            elif files - self.base_files > self.max_files:
                self.violation = f"the process created more than {self.max_files} files and was stopped (sandbox file count limit)"  # type: ignore[assignment]
            elif self.rss_bytes and self._rss() > self.rss_bytes:
                self.violation = (
                    f"{self.what} used more than {gib(self.rss_bytes)} of memory and was stopped "  # type: ignore[assignment]
                    "(sandbox memory limit, CUDAMASTER_HARNESS__SANDBOX_MAX_RUN_MEMORY_BYTES)"
                )
            if self.violation:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    self.kill_group()
                return
            self._done.wait(POLL_S)

    def _rss(self) -> int:
        used = tree_rss(self.proc.pid)
        self.peak_rss = max(self.peak_rss, used)
        return used

    def kill_group(self) -> None:
        """Kill the sandbox's first process, so its whole PID namespace is gone before bwrap exits."""
        if self.inner_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.inner_pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
                return
        with contextlib.suppress(ProcessLookupError):
            super().kill_group()

    def wait(self, timeout: float) -> tuple[int | None, str]:
        rc, out = super().wait(timeout)
        out = neutral_paths(out, self.scratch)
        self._done.set()
        self._watch.join()
        sanitize(self.scratch)
        if self.bwrap and rc is not None and 128 < rc <= 128 + 64:
            rc = -(rc - 128)
        if self.violation is None and rc == -signal.SIGXFSZ:
            self.violation = (
                f"the process wrote a file larger than {self.limits['fsize'] / 2**20:.0f} MiB and was stopped "  # type: ignore[assignment]
                "(sandbox file size limit)"
            )
        elif self.violation is None and rc == -signal.SIGXCPU:
            self.violation = f"the process used more than {self.limits['cpu']} s of CPU time and was stopped (sandbox CPU limit)"  # type: ignore[assignment]
        elif self.violation is None and self.limits.get("as") and rc not in (0, None) and _OUT_OF_MEMORY.search(out[:20000] + out[-20000:]):
            self.violation = (
                f"{self.what} used more than {gib(self.limits['as'])} of memory and was stopped "  # type: ignore[assignment]
                "(sandbox memory limit, CUDAMASTER_HARNESS__SANDBOX_MAX_MEMORY_BYTES)"
            )
        if self.violation:
            out = f"CMERR sandbox {self.violation}\n" + out
        return rc, out


# -- the sandbox ----------------------------------------------------------------------------------------------------------


@dataclass
class Sandbox:
    """How untrusted steps run here: `kind` is "bwrap" or "none" (opted out)."""

    kind: str
    settings: HarnessSettings
    mode: str = "userns"  # bwrap: "userns" (unprivileged bwrap) or "root" (root sets up, setpriv drops inside)
    bwrap: str = ""
    version: tuple[int, ...] = ()
    run_as: int | None = None  # host uid (and gid) of the sandbox when the service is root
    visible: list[Path] = field(default_factory=list)  # host trees visible inside, read-only
    system_args: list[str] = field(default_factory=list)
    prlimit: str = ""
    setpriv: str = ""
    choom: str = ""
    note: str = ""

    # -- description
    def describe(self) -> str:
        s = self.settings
        if self.kind == "none":
            return f"none: untrusted kernels run WITHOUT a sandbox ({self.note})"
        who = f"uid {self.run_as}" if self.run_as is not None else f"the service's uid {os.geteuid()} mapped to {s.sandbox_uid}"
        spaces = (
            "own user, PID, IPC and UTS namespaces"
            if self.mode == "userns"
            else "own PID, IPC and UTS namespaces (set up by root: unprivileged user namespaces are unavailable here; "
            "the process limit counts all sandboxes together)"
        )
        return (
            f"bwrap {'.'.join(map(str, self.version))} ({self.bwrap}): no network; {spaces}; "
            f"read-only {', '.join(str(p) for p in self.visible)}; one writable scratch directory; cleared environment; "
            f"runs as {who} without capabilities; limits: {s.sandbox_max_processes} processes, {s.sandbox_max_open_files} open "
            f"files, {s.sandbox_max_file_bytes >> 20} MiB per file, {s.sandbox_max_cpu_s} s CPU, "
            f"{gib(s.sandbox_max_memory_bytes) if s.sandbox_max_memory_bytes else 'unlimited'} address space per compiler "
            f"process, {gib(s.sandbox_max_run_memory_bytes) if s.sandbox_max_run_memory_bytes else 'unlimited'} resident per "
            "GPU step, scratch quota, "
            f"{s.sandbox_tmp_bytes >> 20} MiB /tmp; only the evaluation's GPU"
        )

    # -- building blocks
    def _limits(self, gpu: bool = False) -> dict[str, int]:
        """The rlimits of a step; "as" (address space) only for a step without the GPU, when set."""
        s = self.settings

        def cap(kind: int, want: int) -> int:
            hard = resource.getrlimit(kind)[1]
            return want if hard == resource.RLIM_INFINITY else min(want, hard)

        limits = {
            "nproc": cap(resource.RLIMIT_NPROC, s.sandbox_max_processes),
            "nofile": cap(resource.RLIMIT_NOFILE, s.sandbox_max_open_files),
            "fsize": cap(resource.RLIMIT_FSIZE, s.sandbox_max_file_bytes),
            "cpu": cap(resource.RLIMIT_CPU, s.sandbox_max_cpu_s),
        }
        if not gpu and s.sandbox_max_memory_bytes:
            limits["as"] = cap(resource.RLIMIT_AS, s.sandbox_max_memory_bytes)
        return limits

    def _inside(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.visible)

    def environment(self, cuda_visible: str | None) -> dict[str, str]:
        """The whole environment inside: only what nvcc and CUDA need (no CUDAMASTER_*, no keys, no URLs)."""
        toolkit = toolkit_root(self.settings.nvcc)
        path = [str(toolkit / "bin")] if toolkit else []
        for d in [*os.environ.get("PATH", "").split(":"), "/usr/local/bin", "/usr/bin", "/bin"]:
            if d and d not in path and os.path.isabs(d) and self._inside(Path(d)):
                path.append(d)
        libs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d and os.path.isabs(d) and self._inside(Path(d))]
        env = {"PATH": ":".join(path), "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "CUDA_CACHE_PATH": "/tmp/.nv"}
        if libs:
            env["LD_LIBRARY_PATH"] = ":".join(libs)
        if cuda_visible:
            env["CUDA_VISIBLE_DEVICES"] = cuda_visible
        return env

    def command(
        self,
        argv: list[str],
        scratch: Path,
        read_only: Iterable[Path] = (),
        gpu: bool = False,
        tools: Iterable[str] = (),
        info_fd: int | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """(the full command line, the environment inside) for `argv` in this sandbox."""
        s = self.settings
        nodes, cuda_visible = gpu_binding(s.gpu) if gpu else ([], "")
        env = self.environment(cuda_visible if gpu else None)
        args, drop = self._namespaces(str(s.sandbox_uid))
        args += ["--as-pid-1", "--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
        for k, v in env.items():
            args += ["--setenv", k, v]
        args += self._mounts(scratch, read_only, nodes, gpu, tools)
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        return [*args, "--", *drop, *self._limited(gpu), *argv], env

    def _namespaces(self, uid: str) -> tuple[list[str], list[str]]:
        """(bwrap and its namespace options, the command that drops to `uid` inside when root set bwrap up)."""
        if self.mode == "userns":  # bwrap unprivileged (as uid 65534 when the service is root: see start())
            args = [
                self.bwrap,
                "--unshare-all",
                "--unshare-user",
                *(["--disable-userns"] if self.version >= (0, 8) else []),
                "--cap-drop",
                "ALL",
                "--uid",
                uid,
                "--gid",
                uid,
            ]
            return args, []
        # "root": bwrap set up by root without a user namespace; setpriv drops to the uid inside
        args = [self.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
        drop = [
            self.setpriv,
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
        return args, drop

    def _mounts(self, scratch: Path, read_only: Iterable[Path], nodes: list[str], gpu: bool, tools: Iterable[str]) -> list[str]:
        """bwrap's file system: private /proc, /dev and /tmp, the system trees, the GPU's device nodes, the tools,
        the scratch directory (writable) and its read-only inputs; everything else read-only."""
        size = ["--size", str(self.settings.sandbox_tmp_bytes)] if self.version >= (0, 7) else []
        # The private /tmp first: a toolkit, driver or profiler unpacked under /tmp is bound over it.
        args = ["--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/tmp", *size, "--tmpfs", "/dev/shm"]
        args += self.system_args
        for node in nodes:
            args += ["--dev-bind", node, node]
        if gpu:
            for d in _SYS_DIRS:
                args += ["--ro-bind-try", d, d]
        args += self._tool_binds(tools)
        args += ["--bind", str(scratch), str(scratch)]
        for p in read_only:
            args += ["--ro-bind", str(p), str(p)]
        return [*args, "--chdir", str(scratch), "--remount-ro", "/dev", "--remount-ro", "/"]

    def _tool_binds(self, tools: Iterable[str]) -> list[str]:
        args: list[str] = []
        for tool in tools:
            exe = shutil.which(tool)
            if exe is not None and not self._inside(Path(os.path.realpath(exe)).parent):
                d = str(Path(os.path.realpath(exe)).parent)
                args += ["--ro-bind", d, d]
            # A toolkit's `ncu` is a wrapper that runs Nsight Compute from /opt/nvidia/nsight-compute (seen on the H200).
            if exe is not None and Path(exe).name == "ncu":
                for d in _NCU_HOMES:
                    args += ["--ro-bind-try", d, d]
        return args

    def _limited(self, gpu: bool) -> list[str]:
        """The command inside, before the step's own: prlimit with the step's limits (and choom, when there)."""
        lim = self._limits(gpu)
        inner = [
            self.prlimit,
            f"--nproc={lim['nproc']}",
            f"--nofile={lim['nofile']}",
            f"--fsize={lim['fsize']}",
            f"--cpu={lim['cpu']}:{lim['cpu'] + 5}",
            "--core=0",
            *([f"--as={lim['as']}"] if "as" in lim else []),
            "--",
        ]
        if self.choom:
            inner += [self.choom, "-n", "1000", "--"]
        return inner

    def start(
        self,
        argv: list[str],
        *,
        scratch: Path,
        read_only: Iterable[Path] = (),
        shared: Iterable[Path] = (),
        gpu: bool = False,
        quota_bytes: int | None = None,
        tools: Iterable[str] = (),
        merge_stderr: bool = True,
        what: str = "the process",
    ) -> SandboxedChild:
        """Start `argv` with `scratch` as its working and only writable directory.

        `read_only`: paths inside the scratch directory the step may read but not change (its inputs);
        `shared`: directories OUTSIDE it that the harness fills with generated inputs (datasets drawn while
        the step runs, the data cache), visible read-only at the same paths; never anything else of the host;
        `gpu`: bind the evaluation's GPU (settings.gpu); `quota_bytes`: what the step may add to the
        scratch directory (default sandbox_scratch_bytes); `tools`: commands whose install directory
        must be visible (e.g. ncu outside /usr); `what`: who runs, as a memory verdict names it ("the compiler").
        """
        s = self.settings
        scratch = Path(scratch)
        ro = [Path(p) for p in read_only]
        for p in ro:
            if scratch not in p.parents:
                raise ValueError(f"read-only input {p} is not inside the scratch directory {scratch}: stage() it first")
        quota = quota_bytes if quota_bytes is not None else s.sandbox_scratch_bytes
        limits = self._limits(gpu)
        rss = s.sandbox_max_run_memory_bytes if gpu else 0
        common = dict(
            scratch=scratch,
            skip=set(ro),
            quota_bytes=quota,
            max_files=s.sandbox_max_files,
            limits=limits,
            merge_stderr=merge_stderr,
            rss_bytes=rss,
            what=what,
        )
        if self.kind == "none":
            return self._start_unsandboxed(argv, gpu, limits, common)
        return self._start_bwrap(argv, scratch, ro, [*ro, *(Path(p) for p in shared)], gpu, tools, common)

    def _start_unsandboxed(self, argv: list[str], gpu: bool, limits: dict[str, int], common: dict) -> SandboxedChild:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUDAMASTER_")}
        if gpu and self.settings.gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.settings.gpu
        prlimit = shutil.which("prlimit")  # no sandbox, but the memory limit still holds where prlimit exists
        if "as" in limits and prlimit:
            argv = [prlimit, f"--as={limits['as']}", "--", *argv]
        elif "as" in limits:
            del limits["as"]
        return SandboxedChild(argv, env=env, bwrap=False, **common)

    def _start_bwrap(
        self, argv: list[str], scratch: Path, ro: list[Path], visible: list[Path], gpu: bool, tools: Iterable[str], common: dict
    ) -> SandboxedChild:
        r, w = os.pipe()
        try:
            full, _ = self.command(argv, scratch, visible, gpu, tools, info_fd=w)
            if self.run_as is not None:
                _hand_over(scratch, set(ro), self.run_as)
            if self.run_as is not None and self.mode == "userns":  # setpriv, not Popen(user=...): that would fork the service
                full = [self.setpriv, f"--reuid={self.run_as}", f"--regid={self.run_as}", "--clear-groups", "--no-new-privs", "--", *full]
            return SandboxedChild(full, env={}, bwrap=True, info_r=r, pass_fds=(w,), **common)
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)

    def run(self, argv: list[str], *, scratch: Path, timeout: float, **kwargs) -> tuple[int | None, str]:
        """start() and wait(): (exit status, None at the time limit; output)."""
        return self.start(argv, scratch=scratch, **kwargs).wait(timeout)


def _system_view(settings: HarnessSettings) -> tuple[list[Path], list[str]]:
    """(host trees visible inside, bwrap arguments that bind them read-only)."""
    visible, args = [Path("/usr")], ["--ro-bind", "/usr", "/usr"]
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            visible.append(Path(d))
    for f in _ETC_FILES:
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    extra = [toolkit_root(settings.nvcc), *driver_library_dirs(), *settings.sandbox_ro_paths]
    for p in extra:
        if p is None or not p.exists():
            continue
        p = Path(os.path.realpath(p))
        if not any(p == v or v in p.parents for v in visible):
            args += ["--ro-bind", str(p), str(p)]
            visible.append(p)
    return visible, args


def _key(settings: HarnessSettings) -> tuple:
    return (
        settings.sandbox,
        settings.sandbox_bwrap,
        settings.allow_unsandboxed,
        settings.sandbox_uid,
        settings.nvcc,
        tuple(settings.sandbox_ro_paths),
        settings.scratch_root,
        os.geteuid(),
    )


_built: dict[tuple, Sandbox | SandboxUnavailable] = {}
_lock = threading.Lock()


def sandbox_for(settings: HarnessSettings) -> Sandbox:
    """The sandbox for these settings, set up and self-tested once per process; raises SandboxUnavailable."""
    key = _key(settings)
    with _lock:
        if key not in _built:
            try:
                _built[key] = _build(settings)
            except SandboxUnavailable as exc:
                _built[key] = exc
        got = _built[key]
    if isinstance(got, SandboxUnavailable):
        raise got
    return Sandbox(**{**got.__dict__, "settings": settings})  # same set-up, this call's limits and GPU


def describe(settings: HarnessSettings) -> str:
    """One line: which sandbox is in force, or why untrusted code is refused. Never raises."""
    try:
        return sandbox_for(settings).describe()
    except SandboxUnavailable as exc:
        return f"unavailable: {exc}"


def _build(settings: HarnessSettings) -> Sandbox:
    if settings.sandbox == "none":
        if not settings.allow_unsandboxed:
            raise SandboxUnavailable(
                "CUDAMASTER_HARNESS__SANDBOX=none runs untrusted kernels without a sandbox; that also needs "
                "CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED=true (single-user local use only)"
            )
        return Sandbox("none", settings, note="CUDAMASTER_HARNESS__SANDBOX=none with CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED=true")
    try:
        return _build_bwrap(settings)
    except SandboxUnavailable as exc:
        if settings.sandbox == "auto" and settings.allow_unsandboxed:
            return Sandbox("none", settings, note=f"CUDAMASTER_HARNESS__ALLOW_UNSANDBOXED=true and {exc}")
        raise


def _build_bwrap(settings: HarnessSettings, modes: tuple[str, ...] = ("userns", "root")) -> Sandbox:
    """The first mode whose self-test passes: "userns" (preferred), else, as root, "root"."""
    bwrap = shutil.which(settings.sandbox_bwrap)
    if bwrap is None:
        raise SandboxUnavailable(
            f"bubblewrap not found ({settings.sandbox_bwrap!r} is neither a path nor a command on PATH), so "
            f"untrusted kernels cannot be compiled or run. {INSTALL_HINT}"
        )
    prlimit, setpriv = shutil.which("prlimit") or "", shutil.which("setpriv") or ""
    if not prlimit or not os.path.realpath(prlimit).startswith("/usr/"):
        raise SandboxUnavailable(
            "prlimit (util-linux) not found under /usr: the sandbox sets its resource limits with it; install util-linux"
        )
    if os.geteuid() == 0 and not setpriv:
        raise SandboxUnavailable(
            "setpriv (util-linux) not found: as root, the sandbox drops to an unprivileged uid with it; install util-linux"
        )
    try:
        version = _bwrap_version(bwrap)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"cannot run {bwrap}: {exc}. {INSTALL_HINT}") from None
    visible, system_args = _system_view(settings)
    choom = shutil.which("choom") or ""
    failures = []
    for mode in modes if os.geteuid() == 0 else ("userns",):
        box = Sandbox(
            "bwrap",
            settings,
            mode=mode,
            bwrap=bwrap,
            version=version,
            run_as=settings.sandbox_uid if os.geteuid() == 0 else None,
            visible=visible,
            system_args=system_args,
            prlimit=prlimit,
            setpriv=setpriv,
            choom=choom if choom and os.path.realpath(choom).startswith("/usr/") else "",
        )
        failure = _self_test(box)
        if failure is None:
            return box
        failures.append(f"[{mode}] {failure}")
    out = " ".join(failures)
    hint = USERNS_HINT if re.search(r"user namespace|uid map|setting up uid|Operation not permitted|No permissions", out) else ""
    where = (
        ""
        if settings.scratch_root is None
        else f" The scratch root {settings.scratch_root} must be traversable by uid {settings.sandbox_uid}."
    )
    raise SandboxUnavailable(f"bubblewrap at {bwrap} failed its self-test: {out}. {hint}{where} {INSTALL_HINT}")


def _self_test(box: Sandbox) -> str | None:
    """None when a trivial step runs in the sandbox and writes its scratch directory; else what went wrong."""
    with scratch(box.settings, "cm-selftest-") as tmp:
        try:
            rc, out = box.run(["/bin/sh", "-c", "echo ok > probe && test -w . && ! test -w /usr"], scratch=tmp, timeout=60)
        except OSError as exc:
            rc, out = -1, str(exc)
        if rc != 0 or not (tmp / "probe").exists():
            return f"exit {rc}: {out.strip()[-400:]}"
    return None
