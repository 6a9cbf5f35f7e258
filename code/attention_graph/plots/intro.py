"""The figures of the chapter ``book/intro.md``, drawn from the package's own arrays."""

from __future__ import annotations

from .graphs import graph_panels


def plot_fixed_and_computed(fixed, computed, *, titles=("fixed: the path", "computed: attention"),
                            highlight: int | None = None, pair: tuple[int, int] | None = None):
    """Two attention graphs of the same nodes, one above the other, at the same positions.

    The book's first figure: a GCN's fixed adjacency on the article's path (top) and the complete
    graph whose weights one attention layer computes from the input (bottom). Arrows run from j to
    i; with ``highlight`` = i only the messages into node i are coloured and
    labelled with their weights (all of them otherwise); with ``pair`` = (a, b) the two arcs between
    a and b are drawn in orange, each labelled with its weight (the fixed graph may lack them).
    """
    if fixed.labels != computed.labels:
        raise ValueError(f"fixed and computed must have the same nodes; got {fixed.labels} "
                         f"and {computed.labels}")
    return graph_panels([fixed, computed], titles, highlight=highlight, pair=pair, columns=1)
