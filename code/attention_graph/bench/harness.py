"""Benchmarks: ``python -m attention_graph.bench NAME [--quick]``.

Speed and memory targets are met here, never in timed tests. ``NAME`` is a concept module of the
package that defines ``benchmark(quick: bool) -> dict``; the record, with the machine and the versions
it ran on, is written to ``book/data/bench_NAME.json``, which the chapter plots (so the book's build
stays deterministic). Timings are medians of repeated runs; memory is the peak measured by the module.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[3] / "book" / "data"


def machine() -> dict:
    """Where and with what a benchmark ran."""
    import numpy
    import scipy

    try:
        from threadpoolctl import threadpool_info
        blas = [{k: p.get(k) for k in ("internal_api", "version", "num_threads")}
                for p in threadpool_info()]
    except ImportError:  # pragma: no cover
        blas = []
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "blas": blas,
        "date": time.strftime("%Y-%m-%d"),
    }


def median_time(fn, repeat: int = 5) -> float:
    """Median wall-clock seconds of ``repeat`` calls of ``fn()`` after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_graph.bench", description=__doc__)
    parser.add_argument("name", help="a module of attention_graph with a benchmark() function")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    parser.add_argument("--out", type=Path, default=None, help="where to write the JSON record")
    args = parser.parse_args(argv)
    module = importlib.import_module(f"attention_graph.{args.name}")
    if not hasattr(module, "benchmark"):
        parser.error(f"attention_graph.{args.name} has no benchmark()")
    record = {"benchmark": args.name, "quick": args.quick, "machine": machine(),
              "results": module.benchmark(quick=args.quick)}
    # A quick run never overwrites the committed record that the chapter plots.
    default = (DATA.parents[1] / "_build" / f"bench_{args.name}_quick.json" if args.quick
               else DATA / f"bench_{args.name}.json")
    out = args.out or default
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
