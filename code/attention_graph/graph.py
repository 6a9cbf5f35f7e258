"""The attention graph: the one representation of "attention is a graph" in the package.

Every figure and every graph tool consumes an :class:`AttentionGraph`. Its adjacency matrix is the
weight matrix W, with the book's orientation: ``W[i, j]`` is the weight that node i (a query) gives
node j (a key), drawn as the directed edge i → j. Rows sum to 1 for an attention layer; a fixed graph
(a path, a GCN propagation matrix) is an AttentionGraph too, with whatever rows it has.

The chapter ``book/graph.md`` proves that an attention layer is message passing on the complete
graph with W as adjacency, and runs GCN, mean aggregation, GAT, attention and masked attention (a
Graph Transformer layer) side by side: every layer here returns ``(Y, AttentionGraph)``. The SymPy
checks behind the chapter's equations and theorems are registered at the end of this module.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .attention import AttentionGraph, attention
from .registry import close_to_exact, derivation
from .scores import scaled_scores
from .softmax import softmax
from .validation import as_int, as_matrix, as_rng, as_square, check_same
from .worked_example import PEOPLE, embeddings, path_adjacency

__all__ = ["additive_mask_softmax", "causal_mask", "complete_attention",
           "five_models", "GAT_NEGATIVE_SLOPE", "gat", "gat_parameters", "gat_scores", "gcn", "gcn_propagation",
           "graph_mask", "leaky_relu", "masked_attention", "mean_aggregation", "mean_propagation",
           "MODEL_NAMES", "message_passing", "permutation_matrix", "product_mask_softmax",
           "relabel"]


# --------------------------------------------------------------------------------------------------
# Message passing, and five layers that are message passing on a graph.
#
# Every layer below returns (Y, graph), like `attention` returns (Y, W): Y the new representations,
# one row per node, and the AttentionGraph whose adjacency W[i, j] is the weight node i gives the
# message of node j. A is the fixed graph: A[i, j] > 0 when node i aggregates from node j.
# --------------------------------------------------------------------------------------------------


def _labels(labels, n: int) -> tuple[str, ...]:
    """The node names: ``labels`` if given, else "0", "1", ..."""
    if labels is None:
        return tuple(str(i) for i in range(n))
    labels = tuple(str(x) for x in labels)
    if len(labels) != n:
        raise ValueError(f"labels must name the {n} nodes; got {len(labels)} labels")
    return labels


def _adjacency(A, name: str = "A") -> np.ndarray:
    """A as a square, non-negative float matrix, or a clear error naming ``name``."""
    A = as_square(A, name)  # (n, n)
    if (A < 0).any():
        where = tuple(int(i) for i in np.argwhere(A < 0)[0])
        raise ValueError(f"{name} must be non-negative (edge weights); found {A[where]} at {where}")
    return A


def _refuse_empty_rows(M: np.ndarray, what: str, labels) -> None:
    """Raise when some node i has no edge at all in row i of ``M``: it has nothing to aggregate."""
    empty = np.flatnonzero(~(M > 0).any(axis=1))  # (n_empty,)
    if empty.size:
        names = [_labels(labels, M.shape[0])[i] for i in empty[:10]]
        raise ValueError(
            f"{what}: node(s) {names} (row(s) {empty[:10].tolist()}) have no neighbour to aggregate "
            "from (an empty row has no softmax and no average); add an edge, or self-loops with "
            "self_loops=True"
        )


def graph_mask(A, *, self_loops: bool = True) -> np.ndarray:
    """M_ij = (A + I)_ij > 0 (or A_ij > 0 without self-loops): who node i may attend to. (n, n) bool.

    ``A`` is a non-negative (n, n) adjacency (0/1, weighted or boolean; directed allowed): row i
    lists the nodes i aggregates from.

    >>> graph_mask([[0, 1], [1, 0]])
    array([[ True,  True],
           [ True,  True]])
    >>> graph_mask([[0, 1], [1, 0]], self_loops=False)
    array([[False,  True],
           [ True, False]])
    """
    A = _adjacency(A)  # (n, n)
    M = A > 0  # (n, n)
    return M | np.eye(A.shape[0], dtype=bool) if self_loops else M  # (n, n)


def causal_mask(n: int) -> np.ndarray:
    """M_ij = (j ≤ i): token i attends to itself and every earlier token. Lower-triangular (n, n) bool.

    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    n = as_int(n, "n", what="a positive integer number of tokens")
    i = np.arange(n)  # (n,)
    return i[None, :] <= i[:, None]  # (n, n)


