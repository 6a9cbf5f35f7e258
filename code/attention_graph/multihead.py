"""Multi-head attention: H heads side by side, their outputs concatenated and mixed by W_O.

Row-vector convention: X @ W. The model width d_model is split into H heads of d_h = d_model/H
columns; head h reads the h-th contiguous block of d_h columns of X_q W_Q, X_kv W_K and X_kv W_V.
The chapter ``book/multihead.md`` derives it and reads it as an edge-typed multigraph, and, with
queries and keys from different sequences (n_q ≠ n_k), as a bipartite graph. The SymPy checks behind
its labels are registered here.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .attention import attention
from .registry import close_to_exact, derivation, symbol_matrix
from .validation import as_int, as_matrix, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["bipartite_adjacency", "head_messages", "multi_head_attention"]


def split_heads(M, n_heads: int, name: str = "M") -> list[np.ndarray]:
    """[M_1, …, M_H]: the H contiguous blocks of d_model/H columns of M, each (n, d_h).

    >>> [b.tolist() for b in split_heads([[1, 2, 3, 4]], 2)]
    [[[1.0, 2.0]], [[3.0, 4.0]]]
    """
    M = as_matrix(M, name, shape_doc="(n, d_model)")  # (n, d_model)
    H = as_int(n_heads, "n_heads")
    if M.shape[1] % H:
        raise ValueError(f"{name} has {M.shape[1]} columns, not divisible into n_heads = {H} "
                         "heads of equal width")
    d_h = M.shape[1] // H
    return [M[:, h * d_h:(h + 1) * d_h] for h in range(H)]  # H × (n, d_h)


def _inputs(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads=None):
    """The inputs as finite float arrays of one dtype, checked for shape, H and H_kv."""
    X_q = as_matrix(X_q, "X_q", shape_doc="(n_q, d_model)")  # (n_q, d_model)
    X_kv = as_matrix(X_kv, "X_kv", shape_doc="(n_k, d_model)")  # (n_k, d_model)
    check_same(X_q.shape[1], X_kv.shape[1], "X_q and X_kv must share d_model (columns)")
    d_model = X_q.shape[1]
    H = as_int(n_heads, "n_heads")
    if d_model == 0 or d_model % H:
        raise ValueError(f"d_model = {d_model} is not divisible into n_heads = {H} heads of equal "
                         "width (d_h = d_model/H must be a positive integer)")
    H_kv = H if n_kv_heads is None else as_int(n_kv_heads, "n_kv_heads")
    if H % H_kv:
        raise ValueError(f"n_kv_heads = {H_kv} must divide n_heads = {H}: each key/value head serves "
                         "a group of n_heads/n_kv_heads query heads")
    d_kv = H_kv * (d_model // H)
    Ws = []
    for name, W, cols in (("W_Q", W_Q, d_model), ("W_K", W_K, d_kv), ("W_V", W_V, d_kv), ("W_O", W_O, d_model)):
        W = as_matrix(W, name, shape_doc="(d_model, d_model)")  # (d_model, cols)
        if W.shape != (d_model, cols):
            what = "(d_model, d_model)" if cols == d_model else "(d_model, n_kv_heads·d_h)"
            raise ValueError(f"{name} must have shape {what} = {(d_model, cols)}; got {W.shape}")
        Ws.append(W)
    dtype = np.result_type(X_q, X_kv, *Ws)
    return [a.astype(dtype, copy=False) for a in (X_q, X_kv, *Ws)] + [H, H_kv]


def kv_index(H: int, H_kv: int) -> np.ndarray:
    """γ(h) = ⌊h H_kv / H⌋: the key/value head that query head h reads, 0-based  (eq-gqa). (H,).

    Consecutive query heads share one key/value head, as PyTorch's ``enable_gqa`` does.

    >>> kv_index(4, 2).tolist()
    [0, 0, 1, 1]
    """
    return np.arange(H) // (H // H_kv)  # (H,)


def _heads(X_q, X_kv, W_Q, W_K, W_V, H, mask, H_kv=None):
    """Per head h: (Y_h, W^(h)) = attention(Q_h, K_γ(h), V_γ(h)), Q = X_q W_Q, K = X_kv W_K, V = X_kv W_V."""
    H_kv = H if H_kv is None else H_kv
    Q, K, V = X_q @ W_Q, X_kv @ W_K, X_kv @ W_V  # (n_q, d_model), (n_k, H_kv d_h), (n_k, H_kv d_h)
    Qs, Ks, Vs = split_heads(Q, H, "Q"), split_heads(K, H_kv, "K"), split_heads(V, H_kv, "V")
    return [attention(Q_h, Ks[r], Vs[r], mask=mask)
            for Q_h, r in zip(Qs, kv_index(H, H_kv))]  # H × ((n_q, d_h), (n_q, n_k))


def multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads: int,
                         mask=None, n_kv_heads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Y = [Y_1 ⋯ Y_H] W_O, Y_h = softmax(Q_h K_hᵀ/√d_h) V_h  (eq-multihead).

    ``X_q`` is (n_q, d_model), ``X_kv`` is (n_k, d_model) (the same array for
    self-attention); ``W_Q``, ``W_K``, ``W_V``, ``W_O`` are (d_model, d_model), no biases.
    Head h uses the h-th block of d_h = d_model/n_heads columns of X_q W_Q, X_kv W_K and
    X_kv W_V. ``mask`` (n_q, n_k) is boolean, True where query i may attend to key j, shared
    by the heads. Returns Y (n_q, d_model) and the weights W of shape (n_heads, n_q, n_k):
    one adjacency matrix per head.

    ``n_kv_heads`` = H_kv < n_heads shares keys and values (grouped-query attention, eq-gqa):
    ``W_K`` and ``W_V`` are then (d_model, H_kv·d_h), and query head h reads key/value head
    γ(h) = ⌊h H_kv / H⌋. H_kv = 1 is multi-query attention; the default, H_kv = H, is the above.

    >>> I, X = np.eye(2), [[1.0, 0.0], [0.0, 1.0]]
    >>> Y, W = multi_head_attention(X[:1], X, I, I, I, I, 2)
    >>> W.shape, W[1].tolist()
    ((2, 1, 2), [[0.5, 0.5]])
    """
    X_q, X_kv, W_Q, W_K, W_V, W_O, H, H_kv = _inputs(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads, n_kv_heads)
    return _multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, H, mask, H_kv)


