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

from .registry import derivation, evaluate, symbol_matrix
from .validation import as_int, as_matrix, as_rng, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["project"]


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
        Q, K, V = _project(X, W_Q, W_K, W_V)  # (n, d), (n, d), (n, d_v)
    for name, M in (("Q", Q), ("K", K), ("V", V)):
        if not np.isfinite(M).all():
            raise ValueError(f"{name} = X W_{name} overflowed {M.dtype}: "
                             f"rescale X or W_{name}")
    return Q, K, V


def _project(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray):
    """Q = X W_Q, K = X W_K, V = X W_V, returned as (Q, K, V)  (eq-qkv)."""
    Q = X @ W_Q  # (n, d)
    K = X @ W_K  # (n, d)
    V = X @ W_V  # (n, d_v)
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


_n, _d_model, _d, _d_v = sp.symbols("n d_model d d_v", integer=True, positive=True)
_Xm = sp.MatrixSymbol("X", _n, _d_model)
_Qm, _Km, _Vm = sp.MatrixSymbol("Q", _n, _d), sp.MatrixSymbol("K", _n, _d), sp.MatrixSymbol("V", _n, _d_v)
_WQm, _WKm = sp.MatrixSymbol("W_Q", _d_model, _d), sp.MatrixSymbol("W_K", _d_model, _d)
_WVm = sp.MatrixSymbol("W_V", _d_model, _d_v)


def _display_qkv():
    """[Q K V] = X [W_Q W_K W_V]: the three projections side by side, as one product."""
    return sp.Eq(sp.BlockMatrix([[_Qm, _Km, _Vm]]),
                 sp.MatMul(_Xm, sp.BlockMatrix([[_WQm, _WKm, _WVm]]), evaluate=False), evaluate=False)


@derivation("eq-qkv", display=_display_qkv,
            strength="verified", scope="for symbolic X (3 × 2) and projections")
def _check_qkv():
    X, W_Q = symbol_matrix("x", 3, 2), symbol_matrix("a", 2, 3)
    W_K, W_V = symbol_matrix("b", 2, 3), symbol_matrix("c", 2, 2)
    sizes = {_n: 3, _d_model: 2, _d: 3, _d_v: 2}
    shown = evaluate(_display_qkv().rhs, {_Xm: X, _WQm: W_Q, _WKm: W_K, _WVm: W_V, **sizes})
    # The displayed block product is the three products side by side, columns 0-2, 3-5, 6-7 ...
    yield sp.Eq(shown, (X * W_Q).row_join(X * W_K).row_join(X * W_V), evaluate=False)
    # ... and row i of each is x_i W: the query of element i depends on element i alone.
    for W, cols in ((W_Q, slice(0, 3)), (W_K, slice(3, 6)), (W_V, slice(6, 8))):
        for i in range(3):
            yield sp.Eq(shown[i, cols], X[i, :] * W, evaluate=False)
    # The package computes the same products, exactly, on an integer example.
    got = project(_X_INT, _WQ_INT, _WK_INT, _WV_INT)
    values = {_Xm: sp.Matrix(_X_INT), _WQm: sp.Matrix(_WQ_INT), _WKm: sp.Matrix(_WK_INT),
              _WVm: sp.Matrix(_WV_INT), **sizes}
    yield bool(np.array_equal(np.array(evaluate(_display_qkv().rhs, values), dtype=float), np.hstack(got)))
    # Shapes: (n, d_model)(d_model, d) = (n, d), as the page's shape table says.
    yield got[0].shape == (3, 3) and got[1].shape == (3, 3) and got[2].shape == (3, 2)


def _display_identity():
    n, d_model = sp.symbols("n d_model", integer=True, positive=True)
    X = sp.MatrixSymbol("X", n, d_model)
    return sp.Eq(sp.MatMul(X, sp.Identity(d_model), evaluate=False), X, evaluate=False)


@derivation("eq-identity-projections", display=_display_identity,
            strength="proved", scope=("for a matrix symbol X of any size n × d_model. The package's identity "
                                      "projections leave a 3 × 2 example unchanged, bit for bit"))
def _check_identity():
    # The displayed equation itself, X a matrix symbol of symbolic size n × d_model: SymPy reduces X I to X.
    yield _display_identity()
    # The package's identity_projections: its three matrices must leave an example X unchanged.
    X_num = np.array(_X_INT, dtype=float)  # (3, 2)
    Q, K, V = project(X_num, *identity_projections(2))
    yield bool(np.array_equal(Q, X_num) and np.array_equal(K, X_num) and np.array_equal(V, X_num))


@derivation("thm-symmetric-scores",
            strength="proved", scope="for matrix symbols X, W_Q, W_K of any shape; exactly for 3 × 2 entries")
def _check_symmetric_scores():
    # For matrix symbols of any shape: S − Sᵀ = X (W_QK − W_QKᵀ) Xᵀ / √d with W_QK = W_Q W_Kᵀ, so
    # S is symmetric whenever W_QK is (SymPy expands both sides and subtracts).
    S = _Xm * _WQm * (_Xm * _WKm).T / sp.sqrt(_d)
    W_QK = _WQm * _WKm.T
    gap = sp.expand((S - S.T).doit() - (_Xm * (W_QK - W_QK.T) * _Xm.T / sp.sqrt(_d)).doit())
    yield sp.Eq(S - S.T, _Xm * (W_QK - W_QK.T) * _Xm.T / sp.sqrt(_d), evaluate=False)  # symbolic shapes
    yield bool(gap == 0 or gap == sp.ZeroMatrix(_n, _n))
    shared = sp.expand((_Xm * _WQm * (_Xm * _WQm).T - (_Xm * _WQm * (_Xm * _WQm).T).T).doit())
    yield bool(shared == 0 or shared == sp.ZeroMatrix(_n, _n))  # W_Q = W_K: symmetric
    # Exactly, on symbolic 3 × 2 inputs:
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
    S_num = Q @ K.T / np.sqrt(Q.shape[1])  # (3, 3), S = Q Kᵀ/√d as the page writes it
    yield not np.allclose(S_num, S_num.T)
    Q, K, _ = project(_X_INT, [[1, 2], [0, 1]], [[1, 2], [0, 1]], [[1], [0]])
    S_num = Q @ K.T / np.sqrt(Q.shape[1])  # (3, 3)
    yield bool(np.array_equal(S_num, S_num.T))
