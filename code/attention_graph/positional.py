"""Positions from the graph: Laplacian eigenvectors as positional encodings.

Attention is permutation equivariant: it cannot tell nodes apart by where they sit. A Graph
Transformer injects position through the eigenvectors of the graph Laplacian (Dwivedi & Bresson).
"""

from __future__ import annotations

import numpy as np

from .validation import as_matrix

__all__ = ["normalized_laplacian", "laplacian_pe"]


def normalized_laplacian(A) -> np.ndarray:
    """L = I − D^{-1/2} A D^{-1/2} of a symmetric, non-negative adjacency A  (eq-normalized-laplacian).

    Isolated nodes (degree 0) get a row and column of the identity. Shape (n, n).

    >>> normalized_laplacian([[0, 1], [1, 0]])
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    A = as_matrix(A, "A", shape_doc="(n, n)")  # (n, n)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square (n, n); got shape {A.shape}")
    if (A < 0).any():
        raise ValueError("A must be non-negative")
    if not np.allclose(A, A.T, rtol=0, atol=1e-12):
        raise ValueError("A must be symmetric (an undirected graph) for its Laplacian eigenvectors")
    deg = A.sum(axis=1)  # (n,)
    inv_sqrt = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)  # (n,)
    return np.eye(A.shape[0]) - inv_sqrt[:, None] * A * inv_sqrt[None, :]  # (n, n)


def laplacian_pe(A, k: int) -> np.ndarray:
    """The k eigenvectors of L after the first, by increasing eigenvalue, as columns. Shape (n, k).

    An eigenvector is defined only up to its sign; the sign is fixed so that the entry of largest
    magnitude of each column (the first such entry on ties) is positive, so the encoding is
    deterministic. Within a repeated eigenvalue the basis is whatever ``numpy.linalg.eigh`` returns.
    """
    L = normalized_laplacian(A)  # (n, n)
    n = L.shape[0]
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= n - 1:
        raise ValueError(f"k must be an integer from 1 to n - 1 = {n - 1}; got {k!r}")
    _, vectors = np.linalg.eigh(L)  # (n,), (n, n), eigenvalues ascending
    P = vectors[:, 1:k + 1]  # (n, k)
    pivot = np.argmax(np.abs(P) > np.abs(P).max(axis=0) - 1e-12, axis=0)  # (k,)
    signs = np.sign(P[pivot, np.arange(k)])  # (k,)
    return P * signs  # (n, k)
