"""Queries, keys and values: Q = X W_Q, K = X W_K, V = X W_V.

Each row x_i of X (one element: a word, a person, a node) is projected three times. Its query
q_i = x_i W_Q says what element i is looking for, its key k_i = x_i W_K what it offers to the
queries of others, its value v_i = x_i W_V what it carries to whoever attends to it. The chapter
``book/qkv.md`` shows the shapes, the identity special case of the worked example, and why sharing
one projection for queries and keys makes the scores symmetric; the SymPy checks behind its labels
are registered here.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .registry import derivation, symbol_matrix
from .scores import scaled_scores
from .validation import as_int, as_matrix, as_rng, check_same

__all__ = ["project", "identity_projections", "random_projections", "rotation"]


def project(X, W_Q, W_K, W_V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q = X W_Q, K = X W_K, V = X W_V, returned as (Q, K, V)  (eq-qkv).

    ``X`` is (n, d_model), one row per element; ``W_Q`` and ``W_K`` are (d_model, d) with the same
    d (a query is compared with a key); ``W_V`` is (d_model, d_v). Returns Q (n, d), K (n, d) and
    V (n, d_v): row i of each is what element i asks, offers and carries.

    >>> Q, K, V = project([[1.0, 2.0]], [[1.0], [0.0]], [[0.0], [1.0]], [[1.0, 1.0], [1.0, -1.0]])
    >>> Q, K, V
    (array([[1.]]), array([[2.]]), array([[ 3., -1.]]))
    """
    X = as_matrix(X, "X", shape_doc="(n, d_model)")  # (n, d_model)
    W_Q = as_matrix(W_Q, "W_Q", shape_doc="(d_model, d)")  # (d_model, d)
    W_K = as_matrix(W_K, "W_K", shape_doc="(d_model, d)")  # (d_model, d)
    W_V = as_matrix(W_V, "W_V", shape_doc="(d_model, d_v)")  # (d_model, d_v)
    for name, M in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        check_same(X.shape[1], M.shape[0],
                   f"{name} must have one row per column of X (d_model)")
    check_same(W_Q.shape[1], W_K.shape[1],
               "W_Q and W_K must have the same number of columns d (queries meet keys)")
    with np.errstate(over="ignore", invalid="ignore"):
        Q = X @ W_Q  # (n, d)
        K = X @ W_K  # (n, d)
        V = X @ W_V  # (n, d_v)
    for name, M in (("Q", Q), ("K", K), ("V", V)):
        if not np.isfinite(M).all():
            raise ValueError(f"{name} = X W_{name} overflowed {M.dtype}: "
                             f"rescale X or W_{name}")
    return Q, K, V


