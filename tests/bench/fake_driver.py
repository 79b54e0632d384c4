"""A FAKE driver for CPU tests: the runtime's plan/result protocol (runtime/cm_runtime.h) in Python.

It runs no GPU code. Its "kernel" is the task's float64 reference rounded to the output type; the
timed pairs redraw the inputs with the numpy twin of the device generator, exactly where the real
runtime does, and save what the real runtime saves. CM_FAKE_MODE makes it misbehave like a cheating
candidate: `replay` (timed calls return the outputs of the dataset the timing starts from), `skip_odd` (every other
timed call leaves its output unwritten), `bad_draw` (the saved inputs of checked calls are not what
the generator draws), `hang` (the first candidate call ends the run as the runtime's call watchdog does, after the
plan's call_limit floor). Like the real driver it starts before its datasets exist and waits for `ready`,
waits at the plan's gate after its start-up, and says `timing_done` once its last size is timed.
CM_FAKE_LOG (a file) gets a line per event (start, gate, timing_done, exit, with the plan's directory);
CM_FAKE_TAIL_S: seconds its correctness runs take after the last timed size at most: they end earlier once another
driver has logged its start, or once CM_FAKE_DRIVERS drivers have (so a loaded machine cannot make them too short).

    python fake_driver.py PLAN    (as the real driver; CM_FAKE_VARIANT = task/precision, CM_FAKE_SIZES = JSON list)
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from bench_tasks import data, load_task
from bench_tasks.harness.plan import Plan
from bench_tasks.refresh import RefreshDraw, refresh_values, shuffled_values

DRAW_KINDS = {1: "uniform", 2: "normal", 3: "randint", 4: "const", 5: "shuffle"}


def main() -> int:
    plan = Plan.from_text(Path(sys.argv[1]).read_text())
    mode = os.environ.get("CM_FAKE_MODE", "honest")
    name, precision = os.environ["CM_FAKE_VARIANT"].split("/")
    variant = load_task(name).variant(precision)
    sizes = json.loads(os.environ["CM_FAKE_SIZES"])
    params = variant.prototype.params
    results = open(plan.results, "w")  # noqa: SIM115 - open for the driver's whole life, as the runtime's; closed at exit

    def say(line: str) -> None:
        results.write(line + "\n")
        results.flush()

    def log(event: str) -> None:
        if os.environ.get("CM_FAKE_LOG"):
            with open(os.environ["CM_FAKE_LOG"], "a") as f:
                f.write(f"{event} {Path(sys.argv[1]).parent.name}\n")

    def started_drivers() -> int:
        path = os.environ.get("CM_FAKE_LOG")
        return sum(line.startswith("start ") for line in open(path)) if path and os.path.exists(path) else 0

    log("start")
    if plan.cpus:  # as the runtime's pin_to: run on the plan's cores, then say which cores it may use
        os.sched_setaffinity(0, plan.cpus)
    cores = sorted(os.sched_getaffinity(0))
    say(f"cpus {len(cores)} " + " ".join(str(c) for c in cores))
    say("device FAKE_GPU 9.0 132 52428800 150000000000 13000 13000")
    if plan.gate is not None:
        t_gate = time.monotonic()
        while not plan.gate.exists():
            time.sleep(0.001)
        say(f"stage -1 gate_wait {time.monotonic() - t_gate:.6f}")
    say(f"gpu_start {time.monotonic():.6f}")
    log("gate")
    timed_cases = [cp.index for cp in plan.cases if cp.timing and any(p == "check" for _, p in cp.datasets)]
    if not timed_cases:
        say("timing_done")
    for cp in plan.cases:
        size = sizes[cp.index]
        buffers = {variant.arg_of(params[b.arg]).name: b for b in cp.buffers}

        def load(directory: Path, size=size, buffers=buffers) -> dict[str, np.ndarray]:
            while not (directory / "ready").exists():
                time.sleep(0.001)
            lengths = variant.task.lengths(size, precision)
            return {
                n: np.fromfile(directory / f"{n}.bin", dtype=data.STORAGE[params_dtype(variant, n)], count=lengths[n])
                for n, b in buffers.items()
                if b.role in (0, 3)
            }

        def kernel(stored: dict[str, np.ndarray], size=size, buffers=buffers) -> dict[str, np.ndarray]:
            names = data.reference_names(variant, size)
            ref = variant.task.reference_module.reference(data.float64_inputs(variant, stored), names, precision, None)
            return {
                n: data.to_storage(np.asarray(ref[n]).reshape(-1), params_dtype(variant, n))
                for n, b in buffers.items()
                if b.role in (1, 2, 3)
            }

        def save(outs: dict[str, np.ndarray], stem: str, buffers=buffers) -> None:
            for n, values in outs.items():
                b = buffers[n]
                path = plan.outdir / f"{stem}_{n}.bin"
                if b.sample is None:
                    values.tofile(path)
                    continue
                idx = np.fromfile(b.sample[1], dtype=np.int64, count=b.sample[0])
                values[idx].tofile(path)
                say(f"unwritten {path.name} {data.unwritten_count(values, params_dtype(variant, n))}")

        first = None
        for d, (directory, purpose) in enumerate(cp.datasets):
            if purpose != "check":
                continue
            stored = load(directory)
            first = stored  # the timing loop starts from the last check dataset, as the runtime's
            runs = [("baseline", "first"), ("candidate", "first"), ("candidate", "second")]
            for impl, stage in runs:
                if impl == "candidate" and mode == "hang":  # as the runtime's call watchdog: stopped at the plan's limit
                    time.sleep(plan.call_floor_s)
                    print(f"CMERR timeout a candidate call ran past {plan.call_floor_s:.1f} s", file=sys.stderr, flush=True)
                    return 6
                save(kernel(stored), f"c{cp.index}_d{d}_{impl}_{stage}")
                say(f"output {cp.index} {d} {impl} {stage}")
        if cp.timing and first is not None:
            replayed = kernel(first)
            for pair in range(plan.timing.min_pairs + 1):
                checked = pair in cp.check_pairs or pair == plan.timing.min_pairs
                stored = dict(first)
                for n, b in buffers.items():
                    if b.draw is not None:
                        draw = RefreshDraw(DRAW_KINDS[b.draw[0]], b.draw[1], b.draw[2])
                        everywhere, stream = np.arange(b.count, dtype=np.uint64), (cp.index << 8) | b.arg
                        stored[n] = (
                            shuffled_values(first[n], plan.refresh_key, pair + 1, stream, everywhere)
                            if draw.kind == "shuffle"
                            else refresh_values(params_dtype(variant, n), draw, plan.refresh_key, pair + 1, stream, everywhere)
                        )
                if checked:
                    for n, b in buffers.items():
                        if b.draw is not None:
                            values = stored[n].copy()
                            if mode == "bad_draw":
                                values[-1] = values[0]
                            values.tofile(plan.outdir / f"c{cp.index}_t{pair}_input_{n}.bin")
                    for impl in ("baseline", "candidate"):
                        outs = kernel(stored)
                        if impl == "candidate" and mode == "replay":
                            outs = {n: v.copy() for n, v in replayed.items()}
                        if impl == "candidate" and mode == "skip_odd" and pair % 2:
                            outs = {n: np.full_like(v, 0xFFFF if v.dtype == np.uint16 else np.nan) for n, v in outs.items()}
                        if impl == "candidate" or plan.dump_baseline:
                            save(outs, f"c{cp.index}_t{pair}_{impl}")
                            say(f"timed {cp.index} {pair} {impl}")
                for impl, us in (("baseline", 100.0), ("candidate", 50.0)):
                    say(f"time {cp.index} {impl} {pair} {us + pair % 3:.4f} {us + 10:.4f} 8.0000")
            say(f"stage {cp.index} warmup 0.001000")
            say(f"stage {cp.index} timed_checks 0.002000")
            say(f"stage {cp.index} timing 0.010000")
            if cp.index == timed_cases[-1]:
                say("timing_done")
                log("timing_done")
                tail_until = time.monotonic() + float(os.environ.get("CM_FAKE_TAIL_S", "0"))
                starts = started_drivers()
                while time.monotonic() < tail_until and starts == started_drivers() < int(os.environ.get("CM_FAKE_DRIVERS", "0")):
                    time.sleep(0.005)
        for d, (directory, purpose) in enumerate(cp.datasets):
            if purpose != "fresh":
                continue
            stored = load(directory)
            save(kernel(stored), f"c{cp.index}_d{d}_baseline_first")
            say(f"output {cp.index} {d} baseline first")
            save(kernel(stored), f"c{cp.index}_d{d}_candidate_after_timing")
            say(f"output {cp.index} {d} candidate after_timing")
        say(f"stage {cp.index} checks 0.020000")
        say(f"stage {cp.index} input_wait 0.004000")
        say(f"case_done {cp.index}")
    say("done")
    log("exit")
    return 0


def params_dtype(variant, name: str) -> str:
    return variant.param(name).dtype


if __name__ == "__main__":
    sys.exit(main())
