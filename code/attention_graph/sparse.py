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

from .attention import attention
from .registry import derivation
from .validation import as_edges, as_matrix, as_qkv, check_same

__all__ = ["edge_attention", "segment_softmax", "csr_attention", "unsorted_attention", "gather_rows",
           "random_graph_edges", "cost_counts", "edges_from_adjacency", "edges_to_mask", "edge_weight_matrix",
           "fit_loglog_slope", "benchmark", "benchmark_summary", "read_record"]

# What the benchmark must show (issue 8): slope of time against E, peak bytes at n = 1e5, E = 1e6,
# d = 64, and time relative to the fastest other formulation at E = 1e6.
TARGETS = {"slope": 1.15, "peak_bytes": 1e9, "ratio": 2.0}
# The size at which memory and speed are judged: n nodes, each attending to `degree` keys, width d.
FLAGSHIP = {"n": 100_000, "degree": 10, "d": 64}

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


def _block_scores(Q, K, rows, cols) -> np.ndarray:
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
        raise TypeError(f"s must be real scores and indptr integers; got {s.dtype} and {indptr.dtype}")
    if s.ndim != 1 or indptr.ndim != 1 or indptr.size < 1:
        raise ValueError("s must be 1-d (E,) and indptr 1-d (n_q + 1,) with at least one entry")
    s = s.astype(np.result_type(s, np.float32) if s.dtype.kind == "f" else np.float64, copy=False)
    if not np.isfinite(s).all():
        raise ValueError(f"s must be finite; found {s[~np.isfinite(s)][0]} at index "
                         f"{int(np.flatnonzero(~np.isfinite(s))[0])}")
    counts = np.diff(indptr)  # (n_q,)
    if indptr[0] != 0 or indptr[-1] != s.size or (counts < 1).any():
        raise ValueError(
            "indptr must start at 0, end at E = len(s) and increase strictly: every query needs at "
            "least one edge (an empty row has no softmax)"
        )
    if counts.size == 0:
        return s.copy()
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
    s = _block_scores(Q, K, rows, cols)  # (E,), sorted by (i, j)
    if not np.isfinite(s).all():
        raise ValueError(f"Q Kᵀ/√d overflowed {s.dtype} on some edge: rescale Q or K")
    w = segment_softmax(s, indptr)  # (E,), sorted by (i, j)
    Y = _weighted_rows(w, indptr, cols, V, n_q, n_k)  # (n_q, d_v)
    if not return_weights:
        return Y
    if order is not None:
        w_in = np.empty_like(w)  # (E,)
        w_in[order] = w
        w = w_in
    return Y, w


def _weighted_rows(w, indptr, cols, V, n_q: int, n_k: int) -> np.ndarray:
    """Y = W V with W the sparse (n_q, n_k) matrix of the edge weights (SciPy CSR). (n_q, d_v)."""
    from scipy.sparse import csr_array

    return np.asarray(csr_array((w, cols, indptr), shape=(n_q, n_k)) @ V)  # (n_q, d_v)


def csr_attention(Q, K, V, A) -> np.ndarray:
    """The lean SciPy formulation the benchmark compares with: no checks, A given as CSR. (n_q, d_v).

    ``A`` is a ``scipy.sparse`` CSR matrix or array of shape (n_q, n_k) with sorted column indices
    and no empty row (its values are ignored, its pattern is the graph). Q, K, V must be valid float
    arrays. It is what the best NumPy/SciPy code we could write does when the graph is already in
    CSR form and the inputs are trusted; ``edge_attention`` adds validation and sorting on top.
    """
    from scipy.sparse import csr_array

    indptr, cols = A.indptr, A.indices  # (n_q + 1,), (E,)
    counts = np.diff(indptr)  # (n_q,)
    rows = np.repeat(np.arange(A.shape[0]), counts)  # (E,)
    s = _block_scores(Q, K, rows, cols)  # (E,)
    m = np.maximum.reduceat(s, indptr[:-1])  # (n_q,)
    e = np.exp(s - m[rows])  # (E,)
    e /= np.add.reduceat(e, indptr[:-1])[rows]
    return np.asarray(csr_array((e, cols, indptr), shape=A.shape) @ V)  # (n_q, d_v)


