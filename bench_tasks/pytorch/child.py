"""The sandboxed side of a PyTorch reference (KernelBench's format): the only place its file is run.

Standalone (stdlib, torch and numpy; nothing of the project is visible in the sandbox). Run as

    python -I -S child.py REQUEST.json

in a scratch directory holding the request, the reference file and (mode "reference") its inputs. It writes
`result.json` there: {"ok": true, ...} or {"ok": false, "kind": ..., "reason": ...}. Modes:

- "probe": every size (module-level integer constants overridden by rewriting their assignments before the file
  runs): the forward's inputs, the module's parameters and buffers (state_dict order) and its outputs, with shapes,
  dtypes and value ranges; the FLOPs torch's counter finds; a check that the outputs do not depend on the random
  state (dropout, torch.rand in forward) nor differ between two calls; and float64 reference outputs on seeded
  inputs (`seeds`), saved as .npy files.
- "reference": the float64 outputs of the model at one size on given inputs and parameters (.npy files).
- "time": on the GPU, at every size: PyTorch eager, torch.compile and the candidate (a shared library loaded with
  ctypes and called on the torch tensors' device pointers, in the derived prototype's order), interleaved in one
  process in a random order per round, each call between CUDA events after an L2 flush (a read of twice the L2),
  after warm-up calls; per-call times, and the candidate's outputs compared with eager's.
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
import os
import signal
import sys
import traceback
from typing import Any

RESULT = "result.json"
SUPPORTED = {"float32": "float", "int64": "int64", "int32": "int32"}


class TimeLimit(BaseException):  # a BaseException: the file's `except Exception` does not swallow it
    """The request's `seconds` ran out (the child's own alarm, armed once torch is imported)."""


def _alarm(signum: int, frame: Any) -> None:
    raise TimeLimit


class Refused(Exception):
    """The reference cannot be made a task; `kind` names the class of reason."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


# -- the file --------------------------------------------------------------------------------------------------------


def constants(tree: ast.Module) -> dict[str, int]:
    """The file's module-level integer constants (`batch_size = 16`), in file order."""
    found: dict[str, int] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = _int_literal(node.value)
        if value is not None:
            found[node.targets[0].id] = value
    return found


