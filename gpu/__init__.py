"""GPU work: compile, evaluate and profile kernels, behind one `Evaluator` protocol (gpu/protocol.py).

Implementations: the real harness on this machine (local.py), a per-job cache around any evaluator (cache.py),
the service's pool of GPU slots around one (locked.py; inventory.py lists the machine's GPUs), a Ray cluster
(ray/), and the FAKE GPU test double (fake.py). Layers: settings < bench_tasks < profiling < gpu < graph < app.
"""