def _multi_head_attention(X_q, X_kv, W_Q, W_K, W_V, W_O, H: int, mask=None,
                          H_kv: int | None = None):
    """Y = [Y_1 ⋯ Y_H] W_O, Y_h = softmax(Q_h K_γ(h)ᵀ/√d_h) V_γ(h)  (eq-multihead, eq-gqa)."""
    heads = _heads(X_q, X_kv, W_Q, W_K, W_V, H, mask, H_kv)
    Y_cat = np.hstack([Y_h for Y_h, _ in heads])  # (n_q, d_model)
    W = np.stack([W_h for _, W_h in heads])  # (H, n_q, n_k)
    return Y_cat @ W_O, W  # (n_q, d_model), (H, n_q, n_k)


def head_messages(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads: int, mask=None) -> np.ndarray:
    """M_h = Y_h W_O^(h), the message of head h; Y = Σ_h M_h  (thm-heads-add). Shape (H, n_q, d_model).

    W_O^(h) is the h-th block of d_h rows of W_O: the rows that multiply head h's columns.

    >>> I = np.eye(2)
    >>> M = head_messages([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], I, I, I, I, 2)
    >>> M.shape
    (2, 1, 2)
    """
    X_q, X_kv, W_Q, W_K, W_V, W_O, H, _ = _inputs(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads)
    heads = _heads(X_q, X_kv, W_Q, W_K, W_V, H, mask)
    W_O_rows = split_heads(W_O.T, H, "W_O.T")  # H × (d_model, d_h): row blocks of W_O, transposed
    return np.stack([Y_h @ W_Oh.T for (Y_h, _), W_Oh in zip(heads, W_O_rows)])  # (H, n_q, d_model)


