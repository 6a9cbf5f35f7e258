"""Blockwise attention against dense attention: peak memory and time over n, and a block-size sweep.

``python -m attention_graph.bench blockwise [--quick] [--out PATH]``. Every case runs in its own
fresh process with one BLAS thread; d = 64, float64, seeded inputs. The chapter
``book/blockwise.md`` plots the committed record and quotes :data:`TARGET_MB`.
"""

from __future__ import annotations

import numpy as np

from ..attention import attention
from ..blockwise import blockwise_attention
from .harness import ONE_THREAD, in_subprocess, median_time
from .memory import peak

TARGET_MB = 300  # the memory target of the benchmark at n = 16,384, d = 64 (float64), in MiB


def measure_case(method: str, n: int, d: int, block_size: int, seed: int, repeat: int,
                 check_rows: int = 0) -> dict:
    """Run one case in THIS process and measure it; meant to run in a fresh process.

    ``rss_mb`` is the resident peak of the call (:func:`memory.peak`) minus the resident size of
    the process before the inputs were made (an interpreter with NumPy and this package imported),
    so it counts the inputs Q, K, V (``inputs_mb``), every temporary and the output; ``traced_mb``
    is the traced peak of the call alone: the temporaries and the output, without the inputs.
    """
    MiB = 2**20
    rng = np.random.default_rng(seed)
    baseline = peak(lambda: None).rss_before_bytes  # everything imported, nothing allocated yet
    Q = rng.standard_normal((n, d))  # (n, d)
    K = rng.standard_normal((n, d))  # (n, d)
    V = rng.standard_normal((n, d))  # (n, d)
    if method == "dense":
        def run():
            return attention(Q, K, V)[0]  # (n, d)
    else:
        def run():
            return blockwise_attention(Q, K, V, block_size)  # (n, d)
    measured = peak(run)
    Y = measured.result  # (n, d)
    out = {"method": method, "n": n, "d": d, "block_size": block_size if method != "dense" else None,
           "rss_mb": (measured.rss_bytes - baseline) / MiB,
           "inputs_mb": (measured.rss_before_bytes - baseline) / MiB,
           "traced_mb": measured.traced_bytes / MiB, "baseline_mb": baseline / MiB}
    if check_rows:
        rows = np.sort(rng.choice(n, size=min(check_rows, n), replace=False))  # (r,)
        Y_dense = attention(Q[rows], K, V)[0]  # (r, d): dense on a few rows fits at any n
        out["check_rows"] = int(rows.size)
        out["max_abs_diff_rows"] = float(np.abs(Y[rows] - Y_dense).max())
    del Y, measured
    out["seconds"] = median_time(run, repeat=repeat)
    return out


def compare_case(n: int, d: int, block_size: int, seed: int) -> dict:
    """Dense and blockwise on the same inputs: the largest entrywise difference of Y."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))  # (n, d) each
    Y_dense = attention(Q, K, V)[0]  # (n, d)
    Y_block = blockwise_attention(Q, K, V, block_size)  # (n, d)
    return {"n": n, "d": d, "block_size": block_size,
            "max_abs_diff": float(np.abs(Y_dense - Y_block).max()),
            "max_abs_y": float(np.abs(Y_dense).max())}


def _case(function: str, **kwargs) -> dict:
    return in_subprocess(__name__, function, env=ONE_THREAD, **kwargs)


def benchmark(quick: bool = False) -> dict:
    """Peak memory and time of dense against blockwise attention over n, and the memory target."""
    d, seed = 64, 2018
    if quick:
        sizes, dense_max, block, target_n = [256], 256, 64, 256
        sweep_n, sweep, repeat = 256, [16], 1
    else:
        sizes, dense_max, block, target_n = [1024, 2048, 4096, 8192, 16384], 8192, 256, 16384
        sweep_n, sweep, repeat = 4096, [32, 128, 512, 2048], 3
    cases = []
    for n in sizes:
        if n <= dense_max:
            cases.append(_case("measure_case", method="dense", n=n, d=d, block_size=0,
                               seed=seed, repeat=repeat))
        cases.append(_case("measure_case", method="blockwise", n=n, d=d, block_size=block,
                           seed=seed, repeat=repeat, check_rows=64 if n == target_n else 0))
    block_sizes = [_case("measure_case", method="blockwise", n=sweep_n, d=d, block_size=b,
                         seed=seed, repeat=repeat) for b in sweep]
    equal = _case("compare_case", n=dense_max, d=d, block_size=block, seed=seed + 1)
    target = next(c for c in cases if c["method"] == "blockwise" and c["n"] == target_n)
    return {
        "d": d, "seed": seed, "dtype": "float64", "block_size": block, "threads": 1,
        "memory_note": "rss_mb: resident peak of the call (VmHWM after a reset) minus the resident "
                       "size of an interpreter with numpy and the package imported (includes the "
                       "inputs Q, K, V); traced_mb: tracemalloc peak of the call alone (temporaries "
                       "and output)",
        "cases": cases, "block_size_sweep": {"n": sweep_n, "cases": block_sizes},
        "equal_to_dense": equal,
        "target": {"n": target_n, "d": d, "target_mb": TARGET_MB, "rss_mb": target["rss_mb"],
                   "traced_mb": target["traced_mb"], "met": target["rss_mb"] < TARGET_MB,
                   "dense_matrix_mb": target_n**2 * 8 / 2**20,
                   "max_abs_diff_rows": target["max_abs_diff_rows"],
                   "check_rows": target["check_rows"]},
    }