def _int_literal(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def load(path: str, size: dict[str, int]) -> dict:
    """The module's namespace with its constants set to `size` (their assignments rewritten, so constants computed
    from them follow)."""
    with open(path) as f:
        text = f.read()
    try:
        tree = ast.parse(text, path)
    except SyntaxError as exc:
        raise Refused("syntax", f"syntax error at line {exc.lineno}: {exc.msg}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in size and _int_literal(node.value) is not None:
                node.value = ast.copy_location(ast.Constant(int(size[name])), node.value)
    namespace: dict = {"__name__": "reference", "__file__": path}
    exec(compile(tree, path, "exec"), namespace)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in namespace:
            raise Refused(
                "format", f"the file defines no `{name}`: KernelBench's format needs class Model, get_inputs() and get_init_inputs()"
            )
    return namespace


# -- one size --------------------------------------------------------------------------------------------------------


def build(ns: dict, seed: int):
    import torch

    torch.manual_seed(seed)
    init = list(ns["get_init_inputs"]())
    model = ns["Model"](*init)
    if not isinstance(model, torch.nn.Module):
        raise Refused("format", f"Model(*get_init_inputs()) is a {type(model).__name__}, not a torch.nn.Module")
    inputs = ns["get_inputs"]()
    if not isinstance(inputs, list | tuple):
        raise Refused("format", f"get_inputs() returned a {type(inputs).__name__}; it must return a list of tensors")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise Refused("inputs", f"forward input {i} is of type {type(x).__name__}, not a tensor: pass it to the constructor instead")
    return model, list(inputs)


def dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def describe(t, name: str, where: str) -> dict:
    dtype = dtype_name(t)
    if dtype not in SUPPORTED:
        raise Refused("dtype", f"{where} {name} is {dtype}: supported are float32 (FP32/BF16 tasks) and int32/int64 (indices)")
    row: dict[str, Any] = {"name": name, "shape": list(t.shape), "dtype": dtype}
    if t.numel():
        v = t.detach().double()
        row |= {"min": float(v.min()), "max": float(v.max()), "mean": float(v.mean()), "std": float(v.std()) if t.numel() > 1 else 0.0}
    return row


def input_names(model, count: int) -> list[str]:
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [named[i] if i < len(named) else f"x{i}" for i in range(count)]


def state(model) -> list[tuple[str, Any]]:
    persistent = model.state_dict(keep_vars=True)
    for name, _ in model.named_buffers():
        if name not in persistent:
            raise Refused("state", f"buffer {name} is not persistent (not in state_dict): a kernel could not be given it")
    return list(persistent.items())


def outputs_of(result) -> list:
    import torch

    items = list(result) if isinstance(result, list | tuple) else [result]
    for i, o in enumerate(items):
        if not isinstance(o, torch.Tensor):
            raise Refused("outputs", f"forward output {i} is a {type(o).__name__}, not a tensor")
    if not items:
        raise Refused("outputs", "forward returns no tensor")
    return items


def as64(t):
    return t.detach().double() if t.is_floating_point() else t.detach()


def forward64(model, inputs: list, seed: int) -> list:
    import torch

    m = copy.deepcopy(model).double()
    torch.manual_seed(seed)
    with torch.no_grad():
        return [o.detach() for o in outputs_of(m(*[as64(x) for x in inputs]))]


def dropout_modules(model) -> list[str]:
    import torch

    kinds = (torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d, torch.nn.AlphaDropout)
    return [n or type(m).__name__ for n, m in model.named_modules() if isinstance(m, kinds) and m.p > 0 and m.training]


def check_deterministic(model, inputs: list) -> list:
    """The float64 outputs, once they are the same under two random states and two calls; refuses randomness."""
    drop = dropout_modules(model)
    if drop:
        raise Refused(
            "random",
            f"the model uses dropout ({', '.join(drop)}) in training mode: its outputs are random, so no kernel can be checked against them",
        )
    first, second = forward64(model, inputs, 1), forward64(model, inputs, 2)
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        if a.shape != b.shape or not bool((a == b).all() if a.numel() else True):
            raise Refused(
                "random",
                f"output {i} differs between two calls on the same inputs: the model uses randomness (dropout, torch.rand) or is non-deterministic",
            )
    return first


def count_flops(model, inputs: list) -> int:
    import torch

    try:
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*inputs)
        return int(counter.get_total_flops())
    except Exception:  # noqa: BLE001 - a model the counter cannot follow has no counted FLOPs (0)
        return 0


def probe_size(path: str, size: dict[str, int], seeds: list[int], outdir: str, index: int) -> dict:
    import numpy as np
    import torch

    ns = load(path, size)
    model, inputs = build(ns, 0)
    names = input_names(model, len(inputs))
    row: dict[str, Any] = {
        "inputs": [describe(x, n, "forward input") for n, x in zip(names, inputs, strict=True)],
        "params": [describe(v, k, "parameter or buffer") for k, v in state(model)],
    }
    with torch.no_grad():
        native = outputs_of(model(*inputs))
    row["outputs"] = [{"shape": list(o.shape), "dtype": dtype_name(o)} for o in native]
    for i, o in enumerate(native):
        describe(o, f"output {i}", "forward output")
    check_deterministic(model, inputs)
    row["flops"] = count_flops(model, inputs)
    row["references"] = []
    for seed in seeds:
        m, xs = build(ns, seed)
        outs = forward64(m, xs, 0)
        files = {}
        for kind, items in (("input", zip(names, xs, strict=True)), ("param", state(m)), ("output", enumerate(outs))):
            for k, v in items:
                files[f"{kind}:{k}"] = fn = f"{outdir}/s{index}_seed{seed}_{kind}_{k}.npy"
                np.save(fn, as64(v).cpu().numpy().reshape(-1))
        row["references"].append({"seed": seed, "files": files})
    return row


def probe(request: dict) -> dict:
    path = request["reference"]
    with open(path) as f:
        try:
            tree = ast.parse(f.read(), path)
        except SyntaxError as exc:
            raise Refused("syntax", f"syntax error at line {exc.lineno}: {exc.msg}") from None
    found = constants(tree)
    sizes = request["sizes"] or [{}]
    for i, size in enumerate(sizes):
        unknown = sorted(set(size) - set(found))
        if unknown:
            raise Refused(
                "sizes",
                f"sizes[{i}] names {', '.join(unknown)}, which the file does not define as integer constants ({', '.join(found) or 'none'})",
            )
    full = [found | {k: int(v) for k, v in size.items()} for size in sizes]
    os.makedirs(request["out"], exist_ok=True)
    rows = [probe_size(path, size, request["seeds"], request["out"], i) | {"size": size} for i, size in enumerate(full)]
    return {"ok": True, "constants": found, "sizes": rows}


def reference(request: dict) -> dict:
    """float64 outputs at `size` for the inputs and state in `files` (name -> .npy of the flat values)."""
    import numpy as np
    import torch

    ns = load(request["reference"], request["size"])
    model, _ = build(ns, 0)
    model = model.double()  # before loading: the drawn values go in unrounded
    st = {k: torch.from_numpy(np.load(request["params"][k])).reshape(v.shape).to(v.dtype) for k, v in state(model)}
    model.load_state_dict(st)
    xs = [torch.from_numpy(np.load(f)).reshape(shape) for f, shape in request["inputs"]]
    outs = forward64(model, xs, 0)
    files = []
    for i, o in enumerate(outs):
        files.append(fn := f"{request['out']}/output_{i}.npy")
        np.save(fn, o.cpu().numpy().astype(np.float64).reshape(-1))
    return {"ok": True, "outputs": files}


# -- GPU timing (mode "time") ---------------------------------------------------------------------------------------


def _device_model(ns: dict, dtype, device):
    model, inputs = build(ns, 0)
    model = model.to(device)
    for t in [*model.parameters(), *model.buffers()]:
        if t.is_floating_point():
            t.data = t.data.to(dtype)
    xs = [x.to(device).to(dtype) if x.is_floating_point() else x.to(device) for x in inputs]
    return model, [x.contiguous() for x in xs]


def _candidate_call(lib, spec: dict, model, xs: list, outs: list, size: dict):
    """The candidate's entry bound to the tensors' data pointers, in the prototype's order (spec["args"])."""
    import ctypes

    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    keep: list[Any] = []
    args: list[Any] = []
    types: list[Any] = []
    for kind, key in spec["args"]:
        if kind in ("output", "input", "param"):
            t = outs[int(key)] if kind == "output" else xs[int(key)] if kind == "input" else state[key]
            keep.append(t)
            args.append(ctypes.c_void_p(t.data_ptr()))
            types.append(ctypes.c_void_p)
        else:
            ctype = ctypes.c_int64 if kind == "int64_t" else ctypes.c_int
            args.append(ctype(int(size[key])))
            types.append(ctype)
    fn = getattr(lib, spec["entry"])
    fn.restype, fn.argtypes = None, types
    return lambda: fn(*args), keep


def _timed(calls: dict, spec: dict, device) -> dict[str, list[float]]:
    """Rounds of one call of each implementation in a random order, each between CUDA events after an L2 flush."""
    import random
    import time

    import torch

    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.int32, device=device)
    times: dict[str, list[float]] = {k: [] for k in calls}
    rng, started, rounds = random.Random(spec["seed"]), time.monotonic(), 0
    while rounds < spec["min_rounds"] or (time.monotonic() - started < spec["round_seconds"] and rounds < spec["max_rounds"]):
        order = list(calls)
        rng.shuffle(order)
        events = []
        for name in order:
            flush.sum()  # a read of 2x L2 (clean lines, no write-back): the timed call starts with a cold cache
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            calls[name]()
            end.record()
            events.append((name, start, end))
        torch.cuda.synchronize()
        for name, start, end in events:
            times[name].append(start.elapsed_time(end) * 1000.0)
        rounds += 1
    return times


