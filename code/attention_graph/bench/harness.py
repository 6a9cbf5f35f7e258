"""What every benchmark shares: the machine's description, timers, fresh processes, fits.

Speed and memory targets are met in benchmarks, never in timed tests. Timings are medians of
repeated runs; memory is measured by :func:`attention_graph.bench.memory.peak`.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np
import scipy
from threadpoolctl import threadpool_info

# One BLAS thread in the fresh processes, so that a case measures the algorithm, not the pool.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def machine() -> dict:
    """Where and with what a benchmark ran."""
    blas = [{k: p.get(k) for k in ("internal_api", "version", "num_threads")}
            for p in threadpool_info()]
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
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
    return float(np.median(times))


def interleaved_medians(fns: dict, repeat: int, min_seconds: float = 0.05) -> dict[str, float]:
    """Median seconds per call of each function, timed in turn in every one of ``repeat`` rounds.

    Returns ``{name: wall seconds, name + "_cpu": CPU seconds of this process}``. Each function is
    first called once (warm-up) and given a number of calls per round that lasts at least
    ``min_seconds`` (as ``timeit`` does), so tiny sizes are not dominated by the clock or by one
    preemption. Interleaving makes every function see the same load, so their ratio is fair on a
    shared machine; the CPU time does not count the time the process waited for a core.
    """
    number = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        number[name] = max(1, math.ceil(min_seconds / max(time.perf_counter() - t0, 1e-9)))
    wall = {name: [] for name in fns}
    cpu = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(number[name]):
                fn()
            wall[name].append((time.perf_counter() - t0) / number[name])
            cpu[name].append((time.process_time() - c0) / number[name])
    out = {name: float(np.median(ts)) for name, ts in wall.items()}
    out.update({f"{name}_cpu": float(np.median(ts)) for name, ts in cpu.items()})
    return out


def in_subprocess(module: str, function: str, *, env: dict | None = None, **kwargs) -> dict:
    """``module.function(**kwargs)`` in a fresh interpreter; its JSON-able result.

    A fresh process has only the benchmark's own memory, so its resident peak means something.
    """
    code = (f"import json, sys; from {module} import {function} as f; "
            "print(json.dumps(f(**json.loads(sys.argv[1]))))")
    run = subprocess.run([sys.executable, "-c", code, json.dumps(kwargs)], capture_output=True,
                         text=True, env={**os.environ, **(env or {})}, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"benchmark case {module}.{function}({kwargs}) failed:\n"
                           f"{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def fit_loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x.

    >>> round(fit_loglog_slope([1, 10, 100], [2, 20, 200]), 12)
    1.0
    """
    x, y = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))  # (k,), (k,)
    return float(np.polyfit(x, y, 1)[0])
