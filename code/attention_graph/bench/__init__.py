"""Benchmarks: ``python -m attention_graph.bench NAME [--quick] [--out PATH]``.

Speed and memory targets are met here, never in timed tests. ``NAME`` is a module of this
subpackage (``backward``) or, for the older benchmarks, a concept module of the package; each
defines ``benchmark(quick: bool) -> dict``. The shared timers and the machine's description live in
:mod:`attention_graph.bench.harness`, the one peak-memory measurement in
:mod:`attention_graph.bench.memory`.
"""

from .harness import DATA, machine, median_time

__all__ = ["DATA", "machine", "median_time"]
