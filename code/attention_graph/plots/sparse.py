"""The figures of the chapter ``book/sparse.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish, legend_under


def plot_sparse_benchmark(record: dict):
    """Log-log time and peak memory against n, dense against edge attention, from a bench record."""
    res = record["results"]
    rows = res["sizes"]
    dense = [r for r in rows if "dense_seconds" in r]
    n_all = np.array([r["n"] for r in rows])  # (sizes,)
    n_dense = np.array([r["n"] for r in dense])  # (dense sizes,)
    fig, (ax_t, ax_m) = plt.subplots(2, 1, figsize=(3.7, 6.6))
    ax_t.loglog(n_dense, [r["dense_seconds"] for r in dense], "o-", label="dense, masked")
    ax_t.loglog(n_all, [r["sparse_seconds"] for r in rows], "s-", label="edge_attention")
    ax_t.loglog(n_all, [r["csr_seconds"] for r in rows], "^:", label="lean CSR formulation")
    ax_t.set_xlabel(f"nodes n (E = {res['degree']:d} n)")
    ax_t.set_ylabel("seconds per call (median)")
    legend_under(ax_t)
    ax_m.loglog(n_dense, [r["dense_peak_bytes"] for r in dense], "o-", label="dense, masked")
    ax_m.loglog(n_all, [r["sparse_peak_bytes"] for r in rows], "s-", label="edge_attention")
    ax_m.loglog(n_all, 8.0 * n_all**2, ":", color="grey", label="$8n^2$ bytes: one dense W")
    ax_m.set_xlabel("nodes n")
    ax_m.set_ylabel("peak bytes allocated in the call")
    legend_under(ax_m)
    return finish(fig)
