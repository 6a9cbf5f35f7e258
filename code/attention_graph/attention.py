"""The whole layer: Attention(Q, K, V) = softmax(Q Kᵀ / √d) V, returned with its weight matrix."""

from __future__ import annotations

import numpy as np

from .scores import scaled_scores
from .softmax import softmax
from .validation import as_matrix, check_same

__all__ = ["attention", "weighted_sum"]


def weighted_sum(W, V) -> np.ndarray:
    """Y = W V: row i of Y is Σ_j W_ij v_j  (eq-weighted-sum).

    ``W`` is (n_q, n_k), ``V`` is (n_k, d_v); the result is (n_q, d_v).
    """
    W = as_matrix(W, "W", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    V = as_matrix(V, "V", shape_doc="(n_k, d_v)")  # (n_k, d_v)
    check_same(W.shape[1], V.shape[0], "W must have one column per row of V (n_k)")
    return W @ V  # (n_q, d_v)


def attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Y = softmax(Q Kᵀ / √d) V, returned as (Y, W)  (eq-attention).

    ``Q`` is (n_q, d), ``K`` is (n_k, d), ``V`` is (n_k, d_v); ``mask`` as in :func:`softmax`.
    Returns ``Y`` of shape (n_q, d_v) and the weight matrix ``W`` of shape (n_q, n_k), whose row i
    says how much query i attends to each key: the adjacency matrix of the attention graph.

    >>> Y, W = attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [3.0]])
    >>> W.round(3), Y.round(3)
    (array([[0.67, 0.33]]), array([[1.66]]))
    """
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    V = as_matrix(V, "V", shape_doc="(n_k, d_v)")  # (n_k, d_v)
    check_same(K.shape[0], V.shape[0], "K and V must have the same number of rows (n_k)")
    W = softmax(scaled_scores(Q, K), mask)  # (n_q, n_k)
    return weighted_sum(W, V), W
