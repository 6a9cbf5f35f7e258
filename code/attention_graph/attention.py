"""The whole layer: Attention(Q, K, V) = softmax(Q Kᵀ / √d) V, returned with its weight matrix.

The chapter ``book/attention.md`` shows that every output is a convex combination of the values
(``thm-convex-combination``), that self-attention pulls each value toward the weighted centre of mass
of the others (``thm-pull-toward-centre``), that the keys and values form a set (``thm-key-value-permutation``),
and assembles the whole layer in SymPy (``eq-attention``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np
import sympy as sp

from .registry import derivation, symbol_matrix
from .scores import scaled_scores
from .softmax import RowSoftmax, softmax
from .validation import as_bias, as_matrix, as_square, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["AttentionGraph", "attention", "attention_exact", "pull", "weighted_sum"]


@dataclass(frozen=True, eq=False)
class AttentionGraph:
    """A weighted directed graph on named nodes: the arrow from j to i carries weight W[i, j]."""

    W: np.ndarray
    labels: tuple[str, ...]

    def __post_init__(self):
        W = as_square(self.W, "W")  # (n, n)
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

    def in_strength(self) -> np.ndarray:
        """Σ_j W[i, j] for each i: the weight on the arrows arriving at i; 1 for every row of an
        attention layer. Shape (n,)."""
        return self.W.sum(axis=1)  # (n,)

    def out_strength(self) -> np.ndarray:
        """Σ_i W[i, j] for each j: the weight on the arrows leaving j, i.e. the attention the queries
        pay to j. Shape (n,)."""
        return self.W.sum(axis=0)  # (n,)

    def to_networkx(self):
        """A ``networkx.DiGraph``: an edge (i, j), the walker's step against an arrow, ``weight`` = W[i, j] > 0."""
        G = nx.DiGraph()
        G.add_nodes_from(self.labels)
        G.add_weighted_edges_from((self.labels[a], self.labels[b], w) for a, b, w in self.edges())
        return G


def weighted_sum(W, V) -> np.ndarray:
    """Y = W V: row i of Y is Σ_j W_ij v_j  (eq-weighted-sum).

    ``W`` is (n_q, n_k), ``V`` is (n_k, d_v); the result is (n_q, d_v).

    >>> weighted_sum([[0.25, 0.75]], [[0.0, 4.0], [2.0, 0.0]])
    array([[1.5, 1. ]])
    """
    W = as_matrix(W, "W", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    V = as_matrix(V, "V", shape_doc="(n_k, d_v)")  # (n_k, d_v)
    check_same(W.shape[1], V.shape[0], "W must have one column per row of V (n_k)")
    return _weighted_sum(W, V)  # (n_q, d_v)


def _weighted_sum(W: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Y = W V: row i of Y is Σ_j W_ij v_j  (eq-weighted-sum)."""
    return W @ V  # (n_q, d_v)


def attention(Q, K, V, mask=None, bias=None) -> tuple[np.ndarray, np.ndarray]:
    """Y = softmax(Q Kᵀ / √d + B) V, returned as (Y, W)  (eq-attention; B = 0 without ``bias``).

    ``Q`` is (n_q, d), ``K`` is (n_k, d), ``V`` is (n_k, d_v); ``mask`` as in :func:`softmax`.
    ``bias`` is an optional float B (n_q, n_k) added to the scaled scores, as PyTorch's float
    ``attn_mask`` is: −∞ masks an entry, +∞ and NaN are refused (a position bias, ALiBi, a
    distance bias; see :func:`attention_graph.validation.as_bias`).
    Returns ``Y`` of shape (n_q, d_v) and the weight matrix ``W`` of shape (n_q, n_k), whose row i
    says how much query i attends to each key: the adjacency matrix of the attention graph.

    >>> Y, W = attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [3.0]])
    >>> W.round(3), Y.round(3)
    (array([[0.67, 0.33]]), array([[1.66]]))
    """
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    V = as_matrix(V, "V", shape_doc="(n_k, d_v)")  # (n_k, d_v)
    check_same(K.shape[0], V.shape[0], "K and V must have the same number of rows (n_k)")
    B = None if bias is None else as_bias(bias, (as_matrix(Q, "Q", shape_doc="(n_q, d)").shape[0], K.shape[0]))
    return _attention(Q, K, V, mask, B)


def _attention(Q, K, V, mask=None, B=None) -> tuple[np.ndarray, np.ndarray]:
    """Y = softmax(Q Kᵀ / √d + B) V, returned as (Y, W)  (eq-attention; B = 0 when None)."""
    S = scaled_scores(Q, K)  # (n_q, n_k)
    if B is not None:
        S = _biased(S, B)  # (n_q, n_k), S + B
    W = softmax(S, mask)  # (n_q, n_k)
    return _weighted_sum(W, V), W  # (n_q, d_v), (n_q, n_k)


def _biased(S, B) -> np.ndarray:
    """S + B, with −∞ in B kept as a masked entry; an overflow to ±∞ is refused. (n_q, n_k)."""
    with np.errstate(over="ignore", invalid="ignore"):
        S = S + B  # (n_q, n_k)
    overflow = ~np.isfinite(S) & np.isfinite(B)  # (n_q, n_k)
    if overflow.any():
        where = tuple(int(x) for x in np.argwhere(overflow)[0])
        raise ValueError(f"the scores plus bias overflowed {S.dtype} at index {where}: rescale bias")
    return S


def pull(W, V) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention as a pull: y_i = v_i + (1 − W_ii)(v̄_i − v_i), returned as (s, C)  (thm-pull-toward-centre).

    ``W`` is (n, n) with rows summing to 1 (row i of V is element i's own value), ``V`` is (n, d_v).
    s_i = 1 − W_ii = Σ_{j≠i} W_ij is how far element i is pulled, in (0, 1] unless it attends only
    to itself; row i of C, v̄_i = Σ_{j≠i} W_ij v_j / (1 − W_ii), is the centre of mass of the OTHER
    values, weighted by W_ij. Returns s of shape (n,) and C of shape (n, d_v); where s_i = 0 there is
    no pull and v̄_i is set to v_i.

    >>> s, C = pull([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]], [[0.0], [4.0], [8.0]])
    >>> s, C
    (array([0.5, 0. , 1. ]), array([[6.], [4.], [2.]]))
    """
    W = as_square(W, "W", note=" for self-attention")  # (n, n)
    V = as_matrix(V, "V", shape_doc="(n, d_v)")  # (n, d_v)
    check_same(W.shape[1], V.shape[0], "W must have one column per row of V (n)")
    if (W < 0).any():
        raise ValueError("W must be non-negative (attention weights)")
    sums = W.sum(axis=1)  # (n,)
    if not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
        bad = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(f"every row of W must sum to 1; row {bad} sums to {sums[bad]}")
    off = W - np.diag(np.diag(W))  # (n, n): the weights each element gives the others
    s = off.sum(axis=1)  # (n,)
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.where(s[:, None] > 0, (off @ V) / s[:, None], V)  # (n, d_v)
    return s, C


