"""`cudamaster sandbox check`: run probes inside the sandbox and say what works and what is blocked.

Each probe is a shell command (or, with a GPU, a tiny CUDA program and an ncu run of it) started through
the same `Sandbox` the harness uses; the result lists what the sandboxed process could and could not do.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from settings import HarnessSettings

from . import sandbox as sb


@dataclass
class Probe:
    name: str
    ok: bool
    detail: str
    required: bool = True  # False: reported, but does not fail the check (e.g. ncu counters)


TINY_CUDA = r"""
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>
__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2.0f * i; }
int main() {
  const int n = 1 << 20;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) { printf("CUDAERR %s\n", cudaGetErrorString(e)); return 1; }
  float* d = nullptr;
  if ((e = cudaMalloc(&d, n * sizeof(float))) != cudaSuccess) { printf("CUDAERR %s\n", cudaGetErrorString(e)); return 1; }
  cudaProfilerStart();
  twice<<<(n + 255) / 256, 256>>>(d, n);
  cudaProfilerStop();
  static float h[1 << 20];
  if ((e = cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) { printf("CUDAERR %s\n", cudaGetErrorString(e)); return 1; }
  double err = 0;
  for (int i = 0; i < n; ++i) err = fmax(err, fabs(h[i] - 2.0 * i));
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("CUDAOK %s devices=%d maxerr=%g\n", p.name, count, err);
  return err == 0 ? 0 : 2;
}
"""


def _median_ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def setup_cost_ms(box: sb.Sandbox, settings: HarnessSettings, runs: int = 20) -> dict[str, float]:
    """Median wall time of `/bin/true` through the sandbox and directly, and their difference (ms)."""
    with sb.scratch(settings, "cm-cost-") as tmp:
        box.run(["/bin/true"], scratch=tmp, timeout=60)  # warm caches
        inside = _median_ms(lambda: box.run(["/bin/true"], scratch=tmp, timeout=60), runs)
        outside = _median_ms(lambda: subprocess.run(["/bin/true"], cwd=tmp, check=True), runs)
    return {"sandboxed_ms": round(inside, 2), "direct_ms": round(outside, 2), "setup_ms": round(inside - outside, 2)}


def _sh(box: sb.Sandbox, tmp: Path, script: str, **kwargs) -> tuple[int | None, str]:
    return box.run(["/bin/sh", "-c", script], scratch=tmp, timeout=120, **kwargs)


def run_checks(settings: HarnessSettings, *, service_port: int = 8000, gpu: bool | None = None, ncu: str = "ncu") -> list[Probe]:
    """Every probe; `gpu` None: probe the GPU when nvidia-smi lists one."""
    probes: list[Probe] = []
    try:
        box = sb.sandbox_for(settings)
    except sb.SandboxUnavailable as exc:
        return [Probe("sandbox", False, f"unavailable: {exc}")]
    probes.append(Probe("sandbox", box.kind == "bwrap", box.describe()))
    if box.kind != "bwrap":
        return probes
    probes.append(_cost_probe(box, settings))
    canary = "cm-canary-" + os.urandom(8).hex()
    os.environ["CUDAMASTER_SANDBOX_CANARY"] = canary
    decoy = sb.make_scratch(settings, "cm-decoy-")
    (decoy / "secret.txt").write_text(canary)
    os.chmod(decoy, 0o755)
    try:
        with sb.scratch(settings, "cm-check-") as tmp:
            probes += _identity_probes(box, tmp)
            probes.append(_environment_probe(box, tmp, canary))
            probes.append(_network_probe(box, tmp, service_port))
            probes.append(_hidden_paths_probe(box, tmp, settings, decoy))
            probes.append(_writable_probe(box, tmp))
            probes.append(_limits_probe(box, tmp))
            probes.append(_quota_probe(box, tmp))
            want_gpu = gpu if gpu is not None else bool(sb.gpu_devices())
            if want_gpu:
                probes += _gpu_probes(box, settings, tmp, ncu)
    finally:
        os.environ.pop("CUDAMASTER_SANDBOX_CANARY", None)
        sb.remove_scratch(decoy)
    return probes


def _cost_probe(box: sb.Sandbox, settings: HarnessSettings) -> Probe:
    cost = setup_cost_ms(box, settings)
    return Probe(
        "set-up cost",
        True,
        f"{cost['setup_ms']:.1f} ms per sandboxed start (median of /bin/true: "
        f"{cost['sandboxed_ms']:.1f} ms sandboxed, {cost['direct_ms']:.1f} ms direct)",
        required=False,
    )


def _identity_probes(box: sb.Sandbox, tmp: Path) -> list[Probe]:
    """Who the sandboxed process is (not root, no privileges) and which processes it sees."""
    rc, out = _sh(box, tmp, "id -u; grep -E '^(NoNewPrivs|CapEff):' /proc/self/status | tr '\\n' ' '; echo; ls /proc | grep -c '^[0-9]'")
    lines = out.splitlines()
    return [
        Probe(
            "identity",
            rc == 0 and len(lines) >= 3 and lines[0] != "0" and "NoNewPrivs:\t1" in lines[1] and "CapEff:\t0000000000000000" in lines[1],
            f"uid {lines[0] if lines else '?'} inside; {' '.join(lines[1].split()) if len(lines) > 1 else out.strip()}",
        ),
        Probe(
            "pid namespace",
            rc == 0 and len(lines) >= 3 and lines[2].isdigit() and int(lines[2]) < 10,
            f"{lines[2] if len(lines) > 2 else '?'} processes visible inside (the host has {len([p for p in os.listdir('/proc') if p.isdigit()])})",
        ),
    ]


def _environment_probe(box: sb.Sandbox, tmp: Path, canary: str) -> Probe:
    _rc, out = _sh(box, tmp, "env")
    return Probe(
        "environment",
        canary not in out and "CUDAMASTER" not in out,
        "inside: " + ", ".join(sorted(line.split("=", 1)[0] for line in out.splitlines() if "=" in line)),
    )


def _network_probe(box: sb.Sandbox, tmp: Path, service_port: int) -> Probe:
    script = (
        f"cat /proc/net/dev; for p in 5432 {service_port}; do "
        'if command -v bash >/dev/null; then bash -c "echo > /dev/tcp/127.0.0.1/$p" 2>/dev/null && echo CONNECTED $p || echo BLOCKED $p; fi; done'
    )
    _rc, out = _sh(box, tmp, script)
    ifaces = re.findall(r"^\s*([\w.-]+):\s+\d", out, re.M)
    return Probe(
        "network",
        ifaces == ["lo"] and "CONNECTED" not in out,
        f"interfaces {ifaces}; " + "; ".join(line for line in out.splitlines() if line.startswith(("CONNECTED", "BLOCKED"))),
    )


def _hidden_paths_probe(box: sb.Sandbox, tmp: Path, settings: HarnessSettings, decoy: Path) -> Probe:
    hidden = [settings.cache_dir, Path.home(), Path.cwd(), Path("/etc/passwd"), Path("/root"), decoy / "secret.txt"]
    rc, out = _sh(box, tmp, "; ".join(f"test -e '{p}' && echo VISIBLE '{p}'" for p in hidden) + "; true")
    seen = [line.removeprefix("VISIBLE ") for line in out.splitlines() if line.startswith("VISIBLE")]
    return Probe("hidden paths", rc == 0 and not seen, f"visible: {seen}" if seen else f"not there: {', '.join(map(str, hidden))}")


def _writable_probe(box: sb.Sandbox, tmp: Path) -> Probe:
    _rc, out = _sh(
        box,
        tmp,
        "echo x > ok && echo WROTE scratch; for p in /usr/x /x /etc/x; do touch $p 2>/dev/null && echo WROTE $p; done; true",
    )
    wrote = [line.removeprefix("WROTE ") for line in out.splitlines() if line.startswith("WROTE")]
    return Probe("writable", wrote == ["scratch"], f"writable: {wrote}")


def _limits_probe(box: sb.Sandbox, tmp: Path) -> Probe:
    _rc, out = _sh(box, tmp, "prlimit --noheadings --output RESOURCE,SOFT")
    limits = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
    return Probe(
        "limits",
        all(k in limits for k in ("NPROC", "NOFILE", "FSIZE", "CPU")),
        ", ".join(f"{k} {limits.get(k)}" for k in ("NPROC", "NOFILE", "FSIZE", "CPU", "CORE")),
    )


def _quota_probe(box: sb.Sandbox, tmp: Path) -> Probe:
    rc, out = box.run(
        ["/bin/sh", "-c", "dd if=/dev/zero of=fill bs=1M count=256 2>/dev/null; sleep 5"],
        scratch=tmp,
        timeout=60,
        quota_bytes=16 << 20,
    )
    return Probe("disk quota", out.startswith("CMERR sandbox"), out.splitlines()[0] if out else f"exit {rc}")


def _gpu_probes(box: sb.Sandbox, settings: HarnessSettings, tmp: Path, ncu: str) -> list[Probe]:
    probes = []
    (tmp / "tiny.cu").write_text(TINY_CUDA)
    nvcc = shutil.which(settings.nvcc) or settings.nvcc
    sm = settings.nvcc_arch.removeprefix("sm_")
    rc, out = box.run([nvcc, f"-gencode=arch=compute_{sm},code=sm_{sm}", "-o", "tiny", "tiny.cu"], scratch=tmp, timeout=300)
    probes.append(Probe("nvcc", rc == 0, "compiled a CUDA program inside" if rc == 0 else out.strip()[-400:]))
    if rc != 0:
        return probes
    nodes, visible = sb.gpu_binding(settings.gpu)
    rc, out = box.run([str(tmp / "tiny")], scratch=tmp, timeout=120, gpu=True)
    probes.append(
        Probe("gpu", rc == 0 and "CUDAOK" in out, f"{out.strip()[-300:]} (bound {' '.join(nodes)}; CUDA_VISIBLE_DEVICES={visible})")
    )
    ncu_path = shutil.which(ncu)
    if ncu_path is None:
        probes.append(Probe("ncu", False, f"{ncu} not found", required=False))
        return probes
    rc, out = box.run(
        [ncu_path, "--clock-control", "none", "--metrics", "gpu__time_duration.sum", "--csv", str(tmp / "tiny")],
        scratch=tmp,
        timeout=300,
        gpu=True,
        tools=(ncu_path,),
    )
    params = Path("/proc/driver/nvidia/params")
    admin = next((line for line in params.read_text().splitlines() if "RmProfilingAdminOnly" in line), "") if params.exists() else ""
    ok = rc == 0 and "gpu__time_duration" in out
    why = (
        ""
        if ok
        else (
            " (ERR_NVGPUCTRPERM: counters are for admins only; profiling untrusted kernels needs NVreg_RestrictProfilingToAdminUsers=0)"
            if "ERR_NVGPUCTRPERM" in out
            else ""
        )
    )
    probes.append(
        Probe(
            "ncu",
            ok,
            f"{'profiled the kernel inside' if ok else out.strip()[-300:]}{why}; driver {admin.strip() or 'params unknown'}",
            required=False,
        )
    )
    return probes


def as_json(probes: list[Probe]) -> list[dict]:
    return [asdict(p) for p in probes]