def message_passing(graph: AttentionGraph, V) -> np.ndarray:
    """y_i = Σ_{j : i → j} W_ij v_j, summed edge by edge over the graph  (eq-message-passing).

    ``V`` is (n, d_v), one message per node. The sum runs over the edge list of ``graph``, not over
    a matrix product: this is the graph-neural-network view of a layer. Shape (n, d_v).

    >>> g = AttentionGraph([[0.0, 1.0], [0.5, 0.5]], ["a", "b"])
    >>> message_passing(g, [[2.0], [4.0]])
    array([[4.],
           [3.]])
    """
    if not isinstance(graph, AttentionGraph):
        raise TypeError(f"graph must be an AttentionGraph; got {type(graph).__name__}")
    V = as_matrix(V, "V", shape_doc="(n, d_v)")  # (n, d_v)
    if V.shape[0] != graph.n:
        raise ValueError(f"V must have one row per node: {V.shape[0]} != {graph.n}")
    Y = np.zeros((graph.n, V.shape[1]), dtype=np.result_type(V, graph.W))  # (n, d_v)
    for i, j, w in graph.edges():
        Y[i] += w * V[j]  # (d_v,)
    return Y


def gcn_propagation(A) -> np.ndarray:
    """Â = D̃^{-1/2} (A + I) D̃^{-1/2}, D̃_ii = Σ_j (A + I)_ij  (eq-gcn-propagation).

    ``A`` is a symmetric, non-negative (n, n) adjacency without self-loops (Kipf & Welling's
    renormalisation adds them). Â is symmetric; its rows do not sum to 1 in general. Shape (n, n).

    >>> gcn_propagation([[0, 1], [1, 0]])
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    A = _adjacency(A)  # (n, n)
    if not np.allclose(A, A.T, rtol=0, atol=1e-12):
        raise ValueError("A must be symmetric: GCN propagates on an undirected graph")
    A_tilde = A + np.eye(A.shape[0])  # (n, n)
    inv_sqrt = 1.0 / np.sqrt(A_tilde.sum(axis=1))  # (n,), degrees >= 1
    return inv_sqrt[:, None] * A_tilde * inv_sqrt[None, :]  # (n, n)


def mean_propagation(A, *, self_loops: bool = True) -> np.ndarray:
    """M = D̃^{-1} (A + I), or D^{-1} A without self-loops  (eq-mean-aggregation).

    Row i averages node i's neighbours (and itself): every row sums to 1. A node with no neighbour
    and no self-loop has no average and is refused with a ``ValueError``. Shape (n, n).

    >>> mean_propagation([[0, 1, 1], [1, 0, 0], [1, 0, 0]]).round(3)
    array([[0.333, 0.333, 0.333],
           [0.5  , 0.5  , 0.   ],
           [0.5  , 0.   , 0.5  ]])
    """
    A = _adjacency(A)  # (n, n)
    A_tilde = A + np.eye(A.shape[0]) if self_loops else A  # (n, n)
    _refuse_empty_rows(A_tilde, "mean aggregation D⁻¹A", None)
    return A_tilde / A_tilde.sum(axis=1, keepdims=True)  # (n, n)


def gcn(A, X, labels=None) -> tuple[np.ndarray, AttentionGraph]:
    """Y = Â X with Â = D̃^{-1/2} (A + I) D̃^{-1/2}, returned as (Y, graph of Â)  (eq-gcn-propagation).

    The propagation of one GCN layer (Kipf & Welling 2017) with identity weights and no
    nonlinearity, as the worked example uses identity projections. ``X`` is (n, d); Y is (n, d).
    """
    A_hat = gcn_propagation(A)  # (n, n)
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    graph = AttentionGraph(A_hat, _labels(labels, A_hat.shape[0]))
    return message_passing(graph, X), graph


def mean_aggregation(A, X, labels=None, *, self_loops: bool = True) -> tuple[np.ndarray, AttentionGraph]:
    """Y = D̃^{-1} (A + I) X: each node the average of itself and its neighbours  (eq-mean-aggregation).

    Returns (Y, graph of D̃^{-1}(A + I)). With ``self_loops=False`` the average is over the
    neighbours only, and a node without neighbours is refused.
    """
    _refuse_empty_rows(graph_mask(A, self_loops=self_loops), "mean aggregation", labels)
    M = mean_propagation(A, self_loops=self_loops)  # (n, n)
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    graph = AttentionGraph(M, _labels(labels, M.shape[0]))
    return message_passing(graph, X), graph


GAT_NEGATIVE_SLOPE = 0.2  # the LeakyReLU slope of Veličković et al. (2018)


def leaky_relu(x, negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """LeakyReLU(x) = x for x ≥ 0, negative_slope · x below 0 (elementwise)."""
    x = np.asarray(x, dtype=float)  # same shape as x
    if not 0.0 <= negative_slope < 1.0:
        raise ValueError(f"negative_slope must be in [0, 1); got {negative_slope}")
    return np.where(x >= 0, x, negative_slope * x)  # same shape as x


def gat_parameters(d_in: int, d_out: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Θ (d_in, d_out) and a (2 d_out,), drawn once from ``rng`` (Glorot-scaled normals).

    They stand for trained parameters: fixed by the seed, so every build shows the same GAT.
    """
    as_rng(rng)
    d_in, d_out = as_int(d_in, "d_in"), as_int(d_out, "d_out")
    Theta = rng.normal(0.0, np.sqrt(2.0 / (d_in + d_out)), size=(d_in, d_out))  # (d_in, d_out)
    a = rng.normal(0.0, np.sqrt(2.0 / (2 * d_out + 1)), size=2 * d_out)  # (2 d_out,)
    return Theta, a