def attention_exact(Q, K, V) -> tuple[sp.Matrix, sp.Matrix]:
    """softmax(Q Kᵀ / √d) V in exact SymPy arithmetic, returned as (Y, W)  (eq-attention).

    ``Q``, ``K``, ``V`` hold integers, rationals or SymPy expressions (nested lists or matrices):
    the exact counterpart of :func:`attention`, for checking it.

    >>> Y, W = attention_exact([[0, 1]], [[1, 0], [0, 0]], [[2], [6]])
    >>> W, Y
    (Matrix([[1/2, 1/2]]), Matrix([[4]]))
    """
    Q, K, V = (sp.Matrix(M) for M in (Q, K, V))  # (n_q, d), (n_k, d), (n_k, d_v)
    check_same(Q.cols, K.cols, "Q and K must share the dimension d (columns)")
    check_same(K.rows, V.rows, "K and V must have the same number of rows (n_k)")
    if Q.cols == 0:
        raise ValueError("Q and K have d = 0 columns: the scale 1/√d is undefined")
    W = RowSoftmax(Q * K.T / sp.sqrt(Q.cols)).doit()  # (n_q, n_k)
    return W * V, W


def ulps_from_exact(approx, exact) -> int:
    """The largest distance, in units in the last place, between floats and exact SymPy values.

    Each exact value is first rounded to the nearest float64; the answer counts the float64 numbers
    between it and the package's value (0 means bit for bit the correctly rounded result).

    >>> ulps_from_exact([[0.1]], sp.Matrix([[sp.Rational(1, 10)]]))
    0
    """
    approx = as_matrix(approx, "approx", shape_doc="(r, c)").astype(np.float64)  # (r, c)
    exact = sp.Matrix(exact)  # (r, c) expected; checked next
    if exact.shape != approx.shape:
        raise ValueError(f"exact must have the shape of approx {approx.shape}; got {exact.shape}")
    nearest = np.array([[float(sp.N(e, 40)) for e in exact.row(r)] for r in range(exact.rows)],
                       dtype=np.float64).reshape(approx.shape)  # (r, c)

    def ordered(x):  # float64 bits as integers that increase with the value
        bits = x.view(np.int64)
        return np.where(bits < 0, np.int64(-(2**63)) - bits, bits)

    return int(np.max(np.abs(ordered(approx) - ordered(nearest)), initial=0))