def gather_rows(K, V, cols) -> None:
    """Only the memory traffic: gather the rows k_j and v_j of every edge, CHUNK at a time.

    The benchmark times it as the floor under every formulation, which all read these rows.
    """
    E, m = cols.size, min(CHUNK, cols.size)
    k_rows = np.empty((m, K.shape[1]), dtype=K.dtype)  # (CHUNK, d)
    v_rows = np.empty((m, V.shape[1]), dtype=V.dtype)  # (CHUNK, d_v)
    for a in range(0, E, CHUNK):
        b = min(a + CHUNK, E)
        np.take(K, cols[a:b], axis=0, out=k_rows[:b - a], mode="clip")
        np.take(V, cols[a:b], axis=0, out=v_rows[:b - a], mode="clip")


def unsorted_attention(Q, K, V, edges) -> np.ndarray:
    """The other formulation measured: edges in any order, ufunc.at and bincount, no checks. (n_q, d_v).

    Segment max by ``np.maximum.at``, sums by ``np.bincount``, and ``Y`` by SciPy's COO → CSR
    conversion. ``edges`` must be a valid int64 (E, 2) array with every query present.
    """
    from scipy.sparse import coo_array

    rows, cols = edges[:, 0], edges[:, 1]  # (E,), (E,)
    n_q, n_k = Q.shape[0], K.shape[0]
    s = _block_scores(Q, K, rows, cols)  # (E,)
    m = np.full(n_q, -np.inf)  # (n_q,)
    np.maximum.at(m, rows, s)
    e = np.exp(s - m[rows])  # (E,)
    e /= np.bincount(rows, weights=e, minlength=n_q)[rows]
    return np.asarray(coo_array((e, (rows, cols)), shape=(n_q, n_k)).tocsr() @ V)  # (n_q, d_v)


# --------------------------------------------------------------------------------------------------
# Graphs, masks and costs
# --------------------------------------------------------------------------------------------------


