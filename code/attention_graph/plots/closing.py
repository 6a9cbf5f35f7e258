"""The figures of the chapter ``book/closing.md``, drawn from the package's own arrays."""

from __future__ import annotations

from .graphs import graph_panels


def plot_fixed_to_computed(graphs: dict, *, highlight: int | None = None):
    """From a fixed graph to a computed one: one panel per model (title → AttentionGraph), stacked.

    The closing figure: the same nodes at the same places, arrows from j to i; with ``highlight``
    only the messages into that node are coloured and labelled with their weights.
    """
    return graph_panels(list(graphs.values()), list(graphs), highlight=highlight, columns=1,
                        panel=3.3, fontsize=10)
