"""Benchmark: the sinks chapter's model with and without a gate. ``python -m attention_graph.bench gated``.

The chapter ``book/differential.md`` reads the first token's out-strength after training the sinks
chapter's one-layer causal model from several seeds, with a sigmoid gate on the attention's output
and without (the run without is the sinks chapter's, bit for bit). Training them all takes longer
than a page's 20 s, so it runs here and the page plots the record. Seeded and bit-reproducible
(NumPy only); only the seconds depend on the machine.
"""

from __future__ import annotations

import time

from .. import differential

SEEDS, STEPS = 8, 300


def benchmark(quick: bool) -> dict:
    """:func:`attention_graph.differential.gate_study` (two seeds, 20 steps when quick)."""
    t0, c0 = time.perf_counter(), time.process_time()
    study = differential.gate_study(seeds=2 if quick else SEEDS, steps=20 if quick else STEPS)
    return {**study, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
