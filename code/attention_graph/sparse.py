"""Graph Transformers at scale: attention restricted to the edges of a real graph, never n × n.

``edge_attention(Q, K, V, edges)`` computes the same Y as ``attention(Q, K, V, mask=M)`` with
M[i, j] = True exactly on the edges, but evaluates a score only where an edge is, and stores only
O(E + n) numbers besides its inputs and output. The chapter ``book/sparse.md`` derives it, counts
what it saves and plots the benchmark record that ``python -m attention_graph.bench sparse`` writes.

Conventions (the same as the dense mask's, so that the two agree):

* ``edges`` is an integer array of shape (E, 2); row (i, j) means query i attends to key/value j.
  Any row order is accepted; a repeated row is refused (a mask cannot say "twice").
* Every query must have at least one edge. A query without one has no softmax, and the dense
  ``softmax(S, mask)`` refuses an all-False mask row with a ``ValueError``; so does this module,
  naming the queries. Add self-loops (i, i) if every element should at least see itself.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.sparse import csr_array

from .attention import attention
from .registry import derivation
from .validation import as_edges, as_int, as_qkv, as_rng, as_square, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["edge_attention", "segment_softmax"]

# Edges per block of the score computation: two (CHUNK, d) buffers, 4 MiB at d = 64 in float64.
# Measured on the benchmark machine at E = 1e6: 4096 was as fast as 1024 and faster than 16384.
CHUNK = 4096


# --------------------------------------------------------------------------------------------------
# The computation
# --------------------------------------------------------------------------------------------------


def _sorted_pattern(edges, n_q: int, n_k: int, want_order: bool = False):
    """Validate ``edges`` and sort them by (i, j): (order, indptr, rows, cols).

    ``indptr`` (n_q + 1,) holds the CSR row pointers, ``rows`` and ``cols`` (E,) the sorted edge
    ends. ``order``, the permutation that sorts the rows of ``edges``, is computed only when asked
    for (an argsort costs about three times a sort); it is None when the input was already sorted.
    """
    edges = as_edges(edges, "edges", n_q, n_k)  # (E, 2)
    given = edges[:, 0] * n_k + edges[:, 1]  # (E,), the position of edge (i, j) in row-major order
    key, order = given, None
    if key.size > 1 and not (key[1:] > key[:-1]).all():
        if want_order:
            order = np.argsort(key)  # (E,)
            key = key[order]  # (E,)
        else:
            key = np.sort(key)  # (E,)
    repeated = np.flatnonzero(key[1:] == key[:-1])  # (#repeats,)
    if repeated.size:
        first, second = np.flatnonzero(given == key[repeated[0]])[:2].tolist()
        i, j = divmod(int(key[repeated[0]]), n_k)
        raise ValueError(
            f"edges[{first}] and edges[{second}] are the same edge ({i}, {j}): each edge may be "
            f"listed once (a mask cannot say 'twice'); {repeated.size} repeated row(s) in all"
        )
    rows, cols = np.divmod(key, n_k)  # (E,), (E,)
    counts = np.bincount(rows, minlength=n_q)  # (n_q,)
    empty = np.flatnonzero(counts == 0)  # (#empty,)
    if empty.size:
        raise ValueError(
            f"edges give no edge to query(ies) {empty[:10].tolist()}: every query must attend to at "
            "least one key (an empty row has no softmax; a NaN would follow). Add self-loops (i, i) "
            "if every element should see at least itself."
        )
    indptr = np.zeros(n_q + 1, dtype=np.int64)  # (n_q + 1,)
    np.cumsum(counts, out=indptr[1:])
    return order, indptr, rows, cols


def edge_scores(Q, K, rows, cols) -> np.ndarray:
    """s_e = q_{i_e} · k_{j_e} / √d for every edge e = (i_e, j_e), CHUNK edges at a time. (E,)."""
    E, d = rows.size, Q.shape[1]
    s = np.empty(E, dtype=Q.dtype)  # (E,)
    m = min(CHUNK, E)
    q_rows = np.empty((m, d), dtype=Q.dtype)  # (CHUNK, d), reused for every block
    k_rows = np.empty((m, d), dtype=K.dtype)  # (CHUNK, d), reused for every block
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported by the caller
        for a in range(0, E, CHUNK):
            b = min(a + CHUNK, E)
            # mode="clip": the indices are already checked, and with ``out`` the default
            # mode="raise" buffers the copy (three times slower, measured).
            np.take(Q, rows[a:b], axis=0, out=q_rows[:b - a], mode="clip")
            np.take(K, cols[a:b], axis=0, out=k_rows[:b - a], mode="clip")
            np.einsum("ed,ed->e", q_rows[:b - a], k_rows[:b - a], out=s[a:b])
        s /= np.sqrt(d)
    return s


def segment_softmax(s, indptr) -> np.ndarray:
    """w_e = exp(s_e − m_i) / Σ_{e' in row i} exp(s_e' − m_i), m_i = max of row i  (eq-edge-softmax).

    ``s`` (E,) holds the scores of the edges sorted by query; query i owns the segment
    ``s[indptr[i]:indptr[i + 1]]``, which must not be empty. Returns the weights, shape (E,).

    >>> segment_softmax([0.0, 0.0, 5.0], [0, 2, 3])
    array([0.5, 0.5, 1. ])
    """
    s = np.asarray(s)  # (E,)
    indptr = np.asarray(indptr)  # (n_q + 1,)
    if s.dtype.kind not in "fiu" or indptr.dtype.kind not in "iu":
        raise TypeError("s must be real scores and indptr integers; "
                        f"got {s.dtype} and {indptr.dtype}")
    if s.ndim != 1 or indptr.ndim != 1 or indptr.size < 1:
        raise ValueError("s must be 1-d (E,) and indptr 1-d (n_q + 1,) "
                         "with at least one entry")
    dtype = np.result_type(s, np.float32) if s.dtype.kind == "f" else np.float64
    s = s.astype(dtype, copy=False)  # (E,), float32 stays float32
    if not np.isfinite(s).all():
        raise ValueError(f"s must be finite; found {s[~np.isfinite(s)][0]} at index "
                         f"{int(np.flatnonzero(~np.isfinite(s))[0])}")
    counts = np.diff(indptr)  # (n_q,)
    if indptr[0] != 0 or indptr[-1] != s.size or (counts < 1).any():
        raise ValueError(
            "indptr must start at 0, end at E = len(s) and increase strictly: every "
            "query needs at least one edge (an empty row has no softmax)"
        )
    if counts.size == 0:
        return s.copy()
    return _segment_softmax(s, indptr)  # (E,)


def _segment_softmax(s: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """w_e = exp(s_e − m_i) / Σ_{e' in row i} exp(s_e' − m_i), m_i = max of row i  (eq-edge-softmax)."""
    counts = np.diff(indptr)  # (n_q,), edges per query
    starts = indptr[:-1]  # (n_q,)
    m = np.maximum.reduceat(s, starts)  # (n_q,), the largest score of each query
    e = np.exp(s - np.repeat(m, counts))  # (E,), every entry in (0, 1]
    z = np.add.reduceat(e, starts)  # (n_q,), each >= 1
    return e / np.repeat(z, counts)  # (E,)


def edge_attention(Q, K, V, edges, *, return_weights: bool = False):
    """y_i = Σ_{j : (i, j) ∈ E} w_ij v_j, scores only on the edges, shape (n_q, d_v)  (eq-edge-attention).

    ``Q`` is (n_q, d), ``K`` is (n_k, d), ``V`` is (n_k, d_v); ``edges`` is an integer (E, 2) array
    whose row (i, j) lets query i attend to key/value j (any order, no repeats, every query at least
    once). Equals ``attention(Q, K, V, mask=M)`` with M True exactly on the edges, with O(E d) work
    and O(E + n) memory besides the inputs and Y. With ``return_weights=True`` returns ``(Y, w)``,
    where ``w[e]`` is the weight of the edge in row e of ``edges``.

    >>> Q = K = [[1.0, 0.0], [0.0, 1.0]]
    >>> V = [[1.0], [3.0]]
    >>> edge_attention(Q, K, V, [[0, 0], [0, 1], [1, 1]], return_weights=True)
    (array([[1.66],
           [3.  ]]), array([0.67, 0.33, 1.  ]))
    """
    Q, K, V = as_qkv(Q, K, V)  # (n_q, d), (n_k, d), (n_k, d_v)
    n_q, n_k = Q.shape[0], K.shape[0]
    order, indptr, rows, cols = _sorted_pattern(edges, n_q, n_k, return_weights)
    with np.errstate(over="ignore", invalid="ignore"):
        Y, w, s = _edge_attention(Q, K, V, indptr, rows, cols)  # (n_q, d_v), (E,), (E,)
    if not np.isfinite(s).all():
        raise ValueError(f"Q Kᵀ/√d overflowed {s.dtype} on some edge: rescale Q or K")
    if not return_weights:
        return Y
    if order is not None:
        w_in = np.empty_like(w)  # (E,)
        w_in[order] = w
        w = w_in
    return Y, w


def _edge_attention(Q, K, V, indptr, rows, cols):
    """y_i = Σ_{j : (i, j) ∈ E} w_ij v_j, scores only on the edges, sorted by query  (eq-edge-attention)."""
    s = edge_scores(Q, K, rows, cols)  # (E,), sorted by (i, j)
    w = _segment_softmax(s, indptr)  # (E,), sorted by (i, j)
    Y = _weighted_rows(w, indptr, cols, V, Q.shape[0], K.shape[0])  # (n_q, d_v)
    return Y, w, s  # the caller refuses scores that overflowed


def _weighted_rows(w, indptr, cols, V, n_q: int, n_k: int) -> np.ndarray:
    """Y = W V with W the sparse (n_q, n_k) matrix of the edge weights (SciPy CSR). (n_q, d_v)."""
    return np.asarray(csr_array((w, cols, indptr), shape=(n_q, n_k)) @ V)  # (n_q, d_v)


# --------------------------------------------------------------------------------------------------
# Graphs, masks and costs
# --------------------------------------------------------------------------------------------------


def random_graph_edges(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """Edges of a random graph where each of n nodes attends to itself and degree − 1 others.

    The others are distinct and drawn uniformly; E = n · degree exactly. Returned sorted by (i, j),
    shape (E, 2), int64.
    """
    as_rng(rng)
    n = as_int(n, "n")
    degree = as_int(degree, "degree", high=n, what=f"an integer from 1 to n = {n}")
    offsets = np.sort(rng.integers(1, n, size=(n, degree - 1)), axis=1)  # (n, degree - 1)
    while degree > 2:
        clash = np.flatnonzero((offsets[:, 1:] == offsets[:, :-1]).any(axis=1))  # (#clashing rows,)
        if clash.size == 0:
            break
        offsets[clash] = np.sort(rng.integers(1, n, size=(clash.size, degree - 1)), axis=1)
    i = np.repeat(np.arange(n), degree)  # (E,)
    others = (np.arange(n)[:, None] + offsets) % n  # (n, degree - 1)
    j = np.concatenate([np.arange(n)[:, None], others], axis=1).ravel()  # (E,)
    key = np.sort(i * n + j)  # (E,)
    return np.column_stack(np.divmod(key, n))  # (E, 2)


def edges_from_adjacency(A, self_loops: bool = True) -> np.ndarray:
    """The edges (i, j) with A[i, j] != 0, plus every (i, i) when ``self_loops``, sorted. (E, 2)."""
    A = as_square(A, "A")  # (n, n)
    allowed = A != 0  # (n, n)
    if self_loops:
        allowed |= np.eye(A.shape[0], dtype=bool)
    return np.argwhere(allowed).astype(np.int64)  # (E, 2)


def edges_to_mask(edges, n_q: int, n_k: int) -> np.ndarray:
    """M[i, j] = True exactly when (i, j) is an edge: the dense mask of the same graph. (n_q, n_k)."""
    edges = as_edges(edges, "edges", n_q, n_k)  # (E, 2)
    M = np.zeros((n_q, n_k), dtype=bool)  # (n_q, n_k)
    M[edges[:, 0], edges[:, 1]] = True
    return M


def edge_weight_matrix(w, edges, n_q: int, n_k: int) -> np.ndarray:
    """W[i, j] = w_e for each edge e = (i, j), 0 elsewhere: for drawing small graphs. (n_q, n_k)."""
    edges = as_edges(edges, "edges", n_q, n_k)  # (E, 2)
    w = np.asarray(w, dtype=float)  # (E,)
    check_same(w.shape[0], edges.shape[0], "w must hold one weight per edge (E)")
    W = np.zeros((n_q, n_k))  # (n_q, n_k)
    W[edges[:, 0], edges[:, 1]] = w
    return W


def cost_counts(n: int, E: int, d: int, itemsize: int = 8, index_size: int = 8) -> dict[str, int]:
    """What one layer evaluates and stores, dense over all n² pairs against sparse over E edges.

    Score evaluations (dot products), multiply-adds (scores plus the weighted sum, d_v = d), and the
    bytes of the weights: n² floats dense, E floats plus E column indices and n + 1 row pointers
    sparse (CSR). All exact integers.
    """
    n, E, d = int(n), int(E), int(d)
    return {
        "dense_scores": n * n,
        "sparse_scores": E,
        "dense_madds": 2 * n * n * d,
        "sparse_madds": 2 * E * d,
        "dense_weight_bytes": n * n * itemsize,
        "sparse_weight_bytes": E * (itemsize + index_size) + (n + 1) * index_size,
    }


# --------------------------------------------------------------------------------------------------
# The derivation, in SymPy
# --------------------------------------------------------------------------------------------------
_i, _j, _l = sp.symbols("i j l", integer=True)
_s = sp.IndexedBase("s")
_w = sp.IndexedBase("w")
_y = sp.IndexedBase("y")
_v = sp.IndexedBase("v")
_m = sp.IndexedBase("m")
_N = sp.Function("N")


class _SumOver(sp.Expr):
    """Σ_{var ∈ domain} term, for display only: a sum over a set that SymPy's Sum cannot bound."""

    def _latex(self, printer):
        term, var, domain = self.args
        return rf"\sum_{{{printer._print(var)} \in {printer._print(domain)}}} {printer._print(term)}"


