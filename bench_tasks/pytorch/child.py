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
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
import os
import sys
import traceback
from typing import Any

RESULT = "result.json"
SUPPORTED = {"float32": "float", "int64": "int64", "int32": "int32"}


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


def main() -> int:
    with open(sys.argv[1]) as f:
        request = json.load(f)
    for path in request.get("site", []):
        sys.path.append(path)
    os.environ.setdefault("OMP_NUM_THREADS", str(request.get("threads", 1)))
    try:
        import torch

        torch.set_num_threads(int(request.get("threads", 1)))
        result = probe(request) if request["mode"] == "probe" else reference(request)
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
