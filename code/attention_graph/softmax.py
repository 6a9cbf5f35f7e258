"""Softmax, row by row: scores become weights that are positive and sum to 1 in every row."""

from __future__ import annotations

import numpy as np

from .validation import as_mask, as_matrix

__all__ = ["softmax"]


def softmax(S, mask=None) -> np.ndarray:
    """W_ij = exp(S_ij − m_i) / Σ_l exp(S_il − m_i), m_i = max_l S_il  (eq-softmax).

    ``S`` is (n_q, n_k). ``mask`` is boolean (n_q, n_k), True where query i may attend to key j;
    masked entries get weight exactly 0 and every row must allow at least one key. Subtracting the
    row maximum changes nothing mathematically and keeps ``exp`` from overflowing, so scores of
    magnitude up to 1e300 give correct finite weights.

    >>> softmax([[0.0, 0.0], [1000.0, 0.0]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    >>> softmax([[1.0, 2.0]], mask=[[True, False]])
    array([[1., 0.]])
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    allowed = np.ones(S.shape, dtype=bool) if mask is None else as_mask(mask, "mask", S.shape)
    if S.shape[1] == 0 and S.shape[0] > 0:
        raise ValueError("S has no columns: a query with no key to attend to has no softmax")
    with np.errstate(over="ignore", invalid="ignore"):
        m = np.max(np.where(allowed, S, -np.inf), axis=1, keepdims=True, initial=-np.inf)  # (n_q, 1)
        Z = np.where(allowed, S - m, -np.inf)  # (n_q, n_k), every entry <= 0
        E = np.exp(Z)  # (n_q, n_k), masked entries exactly 0
    return E / E.sum(axis=1, keepdims=True)  # (n_q, n_k)