# --------------------------------------------------------------------------------------------------
# The layer in SymPy, and the checks behind the chapter's labels.
# --------------------------------------------------------------------------------------------------
class AttentionExpr(sp.MatrixExpr):
    """Attention(Q, K, V) as an unevaluated SymPy matrix expression, for display (n_q, d_v)."""

    def __new__(cls, Q, K, V):
        return sp.Basic.__new__(cls, Q, K, V)

    @property
    def shape(self):
        return (self.args[0].shape[0], self.args[2].shape[1])

    def _latex(self, printer):
        args = ", ".join(printer._print(a) for a in self.args)
        return rf"\operatorname{{Attention}}\left({args}\right)"


_n_q, _n_k, _d, _d_v = sp.symbols("n_q n_k d d_v", integer=True, positive=True)
_Qs, _Ks, _Vs = sp.MatrixSymbol("Q", _n_q, _d), sp.MatrixSymbol("K", _n_k, _d), sp.MatrixSymbol("V", _n_k, _d_v)


def _display_attention():
    rhs = sp.MatMul(RowSoftmax(sp.MatMul(_Qs, _Ks.T) / sp.sqrt(_d)), _Vs)
    return sp.Eq(AttentionExpr(_Qs, _Ks, _Vs), rhs, evaluate=False)


_i, _j = sp.symbols("i j", integer=True, positive=True)
_y, _v, _Wb = sp.IndexedBase("y"), sp.IndexedBase("v"), sp.IndexedBase("W")


def _display_weighted_sum():
    return sp.Eq(_y[_i], sp.Sum(sp.Mul(_Wb[_i, _j], _v[_j], evaluate=False), (_j, 1, _n_k)),
                 evaluate=False)


# A small exact example: 3 queries, 3 keys, d = 2, 2-d values forming a triangle.
_Q_INT = [[1, 0], [0, 2], [-1, 1]]
_K_INT = [[2, 1], [0, -1], [1, 1]]
_V_INT = [[0, 0], [4, 0], [0, 4]]


@derivation("eq-weighted-sum", display=_display_weighted_sum,
            strength="verified", scope="for 2 × 3 weights and 3 × 2 values, symbolic")
def _check_weighted_sum():
    W, V = symbol_matrix("w", 2, 3), symbol_matrix("v", 3, 2)
    # Row i of W V is the displayed sum Σ_j W_ij v_j, with v_j the j-th row of V.
    for r in range(2):
        yield sp.Eq((W * V)[r, :], sum((W[r, c] * V[c, :] for c in range(3)), sp.zeros(1, 2)),
                    evaluate=False)
    # The display, summed out for n_k = 3, is the same row.
    e = _display_weighted_sum().rhs.subs(_n_k, 3).doit()
    yield sp.Eq(e.subs({_Wb[_i, c + 1]: W[0, c] for c in range(3)}).subs(
        {_v[c + 1]: V[c, 0] for c in range(3)}), (W * V)[0, 0])
    # The package: with dyadic weights every product and sum is exact in floating point.
    Wd = [[sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)], [0, 1, 0]]
    got = weighted_sum(np.array(Wd, dtype=float), _V_INT)  # (2, 2)
    yield bool(np.array_equal(got, np.array(sp.Matrix(Wd) * sp.Matrix(_V_INT), dtype=float)))


@derivation("eq-attention", display=_display_attention, lines=True,
            strength="verified", scope="for Q of 2 × 2, K of 3 × 2 and V of 3 × 1, symbolic")
def _check_attention():
    # On symbolic Q (2, 2), K (3, 2), V (3, 1): the displayed formula, evaluated, is the chain of the
    # three chapters: scores S_ij = Σ_l q_il k_jl / √d, weights exp(S_ij)/Σ_l exp(S_il), y_i = Σ_j W_ij v_j.
    Q, K, V = symbol_matrix("q", 2, 2), symbol_matrix("k", 3, 2), symbol_matrix("v", 3, 1)
    layer = _display_attention().rhs.subs({_Qs: Q, _Ks: K, _Vs: V, _d: 2}).doit()
    S = [[sum(Q[a, c] * K[b, c] for c in range(2)) / sp.sqrt(2) for b in range(3)] for a in range(2)]
    Wc = [[sp.exp(S[a][b]) / sum(sp.exp(S[a][c]) for c in range(3)) for b in range(3)] for a in range(2)]
    chain = sp.Matrix(2, 1, lambda a, _: sum(Wc[a][b] * V[b, 0] for b in range(3)))  # (2, 1)
    yield sp.Eq(sp.Matrix(layer), chain, evaluate=False)
    # attention_exact is that formula; the package's floats are its correctly rounded values, or
    # within a few units in the last place of them.
    Y_exact, W_exact = attention_exact(_Q_INT, _K_INT, _V_INT)
    Y, W = attention(_Q_INT, _K_INT, _V_INT)
    yield ulps_from_exact(W, W_exact) <= 4 and ulps_from_exact(Y, Y_exact) <= 16


