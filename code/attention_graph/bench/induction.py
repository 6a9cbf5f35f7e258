"""Benchmark: induction heads over seeds. ``python -m attention_graph.bench induction``.

The chapter ``book/induction.md`` shows accuracy against steps for several seeds; training them all
takes longer than a page's 20 s, so it runs here and the page plots the record. The results are
seeded and bit-reproducible (NumPy only); only the seconds depend on the machine.
"""

from __future__ import annotations

import time

from .. import induction

SEEDS, STEPS = 5, 300


def benchmark(quick: bool) -> dict:
    """:func:`attention_graph.induction.induction_study` (two seeds, 20 steps when quick)."""
    t0, c0 = time.perf_counter(), time.process_time()
    study = induction.induction_study(seeds=2 if quick else SEEDS, steps=20 if quick else STEPS)
    return {**study, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
