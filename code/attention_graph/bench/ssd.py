"""The state-space duality's two forms, time and memory over n. ``python -m attention_graph.bench ssd``.

Every case runs in its own fresh process with one BLAS thread; float64, seeded inputs, state size
N = 32 and p = 32 input columns, decays drawn from (0.9, 1). The recurrent form runs to
:data:`TARGETS` ``["n"]``; the quadratic form forms the n × n matrix Π ∘ C Bᵀ and is run up to
:data:`QUADRATIC_CAP` (at twice that its two n × n arrays alone would take 4 GiB of a shared
machine). The chapter ``book/state_spaces.md`` plots the committed record.
"""

from __future__ import annotations

import numpy as np

from ..state_spaces import ssd
from .harness import ONE_THREAD, fit_loglog_slope, in_subprocess, interleaved_medians
from .memory import peak

# Up to n = 65,536: log time against log n of slope at most 1.1 for the recurrent form, from n = 1,024.
TARGETS = {"n": 65536, "slope": 1.1, "from_n": 1024}
QUADRATIC_CAP = 8192  # the largest n at which the quadratic form is run (two n × n float64 arrays)
N_STATE, P = 32, 32


def inputs(n: int, seed: int):
    """X (n, p), a (n,), B and C (n, N), seeded."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, P))  # (n, p)
    a = rng.uniform(0.9, 1.0, n)  # (n,)
    B, C = (rng.standard_normal((n, N_STATE)) / np.sqrt(N_STATE) for _ in range(2))  # (n, N) each
    return X, a, B, C


def measure_case(form: str, n: int, seed: int, repeat: int) -> dict:
    """Run one case in THIS process and measure it; meant to run in a fresh process."""
    MiB = 2**20
    X, a, B, C = inputs(n, seed)

    def run():
        return ssd(X, a, B, C, form=form)  # (n, p)

    measured = peak(run)._replace(result=None)
    times = interleaved_medians({form: run}, repeat=repeat)
    return {"form": form, "n": n,
            "above_inputs_mb": (measured.rss_bytes - measured.rss_before_bytes) / MiB,
            "traced_mb": measured.traced_bytes / MiB, "seconds": times[form], "cpu_seconds": times[f"{form}_cpu"]}


def compare_case(n: int, seed: int) -> dict:
    """The two forms on the same inputs: their largest difference, and the largest output."""
    X, a, B, C = inputs(n, seed)
    Y_r, Y_q = ssd(X, a, B, C, "recurrent"), ssd(X, a, B, C, "quadratic")  # (n, p) each
    return {"n": n, "max_abs_diff": float(np.abs(Y_r - Y_q).max()), "max_abs_y": float(np.abs(Y_r).max())}


def _case(function: str, **kwargs) -> dict:
    return in_subprocess(__name__, function, env=ONE_THREAD, **kwargs)


def benchmark(quick: bool = False) -> dict:
    """Time and memory of the recurrent and the quadratic form over n, and the slope target."""
    seed = 2024
    if quick:
        sizes, cap, repeat, compare_n = [256, 512], 512, 1, 256
    else:
        sizes, cap, repeat, compare_n = [2**k for k in range(10, 17)], QUADRATIC_CAP, 3, 2048
    cases = []
    for n in sizes:
        cases.append(_case("measure_case", form="recurrent", n=n, seed=seed, repeat=repeat))
        if n <= cap:
            cases.append(_case("measure_case", form="quadratic", n=n, seed=seed, repeat=repeat))
    rec = sorted((c for c in cases if c["form"] == "recurrent"), key=lambda c: c["n"])
    fit = [c for c in rec if c["n"] >= min(TARGETS["from_n"], sizes[0])]
    slope = fit_loglog_slope([c["n"] for c in fit], [c["seconds"] for c in fit])
    slope_cpu = fit_loglog_slope([c["n"] for c in fit], [c["cpu_seconds"] for c in fit])
    quad = sorted((c for c in cases if c["form"] == "quadratic"), key=lambda c: c["n"])
    slope_q = fit_loglog_slope([c["n"] for c in quad], [c["seconds"] for c in quad])
    return {"N": N_STATE, "p": P, "seed": seed, "dtype": "float64", "threads": 1, "decays": "uniform in (0.9, 1)",
            "quadratic_cap": cap, "cases": cases, "equal": _case("compare_case", n=compare_n, seed=seed + 1),
            "slope_recurrent": slope, "slope_recurrent_cpu": slope_cpu, "slope_quadratic": slope_q,
            "slope_from_n": fit[0]["n"],
            "target": {**TARGETS, "measured_slope": slope, "measured_slope_cpu": slope_cpu,
                       "met": bool(slope <= TARGETS["slope"]), "met_cpu": bool(slope_cpu <= TARGETS["slope"]),
                       "top_n": rec[-1]["n"], "top_seconds": rec[-1]["seconds"],
                       "quadratic_matrix_mb_at_top": rec[-1]["n"] ** 2 * 8 / 2**20}}