def identity_projections(d_model: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W_Q = W_K = W_V = I of size d_model, so that Q = K = V = X  (eq-identity-projections).

    >>> [W.tolist() for W in identity_projections(2)]
    [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]
    """
    d_model = as_int(d_model, "d_model")
    I = np.eye(d_model)  # (d_model, d_model)
    return I, I.copy(), I.copy()


def random_projections(d_model: int, d: int, d_v: int, rng: np.random.Generator):
    """Seeded W_Q, W_K (d_model, d) and W_V (d_model, d_v), entries N(0, 1/d_model).

    The variance 1/d_model keeps the projected entries at the scale of X's entries, as the usual
    initialisations of trained models do.
    """
    as_rng(rng)
    d_model, d, d_v = as_int(d_model, "d_model"), as_int(d, "d"), as_int(d_v, "d_v")
    scale = 1.0 / np.sqrt(d_model)
    W_Q = rng.standard_normal((d_model, d)) * scale  # (d_model, d)
    W_K = rng.standard_normal((d_model, d)) * scale  # (d_model, d)
    W_V = rng.standard_normal((d_model, d_v)) * scale  # (d_model, d_v)
    return W_Q, W_K, W_V


def rotation(theta: float) -> np.ndarray:
    """R(θ) = [[cos θ, sin θ], [−sin θ, cos θ]]: x ↦ x R turns row vectors by θ counter-clockwise.

    R Rᵀ = I. Shape (2, 2).

    >>> np.round(np.array([[1.0, 0.0]]) @ rotation(np.pi / 2), 12) + 0.0
    array([[0., 1.]])
    """
    theta = float(theta)
    if not np.isfinite(theta):
        raise ValueError(f"theta must be finite (an angle in radians); got {theta}")
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]])  # (2, 2)


# --------------------------------------------------------------------------------------------------
# The SymPy checks. Small concrete sizes with symbolic entries: n = 3 elements, d_model = 2.
# --------------------------------------------------------------------------------------------------
_X_INT = [[1, 2], [0, -1], [3, 1]]  # (3, 2), an exact example for the package checks
_WQ_INT, _WK_INT, _WV_INT = [[1, 0, 2], [-1, 1, 0]], [[0, 1, 1], [2, 0, -1]], [[1, 1], [0, 2]]


@derivation("eq-qkv")
def _check_qkv():
    X, W_Q = symbol_matrix("x", 3, 2), symbol_matrix("a", 2, 3)
    W_K, W_V = symbol_matrix("b", 2, 3), symbol_matrix("c", 2, 2)
    # Row i of Q is x_i W_Q: the query of element i depends on element i alone (likewise K, V).
    for W in (W_Q, W_K, W_V):
        P = X * W
        for i in range(3):
            yield sp.Eq(P[i, :], X[i, :] * W, evaluate=False)
    # The package computes the same products, exactly, on an integer example.
    got = project(_X_INT, _WQ_INT, _WK_INT, _WV_INT)
    for W, M in zip((_WQ_INT, _WK_INT, _WV_INT), got):
        yield bool(np.array_equal(np.array(sp.Matrix(_X_INT) * sp.Matrix(W), dtype=float), M))
    # Shapes: (n, d_model)(d_model, d) = (n, d), as the page's shape table says.
    yield got[0].shape == (3, 3) and got[1].shape == (3, 3) and got[2].shape == (3, 2)


def _display_identity():
    n, d_model = sp.symbols("n d_model", integer=True, positive=True)
    X = sp.MatrixSymbol("X", n, d_model)
    return sp.Eq(sp.MatMul(X, sp.Identity(d_model), evaluate=False), X, evaluate=False)


@derivation("eq-identity-projections", display=_display_identity)
def _check_identity():
    X = symbol_matrix("x", 3, 2)
    yield sp.Eq(X * sp.eye(2), X, evaluate=False)
    # The display itself, evaluated: X I simplifies to X for a symbolic X of any shape.
    shown = _display_identity()
    yield shown.lhs.doit() == shown.rhs
    X_num = np.array(_X_INT, dtype=float)  # (3, 2)
    Q, K, V = project(X_num, *identity_projections(2))
    yield bool(np.array_equal(Q, X_num) and np.array_equal(K, X_num) and np.array_equal(V, X_num))


@derivation("thm-symmetric-scores")
def _check_symmetric_scores():
    # S = X W_Q W_Kᵀ Xᵀ / √d. If W_Q W_Kᵀ is symmetric (in particular W_Q = W_K), S is symmetric.
    X, W = symbol_matrix("x", 3, 2), symbol_matrix("w", 2, 2)
    d = sp.Symbol("d", positive=True)
    S_shared = X * W * W.T * X.T / sp.sqrt(d)  # (3, 3)
    yield sp.Eq(S_shared, S_shared.T, evaluate=False)
    # The general statement: S - Sᵀ = X (M - Mᵀ) Xᵀ / √d with M = W_Q W_Kᵀ.
    W_Q, W_K = symbol_matrix("a", 2, 2), symbol_matrix("b", 2, 2)
    S = X * W_Q * W_K.T * X.T / sp.sqrt(d)  # (3, 3)
    M = W_Q * W_K.T  # (2, 2)
    yield sp.Eq(S - S.T, X * (M - M.T) * X.T / sp.sqrt(d), evaluate=False)
    # It can fail: an integer W_Q != W_K whose scores are not symmetric.
    Q, K, _ = project(_X_INT, [[1, 0], [0, 1]], [[0, 1], [0, 0]], [[1], [0]])
    S_num = scaled_scores(Q, K)  # (3, 3)
    yield not np.allclose(S_num, S_num.T)
    Q, K, _ = project(_X_INT, [[1, 2], [0, 1]], [[1, 2], [0, 1]], [[1], [0]])
    S_num = scaled_scores(Q, K)  # (3, 3)
    yield bool(np.array_equal(S_num, S_num.T))
