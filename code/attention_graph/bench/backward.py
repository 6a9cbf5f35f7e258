"""Benchmark: the backward pass, dense (:func:`attention_backward`) against blockwise
(:func:`blockwise_attention_backward`). ``python -m attention_graph.bench backward [--quick]``.

Each case runs in a fresh interpreter with one BLAS thread. Memory is measured by
:func:`attention_graph.bench.memory.peak` around the backward call alone, so the inputs Q, K, V, dY
are not counted: ``traced_mb`` (tracemalloc: temporaries and outputs) and ``rss_mb`` (the rise of
the resident set over its size just before the call). Dense cases stop where the (n, n) matrices
would no longer fit comfortably on a shared machine; beyond that the dense peak is extrapolated
from the measured ones as c · n² (stated as extrapolated in the record).
"""

from __future__ import annotations

import time

import numpy as np

from ..backward import attention_backward
from ..blockwise import blockwise_attention_backward
from .harness import ONE_THREAD, in_subprocess
from .memory import peak

TARGET_MB = 400  # the target: blockwise backward at n = 16,384, d = 64, float64, block 256


def measure_case(method: str, n: int, d: int, block_size: int, seed: int,
                 check_rows: int = 0) -> dict:
    """One backward call in THIS process (meant for a fresh one): peak memory and seconds."""
    rng = np.random.default_rng(seed)
    Q, K, V, dY = (rng.standard_normal((n, d)) for _ in range(4))  # (n, d) each
    if method == "dense":
        def run():
            return attention_backward(Q, K, V, dY)
    else:
        def run():
            return blockwise_attention_backward(Q, K, V, dY, block_size)
    t0 = time.perf_counter()
    measured = peak(run)
    seconds = time.perf_counter() - t0
    out = {"method": method, "n": n, "d": d, "block_size": block_size if method != "dense" else None,
           "traced_mb": measured.traced_bytes / 2**20, "seconds": seconds,
           "inputs_mb": 4 * n * d * 8 / 2**20,
           "rss_mb": (None if measured.rss_bytes is None
                      else (measured.rss_bytes - measured.rss_before_bytes) / 2**20)}
    if check_rows:
        rows = np.sort(rng.choice(n, size=min(check_rows, n), replace=False))  # (r,)
        dQ_rows = attention_backward(Q[rows], K, V, dY[rows])[0]  # (r, d): row i needs only q_i
        out["check_rows"] = int(rows.size)
        out["max_abs_diff_dq_rows"] = float(np.abs(measured.result[0][rows] - dQ_rows).max())
    return out


def compare_case(n: int, d: int, block_size: int, seed: int) -> dict:
    """Dense and blockwise backward on the same inputs: the largest difference of dQ, dK, dV."""
    rng = np.random.default_rng(seed)
    Q, K, V, dY = (rng.standard_normal((n, d)) for _ in range(4))  # (n, d) each
    dense = attention_backward(Q, K, V, dY)
    block = blockwise_attention_backward(Q, K, V, dY, block_size)
    return {"n": n, "d": d, "block_size": block_size,
            "max_abs_diff": max(float(np.abs(a - b).max()) for a, b in zip(dense, block)),
            "max_abs_grad": max(float(np.abs(a).max()) for a in dense)}


def _fresh(function: str, **kwargs) -> dict:
    """``function(**kwargs)`` of this module in a fresh interpreter with one BLAS thread."""
    return in_subprocess(__name__, function, env=ONE_THREAD, **kwargs)


def benchmark(quick: bool) -> dict:
    """Peak memory and time of the dense and the blockwise backward over n; the memory target."""
    d, seed, block = 64, 2023, 256
    if quick:
        sizes, dense_sizes, target_n, compare_n, block = [256], [256], 256, 256, 32
    else:
        sizes, dense_sizes = [1024, 2048, 4096, 8192, 16384], [1024, 2048, 4096, 8192]
        target_n, compare_n = 16384, 2048
    cases = [_fresh("measure_case", method="dense", n=n, d=d, block_size=0, seed=seed)
             for n in dense_sizes]
    cases += [_fresh("measure_case", method="blockwise", n=n, d=d, block_size=block, seed=seed,
                     check_rows=32 if n == target_n else 0) for n in sizes]
    dense = [c for c in cases if c["method"] == "dense"]
    # Dense peak per n²: the largest measured case, in bytes per entry of an (n, n) matrix.
    per_entry = dense[-1]["traced_mb"] * 2**20 / dense[-1]["n"] ** 2
    target = next(c for c in cases if c["method"] == "blockwise" and c["n"] == target_n)
    return {
        "d": d, "seed": seed, "dtype": "float64", "block_size": block, "threads": 1,
        "memory_note": "traced_mb: tracemalloc peak of the backward call (temporaries and "
                       "outputs, not the inputs); rss_mb: rise of the resident set during the call",
        "cases": cases,
        "equal_to_dense": _fresh("compare_case", n=compare_n, d=d, block_size=block,
                                 seed=seed + 1),
        "target": {"n": target_n, "d": d, "target_mb": TARGET_MB, "traced_mb": target["traced_mb"],
                   "rss_mb": target["rss_mb"], "seconds": target["seconds"],
                   "met": max(target["traced_mb"], target["rss_mb"] or 0.0) < TARGET_MB,
                   "dense_bytes_per_entry": per_entry,
                   "dense_extrapolated_mb": per_entry * target_n**2 / 2**20,
                   "dense_extrapolated_from_n": dense[-1]["n"],
                   "max_abs_diff_dq_rows": target["max_abs_diff_dq_rows"],
                   "check_rows": target["check_rows"]},
    }