class _Frac(sp.Expr):
    """num / den, for display only, printed as a fraction whatever den is."""

    def _latex(self, printer):
        num, den = self.args
        return rf"\frac{{{printer._print(num)}}}{{{printer._print(den)}}}"


def _shifted_exp(s, m):
    """exp(s − m) with the difference kept in the order written."""
    return sp.exp(sp.Add(s, -m, evaluate=False), evaluate=False)


def _summed_out(expr, i: int, nbrs, values: dict):
    """A display for row ``i``: each Σ over N(i) written out over ``nbrs`` (indices from 0), each
    fraction divided, and each indexed symbol x[a, b] replaced by ``values[x](a, b)``."""
    expr = expr.subs(_i, i)
    expr = expr.replace(lambda e: isinstance(e, _SumOver),
                        lambda e: sp.Add(*[e.args[0].subs(e.args[1], c) for c in nbrs]))
    expr = expr.replace(lambda e: isinstance(e, _Frac), lambda e: e.args[0] / e.args[1])
    return expr.replace(lambda e: isinstance(e, sp.Indexed) and e.base in values,
                        lambda e: values[e.base](*[int(k) for k in e.indices]))


def _display_edge_softmax():
    num = _shifted_exp(_s[_i, _j], _m[_i])
    den = _SumOver(_shifted_exp(_s[_i, _l], _m[_i]), _l, _N(_i))
    return sp.Eq(_w[_i, _j], _Frac(num, den), evaluate=False)


