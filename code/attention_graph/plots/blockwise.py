"""The figures of the chapter ``book/blockwise.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from .style import finish, legend_under


def plot_blockwise_scaling(results: dict):
    """Peak memory and time of dense and blockwise attention against n, from the blockwise benchmark.

    ``results`` is the ``"results"`` entry of ``attention_graph/data/bench_blockwise.json``. The memory panel
    marks the target and the size of one dense n × n float64 matrix.
    """
    fig, (ax_mem, ax_time) = plt.subplots(2, 1, figsize=(3.7, 6.4))
    for method, marker in (("dense", "o-"), ("blockwise", "s-")):
        cases = sorted((c for c in results["cases"] if c["method"] == method), key=lambda c: c["n"])
        n = [c["n"] for c in cases]
        label = method if method == "dense" else f"blockwise, block size {results['block_size']}"
        ax_mem.loglog(n, [c["rss_mb"] for c in cases], marker, label=label)
        ax_time.loglog(n, [c["seconds"] for c in cases], marker, label=label)
    n_all = np.array(sorted({c["n"] for c in results["cases"]}), dtype=float)  # (sizes,)
    ax_mem.loglog(n_all, n_all**2 * 8 / 2**20, ":", color="grey", label=r"one $n\times n$ float64 matrix")
    target = results["target"]
    ax_mem.axhline(target["target_mb"], color="tab:red", lw=0.8, ls="--",
                   label=f"target at n = {target['n']}")
    ax_mem.set_xlabel("n (queries = keys)")
    ax_mem.set_ylabel("peak memory over idle (MiB)")
    legend_under(ax_mem)
    ax_time.set_xlabel("n (queries = keys)")
    ax_time.set_ylabel("median time (s)")
    legend_under(ax_time)
    for ax in (ax_mem, ax_time):
        ax.set_xticks(n_all, [str(int(x)) for x in n_all])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())  # y keeps its labels
    return finish(fig)


def plot_block_size_sweep(results: dict):
    """Peak memory and time of blockwise attention against the block size, at one n."""
    sweep = results["block_size_sweep"]
    cases = sorted(sweep["cases"], key=lambda c: c["block_size"])
    b = [c["block_size"] for c in cases]
    # Drawn as Fig. "blockwise scaling" is: memory left, time right, both log-log, blockwise in the
    # second colour of the cycle with squares.
    fig, (ax_mem, ax_time) = plt.subplots(2, 1, figsize=(3.7, 5.6))
    color = plt.rcParams["axes.prop_cycle"].by_key()["color"][1]
    ax_mem.loglog(b, [c["traced_mb"] for c in cases], "s-", color=color)
    ax_time.loglog(b, [c["seconds"] for c in cases], "s-", color=color)
    ax_mem.set_ylabel("peak memory of the call (MiB)")
    ax_time.set_ylabel("median time (s)")
    for ax in (ax_mem, ax_time):
        ax.set_xlabel(f"block size (keys per block), n = {sweep['n']}", fontsize=9)
        ax.set_xticks(b, [str(x) for x in b], fontsize=8)
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())  # y keeps its labels
    return finish(fig)