def random_graph_edges(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """Edges of a random graph where each of n nodes attends to itself and degree − 1 others.

    The others are distinct and drawn uniformly; E = n · degree exactly. Returned sorted by (i, j),
    shape (E, 2), int64.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    if not (isinstance(n, (int, np.integer)) and isinstance(degree, (int, np.integer))):
        raise TypeError("n and degree must be integers")
    if not 1 <= degree <= n:
        raise ValueError(f"need 1 <= degree <= n; got n={n}, degree={degree}")
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
    A = as_matrix(A, "A", shape_doc="(n, n)")  # (n, n)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square (n, n); got shape {A.shape}")
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


def _exact_masked_softmax(S: sp.Matrix, mask) -> sp.Matrix:
    """The dense masked softmax of the previous chapters, exactly: weight 0 off the mask."""
    rows = []
    for a in range(S.rows):
        z = sum(sp.exp(S[a, c]) for c in range(S.cols) if mask[a][c])
        rows.append([sp.exp(S[a, c]) / z if mask[a][c] else sp.Integer(0) for c in range(S.cols)])
    return sp.Matrix(rows)


@derivation("eq-edge-softmax", display=_display_edge_softmax,
            strength="verified", scope="for a row of 3 symbolic scores and a symbolic shift")
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
    W = _exact_masked_softmax(S, mask)
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
    dense = _exact_masked_softmax(S, mask) * Vs
    for a in range(3):
        nbrs = [c for (r, c) in _SMALL_EDGES if r == a]
        z = sum(sp.exp(S[a, c]) for c in nbrs)
        by_edges = sum((sp.exp(S[a, c]) / z * Vs[c, :] for c in nbrs), sp.zeros(1, 2))
        yield sp.Eq(by_edges, dense[a, :], evaluate=False)
        # ... which is the display, summed out over the neighbours with the edge-softmax weights.
        Wm = _exact_masked_softmax(S, mask)
        for col in range(2):
            shown = _summed_out(_display_edge_attention().rhs, a, nbrs,
                                {_w: lambda r, q: Wm[r, q], _v: lambda q, col=col: Vs[q, col]})
            yield sp.Eq(shown, dense[a, col])
    # The package's edge_attention equals the exact result on integer inputs (d = 4, so √d = 2).
    Qi = [[1, 0, -1, 2], [0, 1, 1, 0], [2, -1, 0, 1]]
    Ki = [[1, 1, 0, 0], [0, 2, -1, 1], [-1, 0, 1, 1]]
    Vi = [[1, -2], [0, 3], [4, 1]]
    Se = sp.Matrix(Qi) * sp.Matrix(Ki).T / 2
    exact = _exact_masked_softmax(Se, mask) * sp.Matrix(Vi)
    got = edge_attention(Qi, Ki, Vi, _SMALL_EDGES[::-1])  # (3, 2), edges given in reverse order
    yield bool(np.allclose(np.array(exact.evalf(30), dtype=float), got, rtol=1e-14, atol=1e-14))


@derivation("thm-edge-attention-is-masked-attention",
            strength="verified", scope="for symbolic scores on a 3-node graph; to 1e-12 on a seeded 12-node graph")
def _check_edge_is_masked():
    # Symbolically: with mask M = the edge set, masked softmax keeps exactly the edge terms and their
    # weights are the edge softmax; so each output row is the same sum (see eq-edge-attention).
    S = sp.Matrix(3, 3, lambda a, c: sp.Symbol(f"s_{a}{c}", real=True))
    mask = [[(a, c) in _SMALL_EDGES for c in range(3)] for a in range(3)]
    W = _exact_masked_softmax(S, mask)
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


# --------------------------------------------------------------------------------------------------
# The benchmark: python -m attention_graph.bench sparse
# --------------------------------------------------------------------------------------------------


def _interleaved_medians(fns: dict, repeat: int, min_seconds: float = 0.05) -> dict[str, float]:
    """Median seconds per call of each function, timed in turn in every one of ``repeat`` rounds.

    Returns ``{name: wall seconds, name + "_cpu": CPU seconds of this process}``. Each function is
    first called once (warm-up) and given a number of calls per round that lasts at least
    ``min_seconds`` (as ``timeit`` does), so tiny sizes are not dominated by the clock or by one
    preemption. Interleaving makes every function see the same load, so their ratio is fair on a
    shared machine; the CPU time does not count the time the process waited for a core.
    """
    import math
    import time

    number = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        number[name] = max(1, math.ceil(min_seconds / max(time.perf_counter() - t0, 1e-9)))
    wall = {name: [] for name in fns}
    cpu = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(number[name]):
                fn()
            wall[name].append((time.perf_counter() - t0) / number[name])
            cpu[name].append((time.process_time() - c0) / number[name])
    out = {name: float(np.median(ts)) for name, ts in wall.items()}
    out.update({f"{name}_cpu": float(np.median(ts)) for name, ts in cpu.items()})
    return out


def _peak_bytes(fn) -> int:
    """Peak bytes allocated through Python's allocators (NumPy included) during fn(), tracemalloc."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return int(peak - base)


_RSS_SCRIPT = """
import json, sys
import numpy as np
from attention_graph.sparse import edge_attention, random_graph_edges

def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

n, degree, d, seed = (int(x) for x in sys.argv[1:5])
rng = np.random.default_rng(seed)
Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
edges = rng.permutation(random_graph_edges(n, degree, rng))
setup_hwm, before = status_kib("VmHWM"), status_kib("VmRSS")
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current resident size
    reset = True
except OSError:
    reset = False
Y = edge_attention(Q, K, V, edges)
call_hwm = status_kib("VmHWM")
print(json.dumps({"setup_hwm": setup_hwm, "before": before, "call_hwm": call_hwm, "reset": reset,
                  "E": int(edges.shape[0]), "finite": bool(np.isfinite(Y).all())}))
"""


def _subprocess_peak_rss(n: int, degree: int, d: int, seed: int) -> dict:
    """Peak resident memory of a fresh Python process that builds the inputs and runs edge_attention.

    Read from ``VmHWM`` in ``/proc/self/status`` (Linux). ``process_peak_bytes`` covers the whole
    process: interpreter, libraries, graph generation, inputs and the call. The high-water mark is
    reset just before the call (``/proc/self/clear_refs``), so ``call_peak_rss_bytes`` is the peak
    during the call alone, inputs included, against ``rss_before_bytes`` held just before it.
    ``ru_maxrss`` is not used: on Linux it keeps the parent's high-water mark through fork and exec,
    and reported the size of the benchmark process that launched this one.
    """
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(n), str(degree), str(d), str(seed)],
                         capture_output=True, text=True, check=True)
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    return {"n": n, "E": rec["E"], "d": d, "finite": rec["finite"], "hwm_reset": rec["reset"],
            "rss_before_bytes": rec["before"] * 1024,
            "call_peak_rss_bytes": rec["call_hwm"] * 1024,
            "process_peak_bytes": max(rec["setup_hwm"], rec["call_hwm"]) * 1024}