@derivation("thm-convex-combination",
            strength="proved", scope="for any number of values (symbolic sums); exactly on a triangle of values")
def _check_convex_combination():
    # For any number n of values: with Σ_j w_j = 1, Σ_j w_j f_j − f_min = Σ_j w_j (f_j − f_min), and
    # writing f_j = f_min + g_j with g_j >= 0 and w_j >= 0, SymPy decides that the sum is >= 0 (the
    # lower bound; the upper bound is the same argument with −f).
    n, jj = sp.Symbol("n", integer=True, positive=True), sp.Symbol("j", integer=True, positive=True)
    w, f = sp.IndexedBase("w", nonnegative=True), sp.IndexedBase("f", real=True)
    g, f_min = sp.IndexedBase("g", nonnegative=True), sp.Symbol("f_min", real=True)
    total_weight = sp.Sum(w[jj], (jj, 1, n))
    spread = sp.Sum(w[jj] * (f[jj] - f_min), (jj, 1, n)).expand()
    spread = spread.replace(lambda e: isinstance(e, sp.Sum), lambda e: sp.factor_terms(e))
    yield sp.Eq(spread.subs(total_weight, 1), sp.Sum(w[jj] * f[jj], (jj, 1, n)) - f_min, evaluate=False)
    term = (w[jj] * (f[jj] - f_min)).subs(f[jj], f_min + g[jj])  # f_min is the smallest: f_j = f_min + g_j
    yield bool(sp.Sum(term, (jj, 1, n)).is_nonnegative)
    # The key step: with Σ_j w_j = 1, Σ_j w_j f_j − f_1 = Σ_j w_j (f_j − f_1). If f_1 is the smallest
    # of the f_j = v_jc, the right side is a sum of non-negative terms, for any coordinate c.
    w2, w3 = sp.symbols("w_2 w_3", nonnegative=True)
    f1, f2, f3 = sp.symbols("f_1 f_2 f_3", real=True)
    w1 = 1 - w2 - w3
    yield sp.Eq(w1 * f1 + w2 * f2 + w3 * f3 - f1, w2 * (f2 - f1) + w3 * (f3 - f1))
    # On the triangle of values _V_INT, the barycentric coordinates of y_i are exactly row i of W,
    # positive and summing to 1 ...
    Y_exact, W_exact = attention_exact(_Q_INT, _K_INT, _V_INT)
    T = sp.Matrix(_V_INT).T.col_join(sp.ones(1, 3))  # (3, 3): [v_1 v_2 v_3; 1 1 1]
    for r in range(3):
        lam = T.solve(Y_exact[r, :].T.col_join(sp.ones(1, 1)))
        yield sp.Eq(lam, W_exact[r, :].T, evaluate=False)
        yield sp.And(*[sp.Gt(x, 0) for x in lam])
    # ... and the package's outputs lie inside the triangle too.
    Y, _ = attention(_Q_INT, _K_INT, _V_INT)
    Tn = np.array(T, dtype=float)  # (3, 3)
    lam = np.linalg.solve(Tn, np.vstack([Y.T, np.ones((1, 3))]))  # (3, n_q) barycentric coordinates
    yield bool((lam > 0).all())


@derivation("thm-pull-toward-centre",
            strength="proved", scope=("for any number of values (symbolic sums; the norm bound given the "
                                      "triangle inequality) and exactly for three; the bound also measured "
                                      "to 1e-12 on seeded layers"))
