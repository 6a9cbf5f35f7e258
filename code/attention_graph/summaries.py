"""The numbers a page quotes from a benchmark record, as plain Python values for ``{glue:text}``.

A benchmark (:mod:`attention_graph.bench`) writes a JSON record; a page reads it with
``bench.record(name)`` and passes it here. Nothing is measured or computed anew: each value is read
from the record, or is a count of its sizes (:func:`attention_graph.sparse.cost_counts`).
"""

from __future__ import annotations

from .sparse import cost_counts

__all__ = ["SPARSE_FORMULATIONS", "sparse_benchmark_summary"]


SPARSE_FORMULATIONS = {
    "csr": "the lean CSR formulation (graph given as a SciPy CSR matrix, no checks)",
    "unsorted_at": "the ufunc.at formulation (edges in any order, no checks)",
}


def sparse_benchmark_summary(record: dict) -> dict:
    """The numbers the chapter quotes from a benchmark record, as plain Python values.

    Memory is counted in bytes, so it is said in binary units: the ``*_mb`` values are MiB (2²⁰
    bytes) and the ``*_gb`` values GiB (2³⁰ bytes).
    """
    res, mach = record["results"], record["machine"]
    rows = res["sizes"]
    top, flag = rows[-1], res["flagship"]
    dense = [r for r in rows if "dense_seconds" in r]
    biggest_dense = dense[-1]
    costs = cost_counts(top["n"], top["E"], res["d"])
    return {
        "quick": bool(record["quick"]),
        "degree": int(res["degree"]), "d": int(res["d"]), "repeat": int(res["repeat"]),
        "n_min": int(rows[0]["n"]), "n_max": int(top["n"]), "n_dense_max": int(biggest_dense["n"]),
        "dense_over_sparse_at_dense_max": biggest_dense["dense_seconds"] / biggest_dense["sparse_seconds"],
        "dense_peak_over_one_w": biggest_dense["dense_peak_bytes"] / (8 * biggest_dense["n"] ** 2),
        "block_buffer_mb": 2 * res["chunk"] * res["d"] * 8 / 2**20,
        "slope": float(res["slope"]["value"]), "slope_cpu": float(res["slope"]["value_cpu"]),
        "slope_E_min": int(res["slope"]["E_min"]), "slope_E_max": int(res["slope"]["E_max"]),
        "slope_points": int(res["slope"]["points"]),
        "ratio": float(res["ratio"]["value"]), "ratio_cpu": float(res["ratio"]["value_cpu"]),
        "ratio_E": int(res["ratio"]["E"]), "best": SPARSE_FORMULATIONS[res["ratio"]["best"]],
        "sparse_seconds_top": float(top["sparse_seconds"]),
        "best_seconds_top": float(top[f"{res['ratio']['best']}_seconds"]),
        "sorted_seconds_top": float(top["sparse_sorted_input_seconds"]),
        "gather_seconds_top": float(top["gather_seconds"]),
        "call_peak_mb": top["sparse_peak_bytes"] / 2**20,
        "input_mb": top["input_bytes"] / 2**20,
        "flag_n": int(flag["n"]), "flag_E": int(flag["E"]), "flag_d": int(flag["d"]),
        "process_peak_mb": flag["process_peak_bytes"] / 2**20,
        "call_rss_peak_mb": flag["call_peak_rss_bytes"] / 2**20,
        "rss_before_mb": flag["rss_before_bytes"] / 2**20,
        "dense_w_gb": costs["dense_weight_bytes"] / 2**30,
        "cpus": int(mach["cpus"]), "date": str(mach["date"]),
        "versions": f"Python {mach['python']}, NumPy {mach['numpy']}, SciPy {mach['scipy']}",
    }