def fit_loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    x, y = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))  # (k,), (k,)
    return float(np.polyfit(x, y, 1)[0])


def benchmark(quick: bool = False) -> dict:
    """Dense against sparse attention over a range of n at a fixed average degree; see the module doc.

    Times are medians of interleaved rounds, wall clock (``*_seconds``) and CPU time of the process
    (``*_cpu_seconds``); ``*_peak_bytes`` is the peak that tracemalloc saw during one call (NumPy's
    and SciPy's array allocations; the inputs are not counted); the flagship size also records the
    peak resident memory of a fresh process (see ``_subprocess_peak_rss``). The fitted slope and the ratio use the wall clock; their
    CPU-time versions are recorded beside them.
    """
    from scipy.sparse import csr_array

    degree, d, seed = FLAGSHIP["degree"], FLAGSHIP["d"], 2024
    if quick:
        ns_dense, ns_sparse, repeat, flagship = [64, 128, 256], [64, 128, 256, 1000, 2000], 3, 2000
    else:
        ns_dense = [250, 500, 1000, 2000, 4000]
        ns_sparse = [250, 500, 1000, 2000, 4000, 10_000, 20_000, 50_000, FLAGSHIP["n"]]
        repeat, flagship = 7, FLAGSHIP["n"]
    import os

    load_start = list(os.getloadavg())
    rng = np.random.default_rng(seed)
    sizes = []
    for n in ns_sparse:
        Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))  # (n, d) each
        edges = random_graph_edges(n, degree, rng)  # (E, 2), sorted
        shuffled = rng.permutation(edges)  # (E, 2), the same graph in random order
        A = csr_array((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
        A.sort_indices()
        fns = {
            "sparse": lambda: edge_attention(Q, K, V, shuffled),
            "sparse_sorted_input": lambda: edge_attention(Q, K, V, edges),
            "csr": lambda: csr_attention(Q, K, V, A),
            "unsorted_at": lambda: unsorted_attention(Q, K, V, shuffled),
            "gather": lambda: gather_rows(K, V, edges[:, 1]),
        }
        row = {"n": n, "E": int(len(edges))}
        if n in ns_dense:
            M = edges_to_mask(edges, n, n)  # (n, n)
            fns["dense"] = lambda: attention(Q, K, V, mask=M)
            row["dense_peak_bytes"] = _peak_bytes(fns["dense"])
        row.update({f"{k}_seconds": v for k, v in _interleaved_medians(fns, repeat).items()})
        row["sparse_peak_bytes"] = _peak_bytes(fns["sparse"])
        row["csr_peak_bytes"] = _peak_bytes(fns["csr"])
        row["input_bytes"] = int(Q.nbytes + K.nbytes + V.nbytes + shuffled.nbytes)
        sizes.append(row)
        del fns, Q, K, V, A, edges, shuffled
    E_lo, E_hi = (1e3, 2e4) if quick else (1e4, 1e6)
    fit = [r for r in sizes if E_lo <= r["E"] <= E_hi]
    slope = fit_loglog_slope([r["E"] for r in fit], [r["sparse_seconds"] for r in fit])
    slope_cpu = fit_loglog_slope([r["E"] for r in fit], [r["sparse_cpu_seconds"] for r in fit])
    top = sizes[-1]
    best = min(("csr", "unsorted_at"), key=lambda k: top[f"{k}_seconds"])
    best_cpu = min(("csr", "unsorted_at"), key=lambda k: top[f"{k}_cpu_seconds"])
    return {
        "degree": degree, "d": d, "dtype": "float64", "seed": seed, "repeat": repeat, "chunk": CHUNK,
        "timing": ("median over interleaved rounds of wall-clock seconds per call; each round repeats "
                   "a call enough times to last 0.05 s; one warm-up call each"),
        "memory": ("*_peak_bytes: tracemalloc peak during one call, inputs excluded (NumPy and SciPy "
                   "arrays are traced); flagship: VmHWM (peak resident set) of a fresh process, "
                   "for the whole process and, after a reset, for the call alone"),
        "dense_call": "attention(Q, K, V, mask=M) with the dense boolean mask M built beforehand",
        "sparse_call": "edge_attention(Q, K, V, edges) with the edges in random order (it sorts them)",
        "sizes": sizes,
        "slope": {"E_min": int(fit[0]["E"]), "E_max": int(fit[-1]["E"]), "points": len(fit),
                  "value": slope, "value_cpu": slope_cpu},
        "ratio": {"n": top["n"], "E": top["E"], "best": best, "best_cpu": best_cpu,
                  "value": top["sparse_seconds"] / top[f"{best}_seconds"],
                  "value_cpu": top["sparse_cpu_seconds"] / top[f"{best_cpu}_cpu_seconds"]},
        "flagship": _subprocess_peak_rss(flagship, degree, d, seed),
        "load_average_start": load_start, "load_average_end": list(os.getloadavg()),
        "note": ("run on a machine shared with other processes (other authors' builds); medians "
                 "of interleaved repeats limit, but do not remove, the effect of their load"),
    }


FORMULATIONS = {
    "csr": "the lean CSR formulation (graph given as a SciPy CSR matrix, no checks)",
    "unsorted_at": "the ufunc.at formulation (edges in any order, no checks)",
}


def benchmark_summary(record: dict) -> dict:
    """The numbers the chapter quotes from a benchmark record, as plain Python values."""
    res, mach = record["results"], record["machine"]
    rows = res["sizes"]
    top, flag = rows[-1], res["flagship"]
    dense = [r for r in rows if "dense_seconds" in r]
    biggest_dense = dense[-1]
    costs = cost_counts(top["n"], top["E"], res["d"])
    return {
        "quick": bool(record["quick"]),
        "degree": int(res["degree"]), "d": int(res["d"]), "repeat": int(res["repeat"]),
        "n_min": int(rows[0]["n"]), "n_max": int(top["n"]), "n_dense_max": int(biggest_dense["n"]),
        "dense_over_sparse_at_dense_max": biggest_dense["dense_seconds"] / biggest_dense["sparse_seconds"],
        "dense_peak_over_one_w": biggest_dense["dense_peak_bytes"] / (8 * biggest_dense["n"] ** 2),
        "block_buffer_mb": 2 * res["chunk"] * res["d"] * 8 / 1e6,
        "slope": float(res["slope"]["value"]), "slope_cpu": float(res["slope"]["value_cpu"]),
        "slope_E_min": int(res["slope"]["E_min"]), "slope_E_max": int(res["slope"]["E_max"]),
        "slope_points": int(res["slope"]["points"]),
        "ratio": float(res["ratio"]["value"]), "ratio_cpu": float(res["ratio"]["value_cpu"]),
        "ratio_E": int(res["ratio"]["E"]), "best": FORMULATIONS[res["ratio"]["best"]],
        "sparse_seconds_top": float(top["sparse_seconds"]),
        "best_seconds_top": float(top[f"{res['ratio']['best']}_seconds"]),
        "sorted_seconds_top": float(top["sparse_sorted_input_seconds"]),
        "gather_seconds_top": float(top["gather_seconds"]),
        "call_peak_mb": top["sparse_peak_bytes"] / 1e6,
        "input_mb": top["input_bytes"] / 1e6,
        "flag_n": int(flag["n"]), "flag_E": int(flag["E"]), "flag_d": int(flag["d"]),
        "process_peak_mb": flag["process_peak_bytes"] / 1e6,
        "call_rss_peak_mb": flag["call_peak_rss_bytes"] / 1e6,
        "rss_before_mb": flag["rss_before_bytes"] / 1e6,
        "dense_w_gb": costs["dense_weight_bytes"] / 1e9,
        "cpus": int(mach["cpus"]), "date": str(mach["date"]),
        "versions": f"Python {mach['python']}, NumPy {mach['numpy']}, SciPy {mach['scipy']}",
    }


def read_record(path=None) -> dict:
    """The committed benchmark record ``book/data/bench_sparse.json`` (or ``path``)."""
    import json
    from pathlib import Path

    from .bench import DATA

    path = Path(path) if path is not None else DATA / "bench_sparse.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `python -m attention_graph.bench sparse`")
    return json.loads(path.read_text())
