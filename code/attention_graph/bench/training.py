"""Benchmark: how long the book's training runs take. ``python -m attention_graph.bench training``.

The chapter ``book/training.md`` trains at build time; each run must stay within about 20 s on a
2-core machine. This records the wall and CPU seconds of each run as the chapter calls it, in this
process (BLAS threads as the environment sets them).
"""

from __future__ import annotations

import time

from .. import training

BUDGET_SECONDS = 20.0


def _timed(fn) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}


def benchmark(quick: bool) -> dict:
    """Wall and CPU seconds of each training run of the chapter, against the budget."""
    runs = {f"sequence: {task}": _timed(lambda task=task: training.train_sequence_model(
        task, steps=20 if quick else 200)) for task in ("previous", "reverse")}
    runs["karate: every model, every seed"] = _timed(
        lambda: training.club_study(seeds=2 if quick else 20))
    return {"budget_seconds": BUDGET_SECONDS, "runs": runs,
            "met": all(r["seconds"] < BUDGET_SECONDS for r in runs.values())}