def _display_edge_attention():
    return sp.Eq(_y[_i], _SumOver(sp.Mul(_w[_i, _j], _v[_j], evaluate=False), _j, _N(_i)),
                 evaluate=False)


# A small graph on three nodes, as (i, j) edges: node 0 sees 0 and 2, node 1 sees 0, 1, 2, node 2 sees 1.
_SMALL_EDGES = [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2), (2, 1)]


def exact_masked_softmax(S: sp.Matrix, mask) -> sp.Matrix:
    """The dense masked softmax of the previous chapters, exactly: weight 0 off the mask."""
    rows = []
    for a in range(S.rows):
        z = sum(sp.exp(S[a, c]) for c in range(S.cols) if mask[a][c])
        rows.append([sp.exp(S[a, c]) / z if mask[a][c] else sp.Integer(0) for c in range(S.cols)])
    return sp.Matrix(rows)


@derivation("eq-edge-softmax", display=_display_edge_softmax,
            strength="verified", scope="for a 3-node graph with symbolic scores and shifts")
def _check_edge_softmax():
    # Subtracting the row maximum m_i changes no weight: exp(s - m) / Σ exp(s_l - m) = exp(s) / Σ exp(s_l).
    s1, s2, s3, m = sp.symbols("s1 s2 s3 m", real=True)
    shifted = sp.exp(s1 - m) / (sp.exp(s1 - m) + sp.exp(s2 - m) + sp.exp(s3 - m))
    yield sp.Eq(sp.simplify(shifted - sp.exp(s1) / (sp.exp(s1) + sp.exp(s2) + sp.exp(s3))), 0)
    # The display, summed out over the neighbours of each node of a small graph with symbolic scores
    # and shifts, is the masked softmax of those scores.
    S = sp.Matrix(3, 3, lambda a, c: sp.Symbol(f"s_{a}{c}", real=True))
    shifts = sp.symbols("m_0:3", real=True)
    mask = [[(a, c) in _SMALL_EDGES for c in range(3)] for a in range(3)]
    W = exact_masked_softmax(S, mask)
    for a in range(3):
        nbrs = [c for (r, c) in _SMALL_EDGES if r == a]
        for c in nbrs:
            shown = _summed_out(_display_edge_softmax().rhs.subs(_j, c), a, nbrs,
                                {_s: lambda r, q: S[r, q], _m: lambda r: shifts[r]})
            yield sp.Eq(sp.simplify(shown - W[a, c]), 0)
    # The package's segment softmax equals the exact weights on integer scores.
    scores_ = [3, -1, 0, 2, 2, -5]
    indptr = [0, 2, 5, 6]
    got = segment_softmax(np.array(scores_, dtype=float), np.array(indptr))  # (6,)
    exact = []
    for a in range(3):
        seg = scores_[indptr[a]:indptr[a + 1]]
        exact += [sp.exp(x) / sum(sp.exp(y) for y in seg) for x in seg]
    yield bool(np.allclose([float(x.evalf(30)) for x in exact], got, rtol=1e-15, atol=0))


