"""The attention graph: the one representation of "attention is a graph" in the package.

Every figure and every graph tool consumes an :class:`AttentionGraph`. Its adjacency matrix is the
weight matrix W, with the book's orientation: ``W[i, j]`` is the weight that node i (a query) gives
node j (a key), drawn as the directed edge i → j. Rows sum to 1 for an attention layer; a fixed graph
(a path, a GCN propagation matrix) is an AttentionGraph too, with whatever rows it has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import as_matrix

__all__ = ["AttentionGraph"]


@dataclass(frozen=True, eq=False)
class AttentionGraph:
    """A weighted directed graph on named nodes: edge i → j carries weight W[i, j]."""

    W: np.ndarray
    labels: tuple[str, ...]

    def __post_init__(self):
        W = as_matrix(self.W, "W", shape_doc="(n, n)")  # (n, n)
        if W.shape[0] != W.shape[1]:
            raise ValueError(f"W must be square (n, n); got shape {W.shape}")
        labels = tuple(str(x) for x in self.labels)
        if len(labels) != W.shape[0]:
            raise ValueError(f"labels must name the {W.shape[0]} nodes; got {len(labels)} labels")
        if (W < 0).any():
            raise ValueError("W must be non-negative: edge weights are attention weights")
        W = W.copy()
        W.setflags(write=False)
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "labels", labels)

    @property
    def n(self) -> int:
        """Number of nodes."""
        return self.W.shape[0]

    def edges(self, tol: float = 0.0) -> list[tuple[int, int, float]]:
        """Every edge (i, j, W[i, j]) with weight above ``tol``, self-loops included, row by row."""
        rows, cols = np.nonzero(self.W > tol)  # (E,), (E,)
        return [(int(a), int(b), float(self.W[a, b])) for a, b in zip(rows, cols)]

    def out_strength(self) -> np.ndarray:
        """Σ_j W[i, j] for each i: 1 for every row of an attention layer. Shape (n,)."""
        return self.W.sum(axis=1)  # (n,)

    def in_strength(self) -> np.ndarray:
        """Σ_i W[i, j] for each j: how much attention node j receives in all. Shape (n,)."""
        return self.W.sum(axis=0)  # (n,)

    def to_networkx(self):
        """A ``networkx.DiGraph`` with an edge i → j of attribute ``weight`` = W[i, j] > 0."""
        import networkx as nx

        G = nx.DiGraph()
        G.add_nodes_from(self.labels)
        G.add_weighted_edges_from((self.labels[a], self.labels[b], w) for a, b, w in self.edges())
        return G
