"""The graph's nodes, one module each: baseline, plan, code, flags, compile, verify, debug, profile,
filter, round_end, finish. Each exposes `run(state, deps) -> dict` (the state update)."""