@derivation("eq-edge-attention", display=_display_edge_attention,
            strength="verified", scope="for symbolic scores and values on a 3-node graph")
def _check_edge_attention():
    # On a small graph with symbolic scores, the edge formula is the masked dense formula, entry by entry.
    S = sp.Matrix(3, 3, lambda a, c: sp.Symbol(f"s_{a}{c}", real=True))
    Vs = sp.Matrix(3, 2, lambda a, c: sp.Symbol(f"v_{a}{c}", real=True))
    mask = [[(a, c) in _SMALL_EDGES for c in range(3)] for a in range(3)]
    dense = exact_masked_softmax(S, mask) * Vs
    for a in range(3):
        nbrs = [c for (r, c) in _SMALL_EDGES if r == a]
        z = sum(sp.exp(S[a, c]) for c in nbrs)
        by_edges = sum((sp.exp(S[a, c]) / z * Vs[c, :] for c in nbrs), sp.zeros(1, 2))
        yield sp.Eq(by_edges, dense[a, :], evaluate=False)
        # ... which is the display, summed out over the neighbours with the edge-softmax weights.
        Wm = exact_masked_softmax(S, mask)
        for col in range(2):
            shown = _summed_out(_display_edge_attention().rhs, a, nbrs,
                                {_w: lambda r, q, Wm=Wm: Wm[r, q], _v: lambda q, col=col: Vs[q, col]})
            yield sp.Eq(shown, dense[a, col])
    # The package's edge_attention equals the exact result on integer inputs (d = 4, so √d = 2).
    Qi = [[1, 0, -1, 2], [0, 1, 1, 0], [2, -1, 0, 1]]
    Ki = [[1, 1, 0, 0], [0, 2, -1, 1], [-1, 0, 1, 1]]
    Vi = [[1, -2], [0, 3], [4, 1]]
    Se = sp.Matrix(Qi) * sp.Matrix(Ki).T / 2
    exact = exact_masked_softmax(Se, mask) * sp.Matrix(Vi)
    got = edge_attention(Qi, Ki, Vi, _SMALL_EDGES[::-1])  # (3, 2), edges given in reverse order
    yield bool(np.allclose(np.array(exact.evalf(30), dtype=float), got, rtol=1e-14, atol=1e-14))