def _check_pull():
    # For any number n of values, coordinate by coordinate: with Σ_j w_j = 1 (row i of W),
    # Σ_j w_j (v_j − v_i) = Σ_j w_j v_j − v_i = y_i − v_i (the term j = i is zero).
    n, jj = sp.Symbol("n", integer=True, positive=True), sp.Symbol("j", integer=True, positive=True)
    w, v = sp.IndexedBase("w", nonnegative=True), sp.IndexedBase("v", real=True)
    v_own = sp.Symbol("v_i", real=True)
    total_weight = sp.Sum(w[jj], (jj, 1, n))
    moved = sp.Sum(w[jj] * (v[jj] - v_own), (jj, 1, n)).expand()
    moved = moved.replace(lambda e: isinstance(e, sp.Sum), lambda e: sp.factor_terms(e))
    yield sp.Eq(moved.subs(total_weight, 1), sp.Sum(w[jj] * v[jj], (jj, 1, n)) - v_own, evaluate=False)
    # The bound: by the triangle inequality ‖y_i − v_i‖ <= Σ_{j≠i} w_j r_j with r_j = ‖v_j − v_i‖, and
    # with r_j = r_max − g_j (g_j >= 0), (Σ_j w_j) r_max − Σ_j w_j r_j = Σ_j w_j g_j >= 0.
    r_max, g = sp.Symbol("r_max", nonnegative=True), sp.IndexedBase("g", nonnegative=True)
    yield sp.Eq(sp.Sum(w[jj] * r_max, (jj, 1, n)) - sp.Sum(w[jj] * (r_max - g[jj]), (jj, 1, n)),
                sp.Sum(w[jj] * g[jj], (jj, 1, n)), evaluate=False)
    yield bool(sp.Sum(w[jj] * g[jj], (jj, 1, n)).is_nonnegative)
    # Exactly, for three values:
    w2, w3 = sp.symbols("w_2 w_3", positive=True)
    v1, v2, v3 = sp.symbols("v_1 v_2 v_3", real=True)
    w1 = 1 - w2 - w3  # row 1 of W sums to 1
    y1 = w1 * v1 + w2 * v2 + w3 * v3
    c1 = (w2 * v2 + w3 * v3) / (w2 + w3)  # centre of mass of the others
    yield sp.Eq(y1 - v1, (1 - w1) * (c1 - v1))
    yield sp.Eq(y1 - v1, w2 * (v2 - v1) + w3 * (v3 - v1))
    # The package: the pull rebuilds the attention output.
    X = np.array(_V_INT, dtype=float)  # (3, 2), identity projections: Q = K = V = X
    Y, W = attention(X, X, X)
    s, C = pull(W, X)
    yield bool(np.allclose(X + s[:, None] * (C - X), Y, rtol=1e-14, atol=1e-14))
    # The bound ‖y_i − v_i‖ <= s_i max_j ‖v_j − v_i‖ (the triangle inequality) is measured, on the
    # example and on seeded random layers.
    rng = np.random.default_rng(0)
    for Xb in [X] + [rng.standard_normal((6, 3)) for _ in range(5)]:
        Yb, Wb = attention(Xb, Xb, Xb)  # (n, d), (n, n)
        sb, _ = pull(Wb, Xb)  # (n,)
        reach = np.linalg.norm(Xb[None, :, :] - Xb[:, None, :], axis=2).max(axis=1)  # (n,)
        yield bool((np.linalg.norm(Yb - Xb, axis=1) <= sb * reach + 1e-12).all())


@derivation("thm-key-value-permutation",
            strength="verified", scope="for symbolic Q, K, V with 2 queries, 3 keys and every permutation of them")
def _check_key_value_permutation():
    Q, K, V = symbol_matrix("q", 2, 1), symbol_matrix("k", 3, 1), symbol_matrix("v", 3, 2)
    P = sp.Matrix([[0, 1, 0], [0, 0, 1], [1, 0, 0]])  # a 3-cycle

    def layer(Q, K, V):
        W = RowSoftmax(Q * K.T).doit()  # (2, 3), d = 1
        return W * V, W

    Y, W = layer(Q, K, V)
    for order in itertools.permutations(range(3)):  # every permutation of the three keys
        Pk = sp.Matrix(3, 3, lambda r, c, order=order: 1 if order[r] == c else 0)
        Yk, Wk = layer(Q, Pk * K, Pk * V)
        yield sp.Eq(Yk, Y, evaluate=False)
        yield sp.Eq(Wk, W * Pk.T, evaluate=False)
    # The package, on the integer example.
    Pn = np.array(P, dtype=float)  # (3, 3)
    Yn, Wn = attention(_Q_INT, _K_INT, _V_INT)
    Yq, Wq = attention(_Q_INT, Pn @ _K_INT, Pn @ _V_INT)  # (3, 2), (3, 3)
    yield bool(np.allclose(Yq, Yn, rtol=1e-14) and np.allclose(Wq, Wn @ Pn.T, rtol=1e-14))