def _agreement(cand: list, want: list, tol: tuple[float, float], max_abs: bool = True) -> float:
    """The largest |candidate - eager| over its bound (atol * scale + rtol * |eager|, scale max|eager| for the task's
    `max_abs` tolerances, else 1, as the harness's checks scale it): <= 1 agrees."""
    worst = 0.0
    for got, ref in zip(cand, want, strict=True):
        g, r = got.double(), ref.double()
        bound = tol[0] * (float(r.abs().max()) if max_abs else 1.0) + tol[1] * r.abs() + 1e-30
        ratio = ((g - r).abs() / bound).nan_to_num(nan=float("inf")).max()
        worst = max(worst, float(ratio))
    return worst


def _compiled(model, xs: list, calls: dict) -> str:
    """torch.compile's model into `calls` (compiled now, by a first call); where it fails, why (eager is still timed)."""
    import torch

    try:
        compiled = torch.compile(model)
        compiled(*xs)
    except Exception as exc:  # noqa: BLE001 - inductor's, triton's or the compiler's failure is the reason
        return f"{type(exc).__name__}: {exc}"[:800]
    calls["compile"] = lambda: compiled(*xs)
    return ""


def time_size(path: str, size: dict, spec: dict, lib) -> dict:
    import torch

    device = torch.device("cuda")
    dtype = torch.bfloat16 if spec["precision"] == "bf16" else torch.float32
    model, xs = _device_model(load(path, size), dtype, device)
    with torch.no_grad():
        want = outputs_of(model(*xs))
        outs = [torch.empty(tuple(o.shape), dtype=o.dtype, device=device) for o in want]  # contiguous, whatever eager's strides
        calls = {"eager": lambda: model(*xs)}
        compile_error = _compiled(model, xs, calls) if spec["compile"] else ""
        if lib is not None:  # None: the baselines alone (bench run over a suite without candidates)
            calls["candidate"], _keep = _candidate_call(lib, spec, model, xs, outs, size)
        for _ in range(spec["warmup"]):  # the first compiled call compiles
            for call in calls.values():
                call()
        agreement = 0.0
        if lib is not None:
            torch.cuda.synchronize()
            for o in outs:  # poisoned: an output the candidate does not write disagrees
                o.fill_(float("nan") if o.is_floating_point() else -(2**31) + 7)
            calls["candidate"]()
            torch.cuda.synchronize()
            agreement = _agreement(
                outs, [o.detach() for o in want], tuple(spec["tolerance"]), spec.get("tolerance_scale", "max_abs") == "max_abs"
            )
        times = _timed(calls, spec, device)
    return {"size": size, "times": times, "agreement": agreement, "compile_error": compile_error}


