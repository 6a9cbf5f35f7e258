"""The worked example of the source article: Carla, Ana, Bruno and Diego, Q = K = V = X, d = 2.

The article's embeddings were images and are lost; these integer vectors reproduce every number it
publishes (the book's worked-example chapter shows that any choice doing so has the same Gram matrix
X Xᵀ, so the same weights).
"""

from __future__ import annotations

import numpy as np

from .attention import attention
from .graph import AttentionGraph

__all__ = ["PEOPLE", "embeddings", "path_adjacency", "attention_layer"]

PEOPLE: tuple[str, ...] = ("Carla", "Ana", "Bruno", "Diego")


def embeddings() -> np.ndarray:
    """X, one row per person in the order of ``PEOPLE``. Shape (4, 2)."""
    return np.array([[0.0, 1.0],  # Carla
                     [1.0, 0.0],  # Ana
                     [1.0, 1.0],  # Bruno
                     [1.0, -1.0]])  # Diego  -> (4, 2)


def path_adjacency() -> np.ndarray:
    """A of the path Carla – Ana – Bruno – Diego (part 9 of the series), 0/1, no self-loops. (4, 4)."""
    A = np.zeros((4, 4))  # (n, n)
    for a, b in [(0, 1), (1, 2), (2, 3)]:
        A[a, b] = A[b, a] = 1.0
    return A


def attention_layer() -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(X Xᵀ/√2) X and the attention graph with W as adjacency (identity projections)."""
    X = embeddings()  # (4, 2)
    Y, W = attention(X, X, X)  # (4, 2), (4, 4)
    return Y, AttentionGraph(W, PEOPLE)
