"""Linear attention against dense attention: peak memory above the inputs and time over n.

``python -m attention_graph.bench linear [--quick] [--out PATH]``. Every case runs in its own fresh
process with one BLAS thread; d = d_v = 64, float64, seeded inputs, the default feature map
elu(x) + 1. Dense softmax attention is run on the same machine in the same run up to
:data:`DENSE_CAP` (beyond it, its n × n temporaries would take gigabytes of a shared machine). The
chapter ``book/linear_attention.md`` plots the committed record and quotes :data:`TARGETS`.
"""

from __future__ import annotations

import numpy as np

from ..attention import attention
from ..linear_attention import linear_attention, linear_weights
from .harness import ONE_THREAD, fit_loglog_slope, in_subprocess, interleaved_medians
from .memory import peak

# At n = 65,536 and d = d_v = 64: under 200 MiB above the inputs, and log time against log n of
# slope at most 1.1, fitted from n = 1,024 on.
TARGETS = {"n": 65536, "memory_mb": 200, "slope": 1.1, "from_n": 1024}
DENSE_CAP = 4096  # the largest n at which dense attention is run (its W alone is n² × 8 bytes)


def measure_case(method: str, n: int, d: int, seed: int, repeat: int) -> dict:
    """Run one case in THIS process and measure it; meant to run in a fresh process.

    ``above_inputs_mb`` is the resident peak of the call (:func:`memory.peak`) minus the resident
    size just before it, when Q, K, V exist: what the call adds to its inputs. ``traced_mb`` is the
    traced peak of the call alone (temporaries and output).
    """
    MiB = 2**20
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))  # (n, d) each

    def run():
        if method == "dense":
            return attention(Q, K, V)[0]  # (n, d)
        return linear_attention(Q, K, V)  # (n, d)

    measured = peak(run)
    measured = measured._replace(result=None)  # free the output before timing
    times = interleaved_medians({method: run}, repeat=repeat)
    return {"method": method, "n": n, "d": d, "inputs_mb": 3 * n * d * 8 / MiB,
            "above_inputs_mb": (measured.rss_bytes - measured.rss_before_bytes) / MiB,
            "traced_mb": measured.traced_bytes / MiB, "seconds": times[method],
            "cpu_seconds": times[f"{method}_cpu"]}


def compare_case(n: int, d: int, seed: int) -> dict:
    """Linear attention against its own quadratic form D⁻¹ φ(Q) φ(K)ᵀ V, formed explicitly."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))  # (n, d) each
    Y = linear_attention(Q, K, V)  # (n, d)
    Y_quadratic = linear_weights(Q, K) @ V  # (n, d)
    return {"n": n, "d": d, "max_abs_diff": float(np.abs(Y - Y_quadratic).max()),
            "max_abs_y": float(np.abs(Y).max())}


def _case(function: str, **kwargs) -> dict:
    return in_subprocess(__name__, function, env=ONE_THREAD, **kwargs)


def benchmark(quick: bool = False) -> dict:
    """Peak memory above the inputs and time of linear and dense attention over n, and the targets."""
    d, seed = 64, 2020
    if quick:
        sizes, dense_cap, target_n, repeat, compare_n = [256, 512], 256, 512, 1, 256
    else:
        sizes, dense_cap, target_n, repeat, compare_n = [2**k for k in range(10, 17)], DENSE_CAP, TARGETS["n"], 5, 2048
    cases = []
    for n in sizes:
        cases.append(_case("measure_case", method="linear", n=n, d=d, seed=seed, repeat=repeat))
        if n <= dense_cap:
            cases.append(_case("measure_case", method="dense", n=n, d=d, seed=seed, repeat=repeat))
    linear = sorted((c for c in cases if c["method"] == "linear"), key=lambda c: c["n"])
    fit = [c for c in linear if c["n"] >= min(TARGETS["from_n"], sizes[0])]
    slope = fit_loglog_slope([c["n"] for c in fit], [c["seconds"] for c in fit])
    slope_cpu = fit_loglog_slope([c["n"] for c in fit], [c["cpu_seconds"] for c in fit])
    top = next(c for c in linear if c["n"] == target_n)
    return {
        "d": d, "d_v": d, "seed": seed, "dtype": "float64", "threads": 1, "feature_map": "elu(x) + 1",
        "dense_cap": dense_cap,
        "memory_note": "above_inputs_mb: resident peak of the call (VmHWM after a reset) minus the "
                       "resident size just before it, with Q, K, V already made; traced_mb: "
                       "tracemalloc peak of the call alone (temporaries and output)",
        "cases": cases, "equal_to_quadratic": _case("compare_case", n=compare_n, d=d, seed=seed + 1),
        "slope": slope, "slope_cpu": slope_cpu, "slope_from_n": fit[0]["n"],
        "target": {**TARGETS, "n": target_n, "above_inputs_mb": top["above_inputs_mb"],
                   "seconds": top["seconds"], "measured_slope": slope,
                   "met": bool(top["above_inputs_mb"] < TARGETS["memory_mb"] and slope <= TARGETS["slope"]),
                   "dense_matrix_mb": target_n**2 * 8 / 2**20},
    }