def time_all(request: dict) -> dict:
    import ctypes

    import torch

    if not torch.cuda.is_available():
        raise Refused("gpu", "torch sees no CUDA device here: PyTorch baselines are timed on the GPU")
    lib = ctypes.CDLL(os.path.join(os.path.dirname(request["reference"]), request["library"])) if request["library"] else None
    rows = [time_size(request["reference"], size, request, lib) for size in request["sizes"]]
    return {"ok": True, "torch": torch.__version__, "device": torch.cuda.get_device_name(0), "sizes": rows}


MODES = {"probe": probe, "reference": reference, "time": time_all}


def main() -> int:
    with open(sys.argv[1]) as f:
        request = json.load(f)
    for path in request.get("site", []):
        sys.path.append(path)
    os.environ.setdefault("OMP_NUM_THREADS", str(request.get("threads", 1)))
    for key, value in request.get("env", {}).items():  # torch.compile's caches and compile workers (mode "time")
        os.environ[key] = value
    try:
        import torch

        torch.set_num_threads(int(request.get("threads", 1)))
        seconds = float(request.get("seconds", 0))
        if seconds > 0:  # the file's own time starts now (the sandbox's wall-clock limit backs this up)
            signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, seconds)
        result = MODES[request["mode"]](request)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except TimeLimit:
        result = {"ok": False, "kind": "time", "reason": f"the reference ran longer than {seconds:g} s and was stopped (time limit)"}
    except Refused as exc:
        result = {"ok": False, "kind": exc.kind, "reason": str(exc)}
    except MemoryError:
        result = {"ok": False, "kind": "memory", "reason": "the reference ran out of memory (the sandbox's limit)"}
    except BaseException as exc:  # noqa: BLE001 - whatever the user's code raised is the reason
        result = _raised(exc)
    with open(RESULT, "w") as f:
        json.dump(result, f)
    return 0


def _raised(exc: BaseException) -> dict:
    text = f"{type(exc).__name__}: {exc}"[:2000]
    if "can't allocate memory" in text or "not enough memory" in text.lower():
        return {"ok": False, "kind": "memory", "reason": f"the reference ran out of memory (the sandbox's limit): {text[:300]}"}
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".py") and "reference" in os.path.basename(f.filename)
    ]
    where = f" (line {frames[-1].lineno} of the file)" if frames else ""
    return {"ok": False, "kind": "error", "reason": f"the reference raised {text}{where}"}


if __name__ == "__main__":
    sys.exit(main())