def gat_scores(X, Theta, a, negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """e_ij = LeakyReLU(aᵀ [Θᵀx_i ‖ Θᵀx_j]) = LeakyReLU(a₁·h_i + a₂·h_j), h = XΘ  (eq-gat-scores).

    ``X`` is (n, d_in), ``Theta`` (d_in, d_out), ``a`` (2 d_out,). Scores for every pair, shape (n, n).
    """
    X = as_matrix(X, "X", shape_doc="(n, d_in)")  # (n, d_in)
    Theta = as_matrix(Theta, "Theta", shape_doc="(d_in, d_out)")  # (d_in, d_out)
    a = as_matrix(np.reshape(a, (1, -1)), "a", shape_doc="(2 d_out,)")[0]  # (2 d_out,)
    check_same(X.shape[1], Theta.shape[0],
               "X and Theta must share d_in (columns of X, rows of Theta)")
    check_same(a.shape[0], 2 * Theta.shape[1], "a must have 2 d_out entries")
    H = X @ Theta  # (n, d_out)
    d_out = Theta.shape[1]
    src, dst = H @ a[:d_out], H @ a[d_out:]  # (n,), (n,)
    return leaky_relu(src[:, None] + dst[None, :], negative_slope)  # (n, n)


def gat(A, X, Theta, a, labels=None, *,
        negative_slope: float = GAT_NEGATIVE_SLOPE) -> tuple[np.ndarray, AttentionGraph]:
    """y_i = Σ_{j ∈ N(i) ∪ {i}} α_ij Θᵀx_j, α = softmax of e over the neighbours and self  (eq-gat-scores).

    One attention head of a GAT layer (Veličković et al. 2018), without the output nonlinearity.
    Returns (Y, graph of α); Y is (n, d_out), in the space of h = XΘ.
    """
    e = gat_scores(X, Theta, a, negative_slope)  # (n, n)
    alpha = softmax(e, graph_mask(A, self_loops=True))  # (n, n)
    H = as_matrix(X, "X") @ as_matrix(Theta, "Theta")  # (n, d_out)
    graph = AttentionGraph(alpha, _labels(labels, alpha.shape[0]))
    return message_passing(graph, H), graph


def complete_attention(Q, K, V, labels=None) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(Q Kᵀ/√d) V on the complete graph, returned as (Y, graph of W)  (eq-message-passing)."""
    Y, W = attention(Q, K, V)  # (n, d_v), (n, n)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"a graph needs one query per key (self-attention); got W of shape {W.shape}")
    return Y, AttentionGraph(W, _labels(labels, W.shape[0]))


def masked_attention(Q, K, V, A, labels=None, *,
                     self_loops: bool = True) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(Q Kᵀ/√d, mask = A (+ I)) V: attention restricted to the graph  (eq-neighbour-softmax).

    The attention of a Graph Transformer layer (Dwivedi & Bresson 2020): node i attends only to its
    neighbours in ``A`` (and to itself unless ``self_loops=False``). A node with nothing to attend to
    is refused with a ``ValueError``. Returns (Y, graph of W).
    """
    mask = graph_mask(A, self_loops=self_loops)  # (n, n)
    _refuse_empty_rows(mask, "masked attention", labels)
    Y, W = attention(Q, K, V, mask)  # (n, d_v), (n, n)
    return Y, AttentionGraph(W, _labels(labels, W.shape[0]))


def additive_mask_softmax(S, mask, fill: float = -1e9) -> np.ndarray:
    """softmax(S + F), F_ij = 0 where allowed and ``fill`` elsewhere: masking by a finite constant.

    A common implementation of masking, shown here to be measured against the exact mask: with a
    finite ``fill`` a masked key keeps the weight exp(S_ij + fill − m_i) / Z_i, which is not 0 when
    the scores spread by as much as ``abs(fill)``, and a row with no allowed key silently becomes an
    average over forbidden keys. ``fill = -inf`` is the exact masked softmax (and refuses that row).
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    allowed = np.asarray(mask)
    if allowed.dtype != np.bool_ or allowed.shape != S.shape:
        raise TypeError(f"mask must be a boolean array of shape {S.shape}; "
                        f"got {allowed.dtype} {allowed.shape}")
    if fill == -np.inf:
        return softmax(S, allowed)  # (n_q, n_k)
    if not np.isfinite(fill) or fill >= 0:
        raise ValueError(f"fill must be a negative number or -inf; got {fill}")
    return softmax(S + np.where(allowed, 0.0, fill))  # (n_q, n_k)


def product_mask_softmax(S, mask) -> np.ndarray:
    """softmax(S ∘ M): masking by multiplying the scores by 0/1, the wrong way.

    A forbidden entry gets the score 0 instead of being removed, so it keeps a positive weight
    exp(0 − m_i) / Z_i: zero is a score, not an absent edge. Shown to be measured, not used.
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    allowed = np.asarray(mask)
    if allowed.dtype != np.bool_ or allowed.shape != S.shape:
        raise TypeError(f"mask must be a boolean array of shape {S.shape}; "
                        f"got {allowed.dtype} {allowed.shape}")
    return softmax(S * allowed)  # (n_q, n_k)


def permutation_matrix(order) -> np.ndarray:
    """P with P[r, order[r]] = 1: (P X) lists the rows of X in ``order``. Shape (n, n).

    >>> permutation_matrix([2, 0, 1]) @ np.array([[10.0], [11.0], [12.0]])
    array([[12.],
           [10.],
           [11.]])
    """
    order = np.asarray(order)
    n = order.shape[0] if order.ndim == 1 else -1
    if order.dtype.kind not in "iu" or sorted(order.tolist()) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..n-1; got {order.tolist()}")
    P = np.zeros((n, n))  # (n, n)
    P[np.arange(n), order] = 1.0
    return P


def relabel(graph: AttentionGraph, order) -> AttentionGraph:
    """The same graph with its nodes listed in ``order``: adjacency P W Pᵀ, labels permuted."""
    P = permutation_matrix(order)  # (n, n)
    if P.shape[0] != graph.n:
        raise ValueError(f"order must permute the {graph.n} nodes; got {P.shape[0]}")
    return AttentionGraph(P @ graph.W @ P.T, tuple(graph.labels[k] for k in order))


# --------------------------------------------------------------------------------------------------
# Five models side by side.
# --------------------------------------------------------------------------------------------------

MODEL_NAMES: tuple[str, ...] = ("GCN", "mean", "GAT", "attention", "masked attention")


def five_models(X, A, rng: np.random.Generator, labels=None) -> dict[str, tuple[np.ndarray, AttentionGraph]]:
    """The same nodes X through five layers, each as (Y, graph), keyed by ``MODEL_NAMES``.

    GCN, mean aggregation and GAT run on the fixed graph ``A`` (self-loops added); attention runs on
    the complete graph with Q = K = V = X (identity projections, as in the worked example); masked
    attention is the same attention restricted to ``A`` plus self-loops. The GAT parameters are
    drawn from ``rng`` with d_out = d, so its outputs live in a space of the same dimension.
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    Theta, a = gat_parameters(X.shape[1], X.shape[1], rng)  # (d, d), (2 d,)
    return {
        "GCN": gcn(A, X, labels),
        "mean": mean_aggregation(A, X, labels),
        "GAT": gat(A, X, Theta, a, labels),
        "attention": complete_attention(X, X, X, labels),
        "masked attention": masked_attention(X, X, X, A, labels),
    }


# --------------------------------------------------------------------------------------------------
# Exercises: GATv2, whose ranking of the keys depends on the query.
# --------------------------------------------------------------------------------------------------

def gatv2_scores(X, Theta, a, negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """e_ij = aᵀ LeakyReLU([x_i ‖ x_j] Θ), GATv2 (Brody et al. 2022); shape (n, n).

    ``X`` is (n, d_in), ``Theta`` (2 d_in, d_out), ``a`` (d_out,): the nonlinearity comes before a.
    """
    X = as_matrix(X, "X", shape_doc="(n, d_in)")  # (n, d_in)
    Theta = as_matrix(Theta, "Theta", shape_doc="(2 d_in, d_out)")  # (2 d_in, d_out)
    a = as_matrix(np.reshape(a, (1, -1)), "a", shape_doc="(d_out,)")[0]  # (d_out,)
    check_same(Theta.shape[0], 2 * X.shape[1], "Theta must have 2 d_in rows")
    check_same(a.shape[0], Theta.shape[1], "a must have d_out entries")
    d_in = X.shape[1]
    src, dst = X @ Theta[:d_in], X @ Theta[d_in:]  # (n, d_out), (n, d_out)
    H = leaky_relu(src[:, None, :] + dst[None, :, :], negative_slope)  # (n, n, d_out)
    return H @ a  # (n, n)


def key_rankings(e) -> int:
    """How many different orders of the keys the rows of the scores ``e`` give (1: static).

    >>> key_rankings([[3.0, 1.0], [2.0, 0.0]])
    1
    """
    e = as_matrix(e, "e", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    order = np.argsort(-e, axis=1, kind="stable")  # (n_q, n_k), best key first
    return len({tuple(row) for row in order})


# --------------------------------------------------------------------------------------------------
# The chapter's equations and theorems, checked in SymPy. Each check also compares the package's
# floats with exact values, so a wrong implementation fails the check, not only a wrong formula.
# --------------------------------------------------------------------------------------------------


def _sym_softmax(S: sp.Matrix, allowed=None) -> sp.Matrix:
    """Exact neighbour softmax: exp(S_ij) / Σ_{l allowed} exp(S_il) where allowed, exactly 0 elsewhere."""

    def ok(i, j):
        return True if allowed is None else bool(allowed[i][j])

    rows = []
    for i in range(S.rows):
        Z = sum(sp.exp(S[i, m]) for m in range(S.cols) if ok(i, m))
        rows.append([sp.exp(S[i, j]) / Z if ok(i, j) else sp.Integer(0) for j in range(S.cols)])
    return sp.Matrix(rows)


def _sym_scores(Q: sp.Matrix, K: sp.Matrix) -> sp.Matrix:
    return Q * K.T / sp.sqrt(Q.cols)


def _real(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))



def _example():
    return embeddings(), path_adjacency(), PEOPLE


def _raises(fn, *args, **kwargs) -> bool:
    try:
        fn(*args, **kwargs)
    except ValueError:
        return True
    return False


@derivation("eq-message-passing")
def _check_message_passing():
    # Summing the messages A_ij v_j edge by edge over a sparse directed graph is the product A V.
    w = sp.symbols("w_0:4", positive=True)
    A = sp.Matrix([[w[0], w[1], 0], [0, 0, w[2]], [w[3], 0, 0]])
    V = _real("v", 3, 2)
    Y = sp.zeros(3, 2)
    for i, j in [(i, j) for i in range(3) for j in range(3) if A[i, j] != 0]:
        Y[i, :] += A[i, j] * V[j, :]
    yield sp.Eq(Y, A * V, evaluate=False)
    # The package's edge-by-edge sum equals the exact product on an integer example.
    Ai, Vi = [[0, 2, 0], [1, 0, 3], [0, 0, 1]], [[1, -1], [2, 0], [0, 3]]
    yield close_to_exact(sp.Matrix(Ai) * sp.Matrix(Vi), message_passing(AttentionGraph(Ai, "abc"), Vi), atol=0)


@derivation("thm-attention-is-message-passing")
def _check_attention_is_message_passing():
    # General Q, K (n = 3, d = 2) and V (d_v = 1), real symbols.
    Q, K, V = _real("q", 3, 2), _real("k", 3, 2), _real("v", 3, 1)
    W = _sym_softmax(_sym_scores(Q, K))
    # Every weight is positive for every input: the graph of W is complete, self-loops included.
    for i in range(3):
        for j in range(3):
            yield W[i, j] > 0
    # Weighted: each node's out-weights sum to 1.
    for i in range(3):
        yield sp.Eq(sum(W.row(i)), 1)
    # Message passing on that graph, Σ over the edges i → j of W_ij v_j, is the attention output W V.
    Y = sp.zeros(3, 1)
    for i in range(3):
        for j in range(3):
            Y[i, :] += W[i, j] * V[j, :]
    yield sp.Eq(Y, W * V, evaluate=False)
    # Directed and input-dependent, on the worked example (exact): Ana → Carla ≠ Carla → Ana, and
    # doubling the inputs changes the weights.
    X, _, names = _example()
    Xs = sp.Matrix(X.astype(int))
    We = _sym_softmax(_sym_scores(Xs, Xs))
    yield bool(sp.simplify(We[1, 0] - We[0, 1]) != 0)
    yield bool(sp.simplify(_sym_softmax(_sym_scores(2 * Xs, 2 * Xs))[1, 0] - We[1, 0]) != 0)
    # The package: the layer's output is message passing on its graph, whose W is the exact one.
    Y_pkg, graph = complete_attention(X, X, X, names)
    yield len(graph.edges()) == len(names) ** 2
    yield close_to_exact(We, graph.W, atol=1e-13)
    yield close_to_exact(We * Xs, message_passing(graph, X), atol=1e-13)
    yield close_to_exact(We * Xs, Y_pkg, atol=1e-13)


@derivation("eq-gcn-propagation")
def _check_gcn_propagation():
    # General symmetric weights on three nodes: Â = D̃^{-1/2}(A + I)D̃^{-1/2} has eigenvalue 1 with
    # eigenvector D̃^{1/2} 1 (so propagating does not blow up), and it is symmetric.
    a, b, c = sp.symbols("a b c", positive=True)
    At = sp.Matrix([[0, a, b], [a, 0, c], [b, c, 0]]) + sp.eye(3)
    deg = [sum(At.row(i)) for i in range(3)]
    A_hat = sp.diag(*[1 / sp.sqrt(x) for x in deg]) * At * sp.diag(*[1 / sp.sqrt(x) for x in deg])
    u = sp.Matrix([sp.sqrt(x) for x in deg])
    yield sp.Eq(A_hat * u, u, evaluate=False)
    yield sp.Eq(A_hat, A_hat.T, evaluate=False)
    # The worked example's path: the matrix power D̃^{-1/2} is the entrywise 1/√(d_i d_j) and the
    # package computes it.
    _, A, _ = _example()
    At = sp.Matrix(A.astype(int)) + sp.eye(4)
    D = sp.diag(*[sum(At.row(i)) for i in range(4)])
    A_hat = D ** sp.Rational(-1, 2) * At * D ** sp.Rational(-1, 2)
    yield sp.Eq(A_hat, sp.Matrix(4, 4, lambda i, j: At[i, j] / sp.sqrt(D[i, i] * D[j, j])),
                evaluate=False)
    yield close_to_exact(A_hat, gcn_propagation(A), atol=1e-13)


@derivation("eq-mean-aggregation")
def _check_mean_aggregation():
    # Weighted rows, general: D̃^{-1}(A + I) has rows summing to 1.
    w = sp.symbols("w_0:3", positive=True)
    At = sp.Matrix([[0, w[0], w[1]], [w[0], 0, 0], [w[1], 0, w[2]]]) + sp.eye(3)
    M = sp.diag(*[1 / sum(At.row(i)) for i in range(3)]) * At
    for i in range(3):
        yield sp.Eq(sum(M.row(i)), 1)
    # The path, with and without self-loops, exactly; an isolated node is refused without them.
    _, A, _ = _example()
    for At in (sp.Matrix(A.astype(int)) + sp.eye(4), sp.Matrix(A.astype(int))):
        M = sp.diag(*[sp.Rational(1, sum(At.row(i))) for i in range(4)]) * At
        yield close_to_exact(M, mean_propagation(A, self_loops=At[0, 0] == 1), atol=1e-15)
    yield _raises(mean_propagation, np.zeros((2, 2)), self_loops=False)


@derivation("eq-gat-scores")
def _check_gat_scores():
    # aᵀ[u ‖ v] = a₁·u + a₂·v: the concatenation splits into a query part and a key part.
    a_, u, v = _real("a", 4, 1), _real("u", 2, 1), _real("v", 2, 1)
    yield sp.Eq((a_.T * u.col_join(v))[0], (a_[:2, :].T * u)[0] + (a_[2:, :].T * v)[0])
    # Exact GAT on the worked example's path with rational parameters, by the paper's formula:
    # α_ij = exp(e_ij) / Σ_{k ∈ N(i) ∪ {i}} exp(e_ik), e = LeakyReLU(...) = max(x, x/5).
    X, A, names = _example()
    Theta = sp.Matrix([[1, sp.Rational(-1, 2)], [sp.Rational(1, 3), 2]])
    a = sp.Matrix([sp.Rational(1, 2), -1, sp.Rational(3, 4), sp.Rational(1, 5)])
    H = sp.Matrix(X.astype(int)) * Theta
    src, dst = H * a[:2, :], H * a[2:, :]  # a₁·h_i and a₂·h_j
    e = sp.Matrix(4, 4, lambda i, j: sp.Max(src[i] + dst[j], (src[i] + dst[j]) / 5))
    near = [[j for j in range(4) if A[i, j] > 0 or i == j] for i in range(4)]
    alpha = sp.Matrix(4, 4, lambda i, j: sp.exp(e[i, j]) / sum(sp.exp(e[i, k]) for k in near[i])
                      if j in near[i] else 0)
    Th, av = np.array(Theta, dtype=float), np.array(a, dtype=float).ravel()
    yield sp.nsimplify(GAT_NEGATIVE_SLOPE) == sp.Rational(1, 5)
    yield close_to_exact(e, gat_scores(X, Th, av, GAT_NEGATIVE_SLOPE), atol=1e-13)
    Y_pkg, graph = gat(A, X, Th, av, names)
    yield close_to_exact(alpha, graph.W, atol=1e-13)
    yield close_to_exact(alpha * H, Y_pkg, atol=1e-13)


@derivation("eq-neighbour-softmax")
def _check_neighbour_softmax():
    # On the worked example masked to the path (self-loops included), the package's weights are the
    # exact neighbour softmax; each row sums to 1 over the neighbours.
    X, A, names = _example()
    allowed = graph_mask(A)
    Xs = sp.Matrix(X.astype(int))
    W = _sym_softmax(_sym_scores(Xs, Xs), allowed.tolist())
    for i in range(4):
        yield sp.Eq(sum(W[i, j] for j in range(4) if allowed[i, j]), 1)
    _, graph = masked_attention(X, X, X, A, names)
    yield close_to_exact(W, graph.W, atol=1e-13)
    yield bool((graph.W[~allowed] == 0.0).all())


@derivation("thm-constant-scores-mean-aggregation")
def _check_constant_scores():
    # One row with k allowed keys, all scored c: each gets 1/k whatever c is.
    c = sp.Symbol("c", real=True)
    k = sp.Symbol("k", integer=True, positive=True)
    yield sp.Eq(sp.exp(c) / (k * sp.exp(c)), 1 / k)
    # Whole matrices: a different constant per row, on three masks (path with and without
    # self-loops, causal). The forbidden entries hold other values: they must not matter.
    _, A, _ = _example()
    cs = sp.symbols("c_0:4", real=True)
    junk = sp.symbols("z_0:4", real=True)
    for allowed in (graph_mask(A), graph_mask(A, self_loops=False), causal_mask(4)):
        deg = allowed.sum(axis=1)
        S = sp.Matrix(4, 4, lambda i, j, allowed=allowed: cs[i] if allowed[i, j] else junk[j])
        mean = sp.Matrix(4, 4, lambda i, j, allowed=allowed, deg=deg: sp.Rational(int(allowed[i, j]), int(deg[i])))
        yield sp.Eq(_sym_softmax(S, allowed.tolist()), mean, evaluate=False)
    # The package: constant scores through its softmax give its mean aggregation, and masked
    # attention with Q = 0 is mean aggregation of the values.
    for const in (0.0, -3.5, 1e6):
        yield bool(np.allclose(softmax(np.full((4, 4), const), graph_mask(A)), mean_propagation(A),
                               rtol=0, atol=1e-15))
    X = _example()[0]
    Y_zero_q, _ = masked_attention(np.zeros_like(X), X, X, A)
    yield bool(np.allclose(Y_zero_q, mean_aggregation(A, X)[0], rtol=0, atol=1e-15))


@derivation("thm-masked-softmax-neighbours")
def _check_masked_softmax():
    s = sp.symbols("s_0:3", real=True)
    t = sp.Symbol("t", positive=True)
    allowed = [[True, True, False]]
    exact = _sym_softmax(sp.Matrix([s]), allowed)
    # Adding -t to the forbidden score and letting t → ∞ gives the neighbour softmax: -∞ is the mask.
    finite = _sym_softmax(sp.Matrix([[s[0], s[1], s[2] - t]]))
    for j in range(3):
        yield sp.Eq(sp.limit(finite[0, j], t, sp.oo), exact[0, j])
    # The neighbours' weights do not depend on the forbidden score at all.
    for j in range(3):
        yield sp.Eq(sp.diff(exact[0, j], s[2]), 0)
    # Equivalently: the complete-graph weights renormalised over the neighbours.
    full = _sym_softmax(sp.Matrix([s]))
    for j in range(2):
        yield sp.Eq(exact[0, j], full[0, j] / (full[0, 0] + full[0, 1]))
    # softmax(S ∘ A) is another thing: the forbidden entry has score 0, so a positive weight.
    hadamard = _sym_softmax(sp.Matrix([[s[0], s[1], 0]]))
    yield hadamard[0, 2] > 0
    # On the worked example (path with self-loops), exactly: Diego gives Carla, not his neighbour,
    # the same weight as Bruno, who is; and the package computes that weight.
    X, A, _ = _example()
    allowed = graph_mask(A)
    Xs = sp.Matrix(X.astype(int))
    S = _sym_scores(Xs, Xs)
    Wh = _sym_softmax(S.multiply_elementwise(sp.Matrix(allowed.astype(int))))
    yield sp.Eq(Wh[3, 0], Wh[3, 2])
    yield Wh[3, 0] > 0
    yield close_to_exact(Wh, product_mask_softmax(scaled_scores(X, X), allowed), atol=1e-13)


@derivation("thm-gat-is-masked-attention")
def _check_gat_is_masked_attention():
    # Symbolic GAT with a general score matrix e on the path (n = 3): the paper's per-neighbourhood
    # normalisation equals the masked softmax of e with mask A + I, and the GAT output Σ α_ij h_j is
    # the masked attention layer with values H.
    e, H = _real("e", 3, 3), _real("h", 3, 2)
    A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    near = [[j for j in range(3) if A[i, j] or i == j] for i in range(3)]
    alpha = sp.Matrix(3, 3, lambda i, j: sp.exp(e[i, j]) / sum(sp.exp(e[i, k]) for k in near[i])
                      if j in near[i] else 0)
    W = _sym_softmax(e, graph_mask(A).tolist())
    yield sp.Eq(alpha, W, evaluate=False)
    Y = sp.Matrix(3, 2, lambda i, c: sum(alpha[i, j] * H[j, c] for j in near[i]))
    yield sp.Eq(Y, W * H, evaluate=False)
    # The package: gat equals masked softmax of its scores, times XΘ, on the worked example.
    X, Ap, names = _example()
    Theta, a = gat_parameters(2, 2, np.random.default_rng(0))
    Y_gat, graph = gat(Ap, X, Theta, a, names)
    W_pkg = softmax(gat_scores(X, Theta, a), graph_mask(Ap))
    yield bool(np.allclose(graph.W, W_pkg, rtol=0, atol=1e-15))
    yield bool(np.allclose(Y_gat, W_pkg @ (X @ Theta), rtol=0, atol=1e-14))


@derivation("thm-causal-mask-lower-triangular")
def _check_causal():
    n = 3
    M = causal_mask(n)
    W = _sym_softmax(_real("s", n, n), M.tolist())
    # Lower-triangular weights, rows summing to 1, the first token attending to itself only.
    for i in range(n):
        for j in range(i + 1, n):
            yield sp.Eq(W[i, j], 0)
        yield sp.Eq(sum(W.row(i)), 1)
    yield sp.Eq(W[0, 0], 1)
    # The package's mask is the lower triangle with the diagonal, for several n.
    for m in range(1, 7):
        yield bool(np.array_equal(causal_mask(m), np.tril(np.ones((m, m))) == 1))
    # Without the diagonal the first token has nothing to attend to, and the package refuses it.
    X = _example()[0]
    yield _raises(masked_attention, X, X, X, causal_mask(4) & ~np.eye(4, dtype=bool), self_loops=False)


@derivation("thm-permutation-equivariance")
def _check_permutation():
    X = _real("x", 3, 2)
    order = [2, 0, 1]
    P = sp.Matrix(permutation_matrix(order).astype(int))
    W = _sym_softmax(_sym_scores(X, X))
    W_perm = _sym_softmax(_sym_scores(P * X, P * X))
    yield sp.Eq(W_perm, P * W * P.T, evaluate=False)
    yield sp.Eq(W_perm * (P * X), P * (W * X), evaluate=False)
    # With a mask, the mask is relabelled too: P M Pᵀ.
    M = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    Mp = (np.array(P, dtype=int) @ M @ np.array(P, dtype=int).T).tolist()
    yield sp.Eq(_sym_softmax(_sym_scores(P * X, P * X), Mp), P * _sym_softmax(_sym_scores(X, X), M.tolist()) * P.T,
                evaluate=False)
    # The package on the worked example: relabelling the people relabels the graph.
    Xn, A, names = _example()
    order4 = [3, 1, 0, 2]
    Pn = permutation_matrix(order4)
    Y, graph = complete_attention(Xn, Xn, Xn, names)
    Y_p, graph_p = complete_attention(Pn @ Xn, Pn @ Xn, Pn @ Xn, [names[k] for k in order4])
    yield bool(np.allclose(graph_p.W, relabel(graph, order4).W, rtol=0, atol=1e-15))
    yield bool(np.allclose(Y_p, Pn @ Y, rtol=0, atol=1e-15))