def bipartite_adjacency(W) -> np.ndarray:
    """A_cross = [[0, W], [0, 0]]: cross-attention weights W (n_q, n_k) on n_q + n_k nodes  (eq-bipartite).

    Nodes 0..n_q−1 are the queries (decoder tokens), n_q..n_q+n_k−1 the keys (encoder tokens); every
    edge goes from a query to a key, so A_cross is the adjacency of a bipartite graph, and A_cross² = 0.

    >>> bipartite_adjacency([[0.25, 0.75]])
    array([[0.  , 0.25, 0.75],
           [0.  , 0.  , 0.  ],
           [0.  , 0.  , 0.  ]])
    """
    W = as_matrix(W, "W", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    if (W < 0).any():
        raise ValueError("W must be non-negative (attention weights)")
    n_q, n_k = W.shape
    A_cross = np.zeros((n_q + n_k, n_q + n_k), dtype=W.dtype)  # (n_q + n_k, n_q + n_k)
    A_cross[:n_q, n_q:] = W
    return A_cross


# --------------------------------------------------------------------------------------------------
# Exact versions and the SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

def softmax_rows_exact(S: sp.Matrix, allowed=None) -> sp.Matrix:
    E = S.applyfunc(sp.exp)
    if allowed is not None:
        E = sp.Matrix(E.rows, E.cols, lambda a, b: E[a, b] if allowed[a][b] else 0)
    return sp.Matrix(E.rows, E.cols, lambda a, b: E[a, b] / sum(E.row(a)))


def exact_heads(X_q, X_kv, W_Q, W_K, W_V, H, allowed=None) -> list[sp.Matrix]:
    """[Y_1, …, Y_H] in exact arithmetic, each head from its own block of d_h columns."""
    Q, K, V = X_q * W_Q, X_kv * W_K, X_kv * W_V
    d_h = Q.cols // H
    out = []
    for h in range(H):
        c = slice(h * d_h, (h + 1) * d_h)
        W_h = softmax_rows_exact(Q[:, c] * K[:, c].T / sp.sqrt(d_h), allowed)
        out.append(W_h * V[:, c])
    return out


def _display_multihead():
    Y, W_O = sp.Symbol("Y"), sp.Symbol("W_O")
    Y1, YH = sp.Symbol("Y_1"), sp.Symbol("Y_H")
    concat = sp.Function(r"\operatorname{concat}")(Y1, sp.Symbol(r"\dots"), YH)
    return sp.Eq(Y, sp.Mul(concat, W_O, evaluate=False), evaluate=False)


def _display_heads_add():
    h, H = sp.symbols("h H", integer=True, positive=True)
    Y_h, W_Oh = sp.Symbol("Y_h", commutative=False), sp.Symbol("W_O^{(h)}", commutative=False)
    return sp.Eq(sp.Symbol("Y"), sp.Sum(Y_h * W_Oh, (h, 1, H)), evaluate=False)


def _display_bipartite():
    W = sp.MatrixSymbol("W", sp.Symbol("n_q"), sp.Symbol("n_k"))
    n_q, n_k = W.shape
    A_cross = sp.BlockMatrix([[sp.ZeroMatrix(n_q, n_q), W], [sp.ZeroMatrix(n_k, n_q), sp.ZeroMatrix(n_k, n_k)]])
    return sp.Eq(sp.Symbol(r"A_{\mathrm{cross}}"), A_cross, evaluate=False)


# A small exact example: three queries and keys, d_model = 4, two heads of width 2.
_X = sp.Matrix([[1, 0, 2, -1], [0, 1, 1, 1], [1, 1, 0, 2]])
_W_Q = sp.Matrix([[1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 1, 1]])
_W_K = sp.Matrix([[0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [1, 0, 0, 0]])
_W_V = sp.Matrix([[1, 2, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [1, 0, 0, 1]])
_W_O = sp.Matrix([[1, 0, 0, 1], [0, 2, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1]])


def _f(M) -> np.ndarray:
    return np.array(M, dtype=float)


@derivation("eq-multihead", display=_display_multihead, strength="verified",
            scope=("for three tokens, d_model = 4 and two heads, with and without a mask, and for "
                   "cross-attention with two queries and three keys"))
def _check_multihead():
    # The package equals the exact formula: two heads of width 2, each softmax scaled by √2 (not
    # √4), concatenated and multiplied by W_O; a mask shared by the heads.
    allowed = [[1, 1, 0], [0, 1, 1], [1, 1, 1]]
    for mask in (None, allowed):
        exact = sp.Matrix.hstack(*exact_heads(_X, _X, _W_Q, _W_K, _W_V, 2, mask)) * _W_O
        m = None if mask is None else np.array(mask, dtype=bool)
        Y, W = multi_head_attention(_f(_X), _f(_X), _f(_W_Q), _f(_W_K), _f(_W_V), _f(_W_O), 2, m)
        yield close_to_exact(exact, Y, atol=1e-12)
    # Cross-attention: two queries, three keys; W has shape (H, n_q, n_k).
    X_q = sp.Matrix([[1, -1, 0, 1], [0, 0, 1, 1]])
    Y, W = multi_head_attention(_f(X_q), _f(_X), _f(_W_Q), _f(_W_K), _f(_W_V), _f(_W_O), 2)
    exact = sp.Matrix.hstack(*exact_heads(X_q, _X, _W_Q, _W_K, _W_V, 2)) * _W_O
    yield close_to_exact(exact, Y, atol=1e-12) and W.shape == (2, 2, 3)


@derivation("thm-heads-add", display=_display_heads_add, strength="verified",
            scope=("for block matrices of symbolic sizes with two, three and four heads, and entry "
                   "by entry for three heads of width two"))
def _check_heads_add():
    # For block matrices of symbolic sizes (n_q × d_h head outputs, d_h × d_out row blocks of W_O) but
    # a fixed number of heads, H = 2, 3 and 4: concatenation times W_O is the sum of Y_h W_O^(h).
    n_q, d_h, d_out = sp.symbols("n_q d_h d_out", integer=True, positive=True)
    for H in (2, 3, 4):
        Ys = [sp.MatrixSymbol(f"Y_{h}", n_q, d_h) for h in range(H)]
        Ws = [sp.MatrixSymbol(f"O_{h}", d_h, d_out) for h in range(H)]
        lhs = sp.block_collapse(sp.BlockMatrix([Ys]) * sp.BlockMatrix([[w] for w in Ws]))
        yield sp.simplify(lhs - sp.MatAdd(*[y * w for y, w in zip(Ys, Ws)])) == sp.ZeroMatrix(n_q, d_out)
    # Entry by entry, for symbolic entries: n_q = 2, H = 3, d_h = 2 (d_model = 6), d_out = 3.
    Ys = [symbol_matrix(f"y{h}", 2, 2) for h in range(3)]
    W_O = symbol_matrix("o", 6, 3)
    yield sp.Eq(sp.Matrix.hstack(*Ys) * W_O,
                sum((Ys[h] * W_O[2 * h:2 * h + 2, :] for h in range(3)), sp.zeros(2, 3)))
    # The package: its messages add up to its output.
    args = (_f(_X), _f(_X), _f(_W_Q), _f(_W_K), _f(_W_V), _f(_W_O), 2)
    yield bool(np.allclose(head_messages(*args).sum(axis=0), multi_head_attention(*args)[0],
                           rtol=0, atol=1e-12))


@derivation("thm-one-head", strength="verified",
            scope=("for symbolic X of three rows and symbolic 2 × 2 projections; the package equals "
                   "attention bit for bit"))
def _check_one_head():
    # H = 1 and W_O = I: the split is the whole matrix, d_h = d_model, and the layer is the single
    # head softmax(X W_Q (X W_K)ᵀ/√d) X W_V. Symbolic X (3 × 2) and projections (2 × 2).
    X, W_Q, W_K, W_V = (symbol_matrix(s, r, 2) for s, r in (("x", 3), ("a", 2), ("b", 2), ("c", 2)))
    # The single head written from its formula, entry by entry, not with the helper softmax_rows_exact:
    # W_ij = exp(S_ij) / Σ_l exp(S_il), S = X W_Q (X W_K)ᵀ / √2.
    S = (X * W_Q) * (X * W_K).T / sp.sqrt(2)  # (3, 3)
    W = sp.Matrix(3, 3, lambda i, j: sp.exp(S[i, j]) / sum(sp.exp(S[i, l]) for l in range(3)))  # (3, 3)
    single = W * (X * W_V)  # (3, 2)
    (Y_1,) = exact_heads(X, X, W_Q, W_K, W_V, 1)
    yield sp.Eq(Y_1 * sp.eye(2), single)
    # The package: one head with W_O = I is the earlier chapters' attention, to the last bit.
    rng = np.random.default_rng(16)
    Xn, A, B, C = rng.standard_normal((5, 4)), *rng.standard_normal((3, 4, 4))  # (5, 4), 3 × (4, 4)
    Y, W = multi_head_attention(Xn, Xn, A, B, C, np.eye(4), 1)
    Y_ref, W_ref = attention(Xn @ A, Xn @ B, Xn @ C)
    yield bool(np.array_equal(Y, Y_ref) and np.array_equal(W[0], W_ref))


@derivation("eq-bipartite", display=_display_bipartite, strength="proved",
            scope=("for W of any shape n_q × n_k (the displayed blocks); exactly for a symbolic 2 × 3 W "
                   "and on the package"))
def _check_bipartite():
    # The displayed A_cross, squared block by block, for a matrix symbol W of symbolic shape: every block
    # of A_cross² = Σ_k A_rk A_kc is a sum of products with a zero factor, so A_cross² = 0 at every size.
    blocks = _display_bipartite().rhs.blocks  # 2 × 2 blocks: [[0, W], [0, 0]]
    for r, c in itertools.product(range(2), repeat=2):
        square = sp.MatAdd(*[sp.MatMul(blocks[r, k], blocks[k, c], evaluate=False) for k in range(2)],
                           evaluate=False)
        yield sp.Eq(square, sp.ZeroMatrix(*blocks[r, c].shape), evaluate=False)
    # For symbolic W (2 × 3): A_cross² = 0, so no message crosses two edges in one layer; the query rows
    # of A_cross sum to 1 when W's rows do, and the key rows are empty.
    W = symbol_matrix("w", 2, 3)
    A_cross = sp.Matrix(sp.BlockMatrix([[sp.zeros(2, 2), W], [sp.zeros(3, 2), sp.zeros(3, 3)]]))
    yield sp.Eq(A_cross * A_cross, sp.zeros(5, 5))
    yield sp.Eq(A_cross[2:, :], sp.zeros(3, 5))
    got = bipartite_adjacency(np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]]))
    exact = sp.Matrix(5, 5, lambda a, b: 0)
    exact[:2, 2:] = sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)], [0, 1, 0]])
    yield close_to_exact(exact, got)
