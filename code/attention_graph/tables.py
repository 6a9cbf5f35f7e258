"""Markdown tables and page summaries the chapters glue (presentation only: no computation)."""

from __future__ import annotations

import numpy as np

__all__ = ["club_accuracy_table", "club_readout_table"]


def club_accuracy_table(accuracy: dict, fmt: str = "{:.3f}") -> str:
    """One row per model: mean, standard deviation, lowest and highest accuracy over the seeds."""
    rows = ["| model | mean | standard deviation | lowest | highest |",
            "| --- | --- | --- | --- | --- |"]
    for name, values in accuracy.items():
        v = np.asarray(values, dtype=float)  # (seeds,)
        cells = " | ".join(fmt.format(x) for x in (v.mean(), v.std(), v.min(), v.max()))
        rows.append(f"| {name} | {cells} |")
    return "\n".join(rows)


def club_readout_table(summary: dict, fmt: str = "{:.3f}") -> str:
    """One row per (model, attention, before/after): the graph tools' readouts, seed means."""
    rows = ["| model | attention | training | mass on own faction | ARI of the spectral split "
            "| PageRank of member 0 | PageRank of member 33 |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for (kind, what, when), r in summary.items():
        cells = " | ".join(fmt.format(r[k]) for k in ("same_faction", "ari", "pagerank_0",
                                                      "pagerank_33"))
        rows.append(f"| {kind} | {what} | {when} | {cells} |")
    return "\n".join(rows)