@derivation("thm-edge-attention-is-masked-attention",
            strength="verified", scope="for symbolic scores, shifts and values on a 3-node graph; "
                                       "to 1e-12 on a seeded 12-node graph")
def _check_edge_is_masked():
    # The statement, exactly on a small graph with symbolic scores, shifts and values: y_i of
    # eq-edge-attention, with the weights of eq-edge-softmax (both displays summed out over N(i)), is
    # row i of softmax(S, M) V, the masked softmax written out as M_ij e^{S_ij} / Σ_l M_il e^{S_il}
    # with M_ij = 1 on the edges and 0 off them.
    S = sp.Matrix(3, 3, lambda a, c: sp.Symbol(f"s_{a}{c}", real=True))
    Vs = sp.Matrix(3, 2, lambda a, c: sp.Symbol(f"v_{a}{c}", real=True))
    shifts = sp.symbols("m_0:3", real=True)
    M01 = sp.Matrix(3, 3, lambda a, c: int((a, c) in _SMALL_EDGES))
    masked = sp.Matrix(3, 3, lambda a, c: M01[a, c] * sp.exp(S[a, c])
                       / sum(M01[a, q] * sp.exp(S[a, q]) for q in range(3)))
    dense = masked * Vs  # (3, 2)

    def nbrs(a):
        return [c for (r, c) in _SMALL_EDGES if r == a]

    def weight(a, c):  # w_ac of the display eq-edge-softmax
        return _summed_out(_display_edge_softmax().rhs.subs(_j, c), a, nbrs(a),
                           {_s: lambda r, q: S[r, q], _m: lambda r: shifts[r]})

    for a in range(3):
        for col in range(2):
            y = _summed_out(_display_edge_attention().rhs, a, nbrs(a),
                            {_w: weight, _v: lambda q, col=col: Vs[q, col]})
            yield sp.Eq(y, dense[a, col])
    # The dense masked softmax the package's checks use keeps exactly the edge terms: weight 0 off
    # the mask, rows that sum to 1.
    mask = [[(a, c) in _SMALL_EDGES for c in range(3)] for a in range(3)]
    W = exact_masked_softmax(S, mask)
    for a in range(3):
        yield sp.Eq(sum(W[a, :]), 1)
        for c in range(3):
            if not mask[a][c]:
                yield sp.Eq(W[a, c], 0)
    # Numerically, on a seeded random graph: edge_attention equals attention with the mask.
    rng = np.random.default_rng(8)
    n, d = 12, 4
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))  # (n, d) each
    edges = random_graph_edges(n, 3, rng)  # (3n, 2)
    Y_dense, _ = attention(Q, K, V, mask=edges_to_mask(edges, n, n))  # (n, d)
    yield bool(np.allclose(edge_attention(Q, K, V, edges), Y_dense, rtol=0, atol=1e-12))
